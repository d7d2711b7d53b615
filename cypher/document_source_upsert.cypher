// Create or update Sources (ingested files) with their hash, size and counts. Params: $rows [{id, path, name, title, content_hash, bytes, chunks, documents, entities, ingested_at}].
UNWIND $rows AS r
MERGE (s:Source {id: r.id})
SET s.path = r.path, s.name = r.name, s.title = r.title, s.content_hash = r.content_hash, s.bytes = r.bytes,
    s.chunks = r.chunks, s.documents = r.documents, s.entities = r.entities, s.ingested_at = r.ingested_at
RETURN count(s) AS written
