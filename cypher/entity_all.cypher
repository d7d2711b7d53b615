// Duplicate scan: entities with their name, surface forms and mention count, most mentioned first, at most $limit. Params: $limit int.
MATCH (e:Entity)
RETURN e.id AS id, e.name AS name, e.freq AS freq, e.aliases AS aliases
ORDER BY freq DESC, id
LIMIT $limit
