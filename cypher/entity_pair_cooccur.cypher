// Duplicate scan: chunks shared by each pair of entities (their CO_OCCURS count). Params: $rows [{a, b}].
UNWIND $rows AS r
MATCH (a:Entity {id: r.a})-[co:CO_OCCURS]-(b:Entity {id: r.b})
RETURN r.a AS a, r.b AS b, co.count AS count
