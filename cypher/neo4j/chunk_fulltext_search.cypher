// Top-$k chunks by Lucene full-text score, max-normalised to (0,1]. Params: $terms (word tokens), $k.
WITH reduce(s = '', t IN $terms | s + CASE WHEN s = '' THEN '' ELSE ' OR ' END + t) AS q
CALL db.index.fulltext.queryNodes('chunk_text', q, {limit: $k}) YIELD node, score
WITH collect({id: node.id, text: node.text, source: node.source, seq: node.seq, score: score}) AS hits
WITH hits, reduce(m = 0.0, h IN hits | CASE WHEN h.score > m THEN h.score ELSE m END) AS mx
UNWIND hits AS h
RETURN h.id AS id, h.text AS text, h.source AS source, h.seq AS seq, h.score / mx AS score
ORDER BY score DESC
