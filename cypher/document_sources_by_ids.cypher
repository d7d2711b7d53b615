// Sources by id (path and content hash: what an ingest compares files with). Params: $ids [string].
UNWIND $ids AS sid
MATCH (s:Source {id: sid})
RETURN s.id AS id, s.path AS path, s.content_hash AS content_hash
