// A page of one file's chunks in file order with their location, heading path and entity count. Params: $source, $offset, $limit.
MATCH (c:Chunk {source: $source})
WITH c
ORDER BY c.pos, c.id
SKIP $offset
LIMIT $limit
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH c, count(e) AS entities
RETURN c.id AS id, c.doc_id AS doc_id, c.seq AS seq, c.pos AS pos, c.title AS title, c.section AS section,
       c.text AS text, c.page AS page, c.page_end AS page_end, c.line_start AS line_start,
       c.line_end AS line_end, c.record AS record, c.paragraph AS paragraph, entities
ORDER BY c.pos, c.id
