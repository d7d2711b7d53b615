// Top-$k chunks by cosine similarity, score (1+cos)/2 in [0,1] (recomputed: the index scores every cos <= 0 as 0.5). Params: $embedding, $k.
CALL db.index.vector.queryNodes('chunk_embedding', $k, $embedding) YIELD node
WITH node, vector.similarity.cosine(node.embedding, $embedding) AS score
RETURN node.id AS id, node.text AS text, node.source AS source, node.seq AS seq, score
ORDER BY score DESC, id
