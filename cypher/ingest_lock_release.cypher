// Release an ingest lock (only its holder may). Params: $key, $holder.
MATCH (l:IngestLock {key: $key})
WHERE l.holder = $holder
DELETE l
RETURN count(*) AS released
