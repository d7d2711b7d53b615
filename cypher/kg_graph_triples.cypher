// Whole-graph triples touching an entity through the given relations, both directions. Params: $key string, $relations [string].
MATCH (e:KGEntity {key: $key})-[r:KG_REL]->(t:KGEntity)
WHERE r.relation IN $relations
RETURN e.name AS head, r.relation AS relation, t.name AS tail
UNION
MATCH (h:KGEntity)-[r:KG_REL]->(e:KGEntity {key: $key})
WHERE r.relation IN $relations
RETURN h.name AS head, r.relation AS relation, e.name AS tail
