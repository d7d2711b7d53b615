// Whole-graph KG entities whose folded name matches (exact names fold to the same key). Params: $keys [string] (entity lkeys).
UNWIND $keys AS k
MATCH (e:KGEntity {lkey: k})
RETURN k AS lkey, e.name AS name
