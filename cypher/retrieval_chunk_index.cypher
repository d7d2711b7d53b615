// Every chunk's id, document id and title (evaluation maps chunks to paragraphs). Params: none.
MATCH (c:Chunk)
RETURN c.id AS id, c.doc_id AS doc_id, c.title AS title
