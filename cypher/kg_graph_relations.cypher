// Distinct relations touching a whole-graph entity, with direction ('out' = entity is head). Params: $key string.
MATCH (e:KGEntity {key: $key})-[r:KG_REL]->()
RETURN DISTINCT r.relation AS relation, 'out' AS direction
UNION
MATCH (e:KGEntity {key: $key})<-[r:KG_REL]-()
RETURN DISTINCT r.relation AS relation, 'in' AS direction
