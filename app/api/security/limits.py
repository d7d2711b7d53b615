"""Request body checks done before any parser sees the body: size, UTF-8, raw control bytes (UTF-16 /
UTF-32 text), JSON depth, lone surrogates, numbers too long to convert.

``json.loads`` recurses once per nesting level (a 100k-deep array is a RecursionError) and accepts
``"\\ud800"``, a string no encoder can write back out; both are refused here, as JSON 413/422 answers,
before a route parses the body. Every scan is linear in the body and skips itself when a cheap count
shows it cannot fire (a KG-action batch of one pays a few microseconds).
"""

from __future__ import annotations

import re
import sys
from itertools import accumulate

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
# \uD800-\uDFFF escapes preceded by an even run of backslashes (so the backslash before `u` escapes it)
_SURROGATE = re.compile(rb'(?<!\\)(?:\\\\)*\\u([dD][0-9a-fA-F]{3})')


# bytes JSON never holds raw (RFC 8259: only tab, LF, CR outside strings, control characters escaped inside):
# a NUL is how UTF-16 and UTF-32 text looks to a UTF-8 check (every ASCII character is followed or preceded
# by zero bytes, all valid UTF-8), and Python's json.loads would detect and decode it.
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_UTF8_BOM = b"\xef\xbb\xbf"


def control_byte(body: bytes) -> str | None:
    """The first raw control byte of the body (a JSON text holds none but tab, LF, CR), described, or None.

    A NUL (UTF-16 / UTF-32 text) and a leading UTF-8 byte-order mark are named as such: JSON exchanged
    between systems must be UTF-8 without a BOM (RFC 8259 section 8.1)."""
    if body.startswith(_UTF8_BOM):
        return "starts with a byte-order mark (U+FEFF): JSON must be UTF-8 without one (RFC 8259 section 8.1)"
    found = _CONTROL.search(body)
    if found is None:
        return None
    byte = found.group()[0]
    if byte == 0:
        return (f"a NUL byte at byte {found.start()}: the text looks like UTF-16 or UTF-32; JSON must be "
                "UTF-8 (RFC 8259 section 8.1)")
    return f"a raw control character 0x{byte:02x} at byte {found.start()}: escape it (\\u{byte:04x})"


def max_digits() -> int:
    """Python's integer conversion limit (``sys.get_int_max_str_digits()``: 4,300 by default, 0 = none)."""
    return sys.get_int_max_str_digits()


def long_number(body: bytes, limit: int | None = None) -> int | None:
    """The digit count of the first digit run outside strings longer than ``limit`` digits (default
    :func:`max_digits`), or None: ``json.loads`` cannot convert such an integer (a ValueError)."""
    limit = max_digits() if limit is None else limit
    if limit <= 0 or len(body) <= limit:
        return None
    pattern = re.compile(rb"\d{%d,}" % (limit + 1))
    if pattern.search(body) is None:
        return None
    found = pattern.search(_STRING.sub(b"", body))
    return None if found is None else len(found.group())


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


def foreign_charset(content_type: str | None) -> str | None:
    """The ``charset`` a JSON Content-Type declares when it is not UTF-8 (e.g. ``utf-16``), else None."""
    if content_type is None or "charset" not in content_type.lower():
        return None
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
            return None if charset in ("utf-8", "utf8") else charset[:40]
    return None


def is_json_type(content_type: str | None) -> bool:
    """True for a missing Content-Type (parsed as JSON) and for ``application/json`` / ``*+json``."""
    if content_type is None:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
