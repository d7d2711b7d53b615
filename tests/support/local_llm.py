"""The `llm` tier's model: NeoRAG's own ``NEORAG_LLM_BASE_URL=local`` machinery, started once per session."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from app.core.config import Settings
from app.services.local_llm import LocalLLM, acquire, release
from app.store.embedded import ServerInfo

# What every llm-tier test uses (the shared server is keyed by model, context, slots and threads).
LLM_SETTINGS: dict[str, Any] = {"llm_base_url": "local", "llm_parallel": 2, "llm_local_ctx": 2048,
                                "llm_timeout_s": 120.0, "llm_max_retries": 0}


@dataclass
class LocalModel:
    """The session's model server and settings that reach it."""

    server: LocalLLM

    def settings(self, base: Settings, **extra: Any) -> Settings:
        """``base`` with ``NEORAG_LLM_BASE_URL=local`` (this server) and ``extra``."""
        return base.model_copy(update={**LLM_SETTINGS, **extra})

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Wait until the (possibly restarting) server answers again."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.server.alive() and self.server.healthy():
                return
            time.sleep(0.5)
        raise AssertionError("the local model server did not come back")


@pytest.fixture(scope="session")
def local_llm(falkor_server: ServerInfo) -> Iterator[LocalModel]:
    """The bundled SmolLM2-135M GGUF served by a supervised child process (acquired once, released last)."""
    settings = Settings(falkor_data_dir=falkor_server.data_dir, **LLM_SETTINGS)  # type: ignore[arg-type]
    server = acquire(settings)
    try:
        yield LocalModel(server)
    finally:
        release(server)
