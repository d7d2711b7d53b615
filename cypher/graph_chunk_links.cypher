// Graph view: each chunk's outgoing NEXT, RELATES_TO and REL edges, at most $limit each; the caller keeps those between shown chunks. Params: $ids [string], $limit int.
UNWIND $ids AS a
MATCH (x:Chunk {id: a})-[r:NEXT|RELATES_TO|REL]->(y:Chunk)
WITH a, collect({id: y.id, type: type(r), weight: r.weight, shared: r.shared, rel_type: r.type,
                 confidence: r.confidence}) AS ys
RETURN a AS source, size(ys) AS total, ys[..$limit] AS targets
