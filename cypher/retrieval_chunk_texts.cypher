// Every chunk's id, title and text (builds the in-process BM25 index). Params: none.
MATCH (c:Chunk)
RETURN c.id AS id, c.title AS title, c.text AS text
