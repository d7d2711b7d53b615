// Chunks by id with their location and heading path, in no particular order. Params: $ids [string].
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
RETURN c.id AS id, c.text AS text, c.source AS source, c.seq AS seq, c.hash AS hash, c.doc_id AS doc_id,
       c.title AS title, c.pos AS pos, c.section AS section, c.page AS page, c.page_end AS page_end,
       c.line_start AS line_start, c.line_end AS line_end, c.record AS record, c.paragraph AS paragraph
