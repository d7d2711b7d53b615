// :param labels => ['Document', 'Chunk', 'Entity']
// The schema: NeoRAG's labels and the relationship types between them, as Neo4j sees them (null labels: all).
:param labels => null;
CALL db.schema.visualization() YIELD nodes, relationships
WITH [n IN nodes WHERE $labels IS NULL OR any(l IN labels(n) WHERE l IN $labels)] AS shown, relationships
RETURN shown AS nodes,
       [r IN relationships WHERE startNode(r) IN shown AND endNode(r) IN shown] AS relationships
