// The keys of the entities merged into each given entity. Params: $ids [string] (surviving entity ids).
UNWIND $ids AS eid
MATCH (r:EntityRedirect {target: eid})
RETURN eid AS target, collect(r.id) AS merged
