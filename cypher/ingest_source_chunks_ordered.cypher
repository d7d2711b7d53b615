// Chunks of one source in source order, with text (relations). Params: $source.
MATCH (c:Chunk {source: $source})
RETURN c.id AS id, c.pos AS pos, c.text AS text
ORDER BY c.pos
