// One Source (ingested file) by id with its stored counts. Params: $id.
MATCH (s:Source {id: $id})
RETURN s.id AS id, s.path AS path, s.name AS name, s.title AS title, s.content_hash AS content_hash,
       s.bytes AS bytes, s.chunks AS chunks, s.documents AS documents, s.entities AS entities,
       s.ingested_at AS ingested_at
