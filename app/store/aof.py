"""Keeps the embedded FalkorDB's append-only file compact, so a restart (a crash included) loads a snapshot
instead of replaying every write statement ever made (a 36 MB AOF took 41.5 s to replay, its compacted
form 0.7 s).

Two triggers: after every ingest or delete job (:func:`compact_if_grown`, called by the job registry) the
part of the AOF written since its last rewrite is rewritten as a snapshot once it passes the threshold;
and the server itself rewrites by size (``--auto-aof-rewrite-min-size``, :func:`server_args`) for writes
that come from elsewhere. A rewrite is ``BGREWRITEAOF``: the server forks and keeps serving.
"""

from __future__ import annotations

import logging
import threading
import time

import redis

log = logging.getLogger(__name__)


def server_args(rewrite_mb: int) -> list[str]:
    """redis-server arguments: rewrite the AOF by itself once it is ``rewrite_mb`` MB and has doubled
    since the last rewrite (redis's own default minimum is 64 MB)."""
    if rewrite_mb <= 0:
        return []
    return ["--auto-aof-rewrite-min-size", f"{rewrite_mb}mb", "--auto-aof-rewrite-percentage", "100"]


def aof_growth(conn: redis.Redis) -> int:
    """Bytes appended to the AOF since its last rewrite (0 when the AOF is off)."""
    info = conn.info("persistence")
    if not int(info.get("aof_enabled", 0)):
        return 0
    return max(0, int(info.get("aof_current_size", 0)) - int(info.get("aof_base_size", 0)))


def rewriting(conn: redis.Redis) -> bool:
    """Whether an AOF rewrite runs or is scheduled now."""
    info = conn.info("persistence")
    return bool(int(info.get("aof_rewrite_in_progress", 0)) or int(info.get("aof_rewrite_scheduled", 0)))


def compact_if_grown(host: str, port: int, threshold_bytes: int, recheck: bool = True) -> bool:
    """Start a background AOF rewrite when more than ``threshold_bytes`` were appended since the last one;
    returns whether one was started. A rewrite already running (the server's own, by size) leaves the
    writes made meanwhile in the AOF's tail: then a thread waits for it and checks once more (``recheck``).
    Never raises: the store being away only skips the compaction."""
    if threshold_bytes <= 0:
        return False
    try:
        conn = redis.Redis(host=host, port=port, socket_connect_timeout=2, socket_timeout=10)
        try:
            if rewriting(conn):
                if recheck:
                    _recheck_later(host, port, threshold_bytes)
                return False
            grown = aof_growth(conn)
            if grown < threshold_bytes:
                return False
            try:
                conn.bgrewriteaof()
            except redis.exceptions.ResponseError:
                if recheck:  # one started in between
                    _recheck_later(host, port, threshold_bytes)
                return False
            log.info("the store's AOF grew %.1f MB since its last rewrite: rewriting it as a snapshot",
                     grown / 1e6)
            return True
        finally:
            conn.close()
    except (redis.exceptions.RedisError, OSError) as exc:
        log.warning("could not check the store's AOF size (%s); it is compacted at the next stop", exc)
        return False


def _recheck_later(host: str, port: int, threshold_bytes: int, wait_s: float = 600.0) -> None:
    """On a thread: wait for the running rewrite to end, then compact what was appended meanwhile."""

    def wait_then_check() -> None:
        deadline = time.monotonic() + wait_s
        try:
            conn = redis.Redis(host=host, port=port, socket_connect_timeout=2, socket_timeout=10)
            try:
                while rewriting(conn) and time.monotonic() < deadline:
                    time.sleep(0.5)
            finally:
                conn.close()
        except (redis.exceptions.RedisError, OSError):
            return
        compact_if_grown(host, port, threshold_bytes, recheck=False)

    threading.Thread(target=wait_then_check, name="aof-recheck", daemon=True).start()
