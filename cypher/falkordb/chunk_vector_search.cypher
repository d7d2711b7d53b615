// Top-$k chunks by cosine; FalkorDB gives distance 1-cos, returned as (1+cos)/2 clamped to [0,1]. Params: $embedding, $k.
CALL db.idx.vector.queryNodes('Chunk', 'embedding', $k, vecf32($embedding)) YIELD node, score
RETURN node.id AS id, node.text AS text, node.source AS source, node.seq AS seq,
       CASE WHEN score <= 0.0 THEN 1.0 WHEN score >= 2.0 THEN 0.0 ELSE 1.0 - score / 2.0 END AS score
ORDER BY score DESC
