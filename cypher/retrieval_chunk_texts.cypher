// Every chunk's id, title, heading path, text, document, position and graph degree (in-process BM25 index + metadata). Params: none.
MATCH (c:Chunk)
OPTIONAL MATCH (c)-[r]-()
WITH c, count(CASE WHEN type(r) <> 'HAS_CHUNK' THEN 1 END) AS degree
RETURN c.id AS id, c.title AS title, c.section AS section, c.text AS text, c.doc_id AS doc_id, c.source AS source, c.seq AS seq, degree
