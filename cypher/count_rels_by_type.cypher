// Relationship counts per type. Params: none.
MATCH ()-[r]->()
RETURN type(r) AS type, count(*) AS count
ORDER BY type
