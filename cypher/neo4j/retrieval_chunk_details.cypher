// Chunks by id with title, vector score (1+cos)/2 against $embedding and graph degree (relationships other than HAS_CHUNK, read from the node's degree counts, not by walking them). Params: $ids, $embedding.
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
RETURN c.id AS id, c.title AS title, c.doc_id AS doc_id, c.source AS source, c.seq AS seq,
       CASE WHEN c.embedding IS NULL THEN null
            ELSE vector.similarity.cosine(c.embedding, $embedding) END AS score,
       COUNT { (c)--() } - COUNT { (c)-[:HAS_CHUNK]-() } AS degree
