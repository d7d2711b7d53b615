// Top-$k chunks by cosine similarity, score (1+cos)/2 in [0,1], recomputed exactly (the index scores every cos <= 0 as 0.5). The index (approximate HNSW) is asked for 2 x $k neighbours and the best $k kept. Params: $embedding, $k.
CALL db.index.vector.queryNodes('chunk_embedding', 2 * $k, $embedding) YIELD node
WITH node, vector.similarity.cosine(node.embedding, $embedding) AS score
RETURN node.id AS id, node.text AS text, node.source AS source, node.seq AS seq, score
ORDER BY score DESC, id
LIMIT $k
