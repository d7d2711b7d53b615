// Stored chunks of one source file with their hash and whether they are embedded. Params: $source.
MATCH (c:Chunk {source: $source})
RETURN c.id AS id, c.hash AS hash, c.doc_id AS doc_id, c.pos AS pos, c.embedding IS NOT NULL AS embedded
