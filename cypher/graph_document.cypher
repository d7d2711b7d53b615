// Graph view: one Document with the ids of its chunks in order (at most $limit) and how many it has. Params: $id string, $limit int.
MATCH (d:Document {id: $id})
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
WITH d, c
ORDER BY c.seq
WITH d, collect(c.id) AS ids
RETURN d.id AS id, d.title AS title, d.source AS source, size(ids) AS total, ids[..$limit] AS chunks
