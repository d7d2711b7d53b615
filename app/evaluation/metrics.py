"""Answer and retrieval metrics: Hits@1 and F1 (RoG-style string matching), recall (micro and per sample)."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    """Lower-case, underscores as spaces, punctuation and articles removed, whitespace collapsed."""
    text = text.lower().replace("_", " ")
    text = "".join(" " if ch in string.punctuation else ch for ch in text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def match(prediction: str, answer: str) -> bool:
    """True when the normalised gold ``answer`` occurs in the normalised ``prediction`` (as whole words)."""
    p, a = normalize(prediction), normalize(answer)
    return bool(a) and f" {a} " in f" {p} "


def split_answer(answer: str) -> list[str]:
    """A free-text answer as a list of predictions (split on newlines, ';', ',' and ' and ')."""
    parts = re.split(r"\n|;|,|\band\b", answer)
    return [p.strip() for p in parts if normalize(p)]


def hits_at_1(predictions: Sequence[str], gold: Sequence[str]) -> float:
    """1.0 when the first prediction matches any gold answer."""
    if not predictions or not gold:
        return 0.0
    return 1.0 if any(match(predictions[0], g) for g in gold) else 0.0


def f1(predictions: Sequence[str], gold: Sequence[str]) -> tuple[float, float, float]:
    """(precision, recall, F1): a prediction is right when it matches some gold answer; a gold answer is found
    when some prediction matches it."""
    if not predictions or not gold:
        return 0.0, 0.0, 0.0
    right = sum(1 for p in predictions if any(match(p, g) for g in gold))
    found = sum(1 for g in gold if any(match(p, g) for p in predictions))
    precision, recall = right / len(predictions), found / len(gold)
    if precision + recall == 0:
        return precision, recall, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)


def recall(found: int, total: int) -> float:
    """found / total (0.0 when there is nothing to find)."""
    return found / total if total else 0.0


def micro_recall(pairs: Sequence[tuple[int, int]]) -> float:
    """Micro recall over samples: sum(found) / sum(total) for (found, total) pairs."""
    return recall(sum(f for f, _ in pairs), sum(t for _, t in pairs))
