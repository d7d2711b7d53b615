// Entity suggestions: entities whose normalised key contains the normalised text, prefix matches first, then most mentioned. Params: $text string, $limit int.
MATCH (e:Entity)
WHERE e.norm CONTAINS $text
RETURN e.id AS id, e.name AS name, e.freq AS freq, e.aliases AS aliases, e.norm STARTS WITH $text AS prefix
ORDER BY prefix DESC, freq DESC, id
LIMIT $limit
