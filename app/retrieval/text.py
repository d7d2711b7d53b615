"""Text helpers for retrieval: tokens for lexical search, sentences, question n-grams."""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each either few for from further had has have having he
her here hers herself him himself his how i if in into is it its itself just me more most my myself neither no
nor not now of off on once only or other our ours ourselves out over own same she should so some such than
that the their theirs them themselves then there these they this those through to too under until up very was
we were what when where which while who whom whose why will with would you your yours yourself yourselves
""".split()
)

# Words that usually point back at an earlier turn ("what about its author?").
REFERRING = frozenset(
    "it its it's they them their theirs he him his she her hers this that these those there "
    "former latter same".split()
)

_TOKEN = re.compile(r"[0-9a-z]+")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


def fold(text: str) -> str:
    """NFKC + case-fold + strip accents (lexical matching only)."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def tokenize(text: str) -> list[str]:
    """Word tokens (folded, alphanumeric) for BM25 over chunk texts."""
    return _TOKEN.findall(fold(text))


def query_terms(question: str, limit: int = 24) -> list[str]:
    """Distinct content-word tokens of a question (no stopwords, length >= 2), in order."""
    seen: dict[str, None] = {}
    for tok in tokenize(question):
        if len(tok) >= 2 and tok not in STOPWORDS:
            seen.setdefault(tok, None)
    return list(seen)[:limit]


def sentences(text: str) -> list[str]:
    """Split text into sentences (simple punctuation rule)."""
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def ngrams(question: str, max_n: int = 4) -> list[str]:
    """Surface word n-grams (1..max_n) of a question, for entity linking."""
    words = re.findall(r"[\w'’.-]+", question, flags=re.UNICODE)
    words = [w.strip(".'’-") for w in words]
    words = [w for w in words if w]
    out: dict[str, None] = {}
    for n in range(max_n, 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if n == 1 and gram[0].casefold() in STOPWORDS:
                continue
            if gram[0].casefold() in STOPWORDS or gram[-1].casefold() in STOPWORDS:
                continue
            out.setdefault(" ".join(gram), None)
    return list(out)


def refers_back(question: str) -> bool:
    """Whether a question probably depends on earlier turns (pronouns, 'what about ...')."""
    words = set(re.findall(r"[\w']+", question.casefold()))
    return bool(words & REFERRING) or question.casefold().lstrip().startswith(
        ("what about", "and ", "how about")
    )
