// Every chunk with its title, document, text and the entity ids it mentions (in-process entity graph for PPR). Params: none.
MATCH (c:Chunk)
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
RETURN c.id AS id, c.title AS title, c.doc_id AS doc_id, c.text AS text, collect(e.id) AS entities
