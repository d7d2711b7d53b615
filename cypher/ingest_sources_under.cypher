// Distinct Chunk.source values under a directory prefix (removed files). Params: $prefix.
MATCH (c:Chunk)
WHERE c.source STARTS WITH $prefix
RETURN DISTINCT c.source AS source
