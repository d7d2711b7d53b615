// Create Entities by normalised key, adding new surface forms to aliases. Params: $rows [{id, name, aliases: [string]}].
UNWIND $rows AS r
MERGE (e:Entity {id: r.id})
ON CREATE SET e.name = r.name, e.norm = r.id, e.aliases = r.aliases, e.freq = 0
ON MATCH SET e.aliases = coalesce(e.aliases, []) + [a IN r.aliases WHERE NOT a IN coalesce(e.aliases, [])]
RETURN count(e) AS written
