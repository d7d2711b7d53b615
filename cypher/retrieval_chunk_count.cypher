// Number of chunks (empty-graph check). Params: none.
MATCH (c:Chunk)
RETURN count(c) AS chunks
