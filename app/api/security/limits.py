"""Request body checks done before any parser sees the body: size, UTF-8, JSON depth, lone surrogates.

``json.loads`` recurses once per nesting level (a 100k-deep array is a RecursionError) and accepts
``"\\ud800"``, a string no encoder can write back out; both are refused here, as JSON 413/422 answers,
before a route parses the body. Every scan is linear in the body and skips itself when a cheap count
shows it cannot fire (a KG-action batch of one pays a few microseconds).
"""

from __future__ import annotations

import re
from itertools import accumulate

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
# \uD800-\uDFFF escapes preceded by an even run of backslashes (so the backslash before `u` escapes it)
_SURROGATE = re.compile(rb'(?<!\\)(?:\\\\)*\\u([dD][0-9a-fA-F]{3})')


def json_depth_over(body: bytes, limit: int) -> bool:
    """Whether the JSON text nests arrays/objects deeper than ``limit`` (brackets in strings ignored)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    structure = _STRING.sub(b"", body).translate(None, _BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, structure)), default=0) > limit


def non_json_number(body: bytes) -> str | None:
    """``NaN`` / ``Infinity`` outside strings (Python's json accepts them; JSON and its encoders do not)."""
    if b"NaN" not in body and b"Infinity" not in body:
        return None
    bare = _STRING.sub(b"", body)
    for token in (b"NaN", b"Infinity"):
        if token in bare:
            return token.decode()
    return None


def lone_surrogate(body: bytes) -> str | None:
    """The first unpaired ``\\uD800``-``\\uDFFF`` escape in the JSON text, or None."""
    if b"\\u" not in body:
        return None
    pending_high: re.Match[bytes] | None = None
    for m in _SURROGATE.finditer(body):
        unit = int(m.group(1), 16)
        escape_start = m.end() - 6
        if pending_high is not None:
            if 0xDC00 <= unit <= 0xDFFF and escape_start == pending_high.end():
                pending_high = None
                continue
            return "\\u" + pending_high.group(1).decode()
        if 0xD800 <= unit <= 0xDBFF:
            pending_high = m
        elif 0xDC00 <= unit <= 0xDFFF:
            return "\\u" + m.group(1).decode()
    return None if pending_high is None else "\\u" + pending_high.group(1).decode()


def utf8_error(body: bytes) -> str | None:
    """Where the body stops being UTF-8 (``byte N``), or None when it is valid (or pure ASCII)."""
    if body.isascii():
        return None
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte {exc.start}"
    return None


def is_json_type(content_type: str | None) -> bool:
    """True for a missing Content-Type (parsed as JSON) and for ``application/json`` / ``*+json``."""
    if content_type is None:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
