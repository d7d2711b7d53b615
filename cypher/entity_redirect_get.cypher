// Where merged-away entity keys now live: the surviving entity id of each. Params: $ids [string] (entity keys).
UNWIND $ids AS k
MATCH (r:EntityRedirect {id: k})
RETURN k AS id, r.target AS target
