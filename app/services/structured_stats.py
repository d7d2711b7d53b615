"""Counts of schema-bound replies per (mode, task), kept on each LLMClient (shown in /diagnostics)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass
class ReplyCounts:
    """Replies of one (mode, task): valid at once, valid after the retry, skipped after two failures."""

    first_try: int = 0
    after_retry: int = 0
    skipped: int = 0

    def as_dict(self) -> dict[str, Any]:
        total = self.first_try + self.after_retry + self.skipped
        return {"first_try": self.first_try, "after_retry": self.after_retry, "skipped": self.skipped,
                "valid_first_try_share": round(self.first_try / total, 4) if total else None}


@dataclass
class StructuredStats:
    """Counts per mode and task, kept on each LLMClient (shown in /diagnostics)."""

    counts: dict[tuple[str, str], ReplyCounts] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, mode: str, task: str, outcome: Literal["first_try", "after_retry", "skipped"]) -> None:
        with self._lock:
            c = self.counts.setdefault((mode, task), ReplyCounts())
            setattr(c, outcome, getattr(c, outcome) + 1)

    def get(self, mode: str, task: str) -> ReplyCounts:
        with self._lock:
            return self.counts.get((mode, task), ReplyCounts())

    def skipped(self) -> int:
        with self._lock:
            return sum(c.skipped for c in self.counts.values())

    def as_dict(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            out: dict[str, dict[str, Any]] = {}
            for (mode, task), c in sorted(self.counts.items()):
                out.setdefault(mode, {})[task] = c.as_dict()
            return out
