// The ingest lock of a path: holder, what it does and milliseconds left before it expires. Params: $key.
MATCH (l:IngestLock {key: $key})
RETURN l.holder AS holder, l.what AS what, l.expires_at - timestamp() AS expires_in_ms
