// Entity merge: set the surviving entities' surface forms. Params: $rows [{id, aliases: [string]}].
UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
SET e.aliases = r.aliases
RETURN count(e) AS updated
