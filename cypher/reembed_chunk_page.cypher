// One page of chunk ids and texts after a given id, by id (keyset paging for re-embedding). Params: $after, $limit.
MATCH (c:Chunk)
WHERE c.id > $after
RETURN c.id AS id, c.text AS text
ORDER BY id
LIMIT $limit
