"""Credentials in URLs (``http://user:pass@host/v1?api_key=...``) never leave the process: the user info and
every key-like query parameter are replaced by ``***`` wherever a URL is shown (diagnostics, warnings, 503
hints) and, once :func:`remember` has seen them, in every log record (the HTTP libraries print request
URLs, exception messages quote them)."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"
# query parameter names that carry a credential (api_key, key, token, access_token, sig, password, ...)
_KEYLIKE = re.compile(r"key|token|secret|pass|pwd|auth|sig|credential|session", re.I)
_MIN_SECRET = 3  # shorter values (e.g. a user "a") are masked in URLs but not hunted in free text
_LOCK = threading.Lock()
_KNOWN: set[str] = set()


def redact_url(url: str | None) -> str | None:
    """``url`` with its user info and key-like query values masked (None and plain URLs unchanged)."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if _KEYLIKE.search(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str | None) -> set[str]:
    """The credential strings in ``url``: user, password (raw and percent-decoded), key-like query values."""
    if not url:
        return set()
    try:
        parts = urlsplit(url)
    except ValueError:
        return {url}
    found: set[str] = set()
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        for piece in (userinfo, *userinfo.split(":", 1)):
            found |= {piece, unquote(piece)}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if _KEYLIKE.search(name):
            found.add(value)
    for raw in parts.query.split("&"):
        name, _, value = raw.partition("=")
        if _KEYLIKE.search(unquote(name)):
            found.add(value)
    return {s for s in found if len(s) >= _MIN_SECRET}


def scrub(text: str, url: str | None = None) -> str:
    """``text`` with ``url`` shown redacted and every credential of it (and of the URLs registered with
    :func:`remember`) masked: for exception messages that may quote a request URL."""
    if url:
        text = text.replace(url, redact_url(url) or "")
    with _LOCK:
        secrets = set(_KNOWN)
    secrets |= url_secrets(url)
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


_FORMATTER = logging.Formatter()
_INSTALLED = False


def _masked(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


def _install_record_factory() -> None:
    """Wrap the log record factory once: while credentials are remembered, every record's message and
    traceback text are masked when the record is made (any logger, any handler, uvicorn's included)."""
    global _INSTALLED
    if _INSTALLED:
        return
    _INSTALLED = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        with _LOCK:
            secrets = sorted(_KNOWN, key=len, reverse=True)
        if not secrets:
            return record
        message = record.getMessage()
        cleaned = _masked(message, secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = _masked(_FORMATTER.formatException(record.exc_info), secrets)
        return record

    logging.setLogRecordFactory(factory)


def remember(url: str | None) -> None:
    """Register the credentials of ``url`` (an LLM endpoint) so no log record ever shows them."""
    secrets = url_secrets(url)
    if not secrets:
        return
    with _LOCK:
        _KNOWN.update(secrets)
        _install_record_factory()
