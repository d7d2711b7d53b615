// Which whole-graph KG entities already exist (the loader CREATEs the others). Params: $keys [string] (entity keys).
UNWIND $keys AS k
MATCH (e:KGEntity {key: k})
RETURN k AS key
