// :param doc_id => 'doc-0123456789abcdef'
// One document with its chunks (HAS_CHUNK, NEXT) and the entities they mention (null doc_id: the document with the most chunks).
:param doc_id => null;
MATCH (d:Document)
WHERE $doc_id IS NULL OR d.id = $doc_id
WITH d, COUNT { (d)-[:HAS_CHUNK]->() } AS chunks
ORDER BY chunks DESC, d.id
LIMIT 1
MATCH (d)-[h:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (c)-[n:NEXT]->(c2:Chunk)
OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
RETURN d, h, c, n, c2, m, e
LIMIT 1000
