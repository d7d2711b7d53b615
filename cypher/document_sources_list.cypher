// A page of Sources (ingested files), newest ingest first. Params: $offset, $limit.
MATCH (s:Source)
RETURN s.id AS id, s.path AS path, s.name AS name, s.title AS title, s.content_hash AS content_hash,
       s.bytes AS bytes, s.chunks AS chunks, s.documents AS documents, s.entities AS entities,
       s.ingested_at AS ingested_at
ORDER BY s.ingested_at DESC, s.id
SKIP $offset
LIMIT $limit
