// The Documents of one file (one for text/Markdown/PDF, one per record for JSON) with chunk counts. Params: $source, $limit.
MATCH (c:Chunk {source: $source})
WITH c.doc_id AS id, c.title AS title, count(c) AS chunks, min(c.pos) AS first
RETURN id, title, chunks
ORDER BY first
LIMIT $limit
