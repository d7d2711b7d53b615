// Vector score (1+cos)/2 of chunks by id against $embedding (metadata known in process). Params: $ids, $embedding.
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
RETURN c.id AS id,
       CASE WHEN c.embedding IS NULL THEN null
            ELSE vector.similarity.cosine(c.embedding, $embedding) END AS score
