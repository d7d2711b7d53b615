// Heartbeat: push back the expiry of an ingest lock this holder still has. Params: $key, $holder, $ttl_ms.
MATCH (l:IngestLock {key: $key})
WHERE l.holder = $holder
SET l.expires_at = timestamp() + $ttl_ms
RETURN count(l) AS renewed
