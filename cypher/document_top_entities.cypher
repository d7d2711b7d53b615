// The entities one file's chunks mention most (chunks mentioning, then mentions). Params: $source, $limit.
MATCH (c:Chunk {source: $source})-[m:MENTIONS]->(e:Entity)
WITH e, count(c) AS chunks, sum(m.count) AS mentions
RETURN e.id AS id, e.name AS name, e.freq AS freq, chunks, mentions
ORDER BY chunks DESC, mentions DESC, id
LIMIT $limit
