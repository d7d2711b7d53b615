// Take the cross-process ingest lock of a path unless a live holder has it (an expired one loses it). Params: $key, $holder, $what, $ttl_ms.
MERGE (l:IngestLock {key: $key})
ON CREATE SET l.holder = $holder, l.expires_at = timestamp() + $ttl_ms, l.acquired_at = timestamp()
SET l.checked_at = timestamp()
WITH l
WHERE l.holder = $holder OR l.expires_at < timestamp()
SET l.holder = $holder, l.what = $what, l.expires_at = timestamp() + $ttl_ms,
    l.acquired_at = coalesce(l.acquired_at, timestamp())
RETURN l.holder AS holder
