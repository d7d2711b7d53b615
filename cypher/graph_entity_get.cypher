// Graph view: entities by id with their name, mention count and surface forms. Params: $ids [string].
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})
RETURN e.id AS id, e.name AS name, e.freq AS freq, e.aliases AS aliases
