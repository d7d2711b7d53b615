// Sources (files) of the chunks mentioning any of the given entities (whose RELATES_TO a merge changes). Params: $ids [string].
UNWIND $ids AS eid
MATCH (:Entity {id: eid})<-[:MENTIONS]-(c:Chunk)
RETURN DISTINCT c.source AS source
