// Top-$k chunks by cosine; FalkorDB gives distance 1-cos, returned as (1+cos)/2 clamped to [0,1]. The index (approximate HNSW) is asked for 2 x $k neighbours and the best $k kept, so a near neighbour it ranks just outside $k is not lost. Params: $embedding, $k.
CALL db.idx.vector.queryNodes('Chunk', 'embedding', 2 * $k, vecf32($embedding)) YIELD node, score
WITH node, CASE WHEN score <= 0.0 THEN 1.0 WHEN score >= 2.0 THEN 0.0 ELSE 1.0 - score / 2.0 END AS score
RETURN node.id AS id, node.text AS text, node.source AS source, node.seq AS seq, score
ORDER BY score DESC, id
LIMIT $k
