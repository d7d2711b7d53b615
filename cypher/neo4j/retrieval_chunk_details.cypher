// Chunks by id with title, vector score (1+cos)/2 against $embedding and graph degree. Params: $ids, $embedding.
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
OPTIONAL MATCH (c)-[r]-()
WITH c, count(CASE WHEN type(r) <> 'HAS_CHUNK' THEN 1 END) AS degree
RETURN c.id AS id, c.title AS title, c.doc_id AS doc_id, c.source AS source, c.seq AS seq,
       CASE WHEN c.embedding IS NULL THEN null
            ELSE vector.similarity.cosine(c.embedding, $embedding) END AS score,
       degree
