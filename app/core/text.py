"""Which characters request strings may hold (shared by validators and the OpenAPI patterns).

Identifiers (ids, dataset, sample, entity and relation names) hold no control characters at all; free
text (questions, context, history) may hold tab, line feed and carriage return but no other C0/C1
control character. FalkorDB cannot take a NUL inside a string parameter, and no client means one.
"""

from __future__ import annotations

import re

_IDENT_BAD = "\\x00-\\x1f\\x7f-\\x9f"
_TEXT_BAD = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f"
IDENTIFIER_PATTERN = f"^[^{_IDENT_BAD}]*$"
TEXT_PATTERN = f"^[^{_TEXT_BAD}]*$"
NONBLANK_TEXT_PATTERN = f"^[^{_TEXT_BAD}]*[^\\s{_IDENT_BAD}][^{_TEXT_BAD}]*$"
_IDENT_RE = re.compile(f"[{_IDENT_BAD}]")
_TEXT_RE = re.compile(f"[{_TEXT_BAD}]")


def identifier_problem(value: str) -> str | None:
    """Why ``value`` is not a valid identifier (a control character), or None."""
    bad = _IDENT_RE.search(value)
    return None if bad is None else f"contains the control character U+{ord(bad.group()):04X}"


def text_problem(value: str) -> str | None:
    """Why ``value`` is not valid free text (a control character other than tab/newline), or None."""
    bad = _TEXT_RE.search(value)
    return None if bad is None else f"contains the control character U+{ord(bad.group()):04X}"
NONBLANK_IDENTIFIER_PATTERN = f"^[^{_IDENT_BAD}]*[^\\s{_IDENT_BAD}][^{_IDENT_BAD}]*$"
PATTERN_MEANINGS = {
    IDENTIFIER_PATTERN: "must not contain control characters",
    NONBLANK_IDENTIFIER_PATTERN: "must not be blank or contain control characters",
    TEXT_PATTERN: "must not contain control characters other than tab, line feed and carriage return",
    NONBLANK_TEXT_PATTERN: "must not be blank or contain control characters other than tab, line feed and "
                           "carriage return",
}


def one_line(text: object, chars: int) -> str:
    """``text`` on one line (whitespace collapsed), cut to at most ``chars`` characters with an ellipsis."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= chars else flat[: chars - 1].rstrip() + "…"
