// Chunks by id, in no particular order. Params: $ids [string].
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
RETURN c.id AS id, c.text AS text, c.source AS source, c.seq AS seq, c.hash AS hash, c.doc_id AS doc_id,
       c.title AS title, c.pos AS pos
