// Every chunk's id, title, heading path, text, document, position, location and graph degree (in-process BM25 index + metadata + texts). Params: none.
MATCH (c:Chunk)
OPTIONAL MATCH (c)-[r]-()
WITH c, count(CASE WHEN type(r) <> 'HAS_CHUNK' THEN 1 END) AS degree
RETURN c.id AS id, c.title AS title, c.section AS section, c.text AS text, c.doc_id AS doc_id, c.source AS source, c.seq AS seq, degree,
       c.page AS page, c.page_end AS page_end, c.line_start AS line_start, c.line_end AS line_end, c.record AS record, c.paragraph AS paragraph
