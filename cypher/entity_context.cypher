// Duplicate scan: each entity's context, the embeddings and titles of the chunks mentioning it most (at most $limit each). Params: $ids [string], $limit int.
UNWIND $ids AS eid
MATCH (:Entity {id: eid})<-[m:MENTIONS]-(c:Chunk)
WITH eid, c, m
ORDER BY m.count DESC, c.id
WITH eid, collect(c)[..$limit] AS cs
RETURN eid AS id, [c IN cs | {id: c.id, title: c.title, embedding: c.embedding}] AS chunks
