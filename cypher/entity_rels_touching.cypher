// Entity REL edges with either end among the given entities (for a merge to move them). Params: $ids [string].
UNWIND $ids AS id
MATCH (e:Entity {id: id})-[x:REL]-(o:Entity)
RETURN startNode(x).id AS a, endNode(x).id AS b, x.type AS type, x.chunks AS chunks
