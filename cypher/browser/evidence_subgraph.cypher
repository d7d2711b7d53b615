// :param chunk_ids => ['doc-0123456789abcdef:0:0123456789ab']
// The evidence behind an answer: the cited chunks (the source ids /query returned), their documents, the entities they mention and the edges between the chunks (null chunk_ids: the 3 best-connected chunks).
:param chunk_ids => null;
MATCH (c:Chunk)
WHERE $chunk_ids IS NULL OR c.id IN $chunk_ids
WITH c, COUNT { (c)--() } AS degree
ORDER BY degree DESC, c.id
LIMIT CASE WHEN $chunk_ids IS NULL THEN 3 ELSE 1000 END
WITH collect(c) AS cited
UNWIND cited AS c
MATCH (d:Document)-[h:HAS_CHUNK]->(c)
OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
OPTIONAL MATCH (c)-[x:RELATES_TO|REL|NEXT]-(o:Chunk)
WHERE o IN cited
RETURN d, h, c, m, e, x, o
