// Delete one Source node (after its chunks are gone). Params: $id.
MATCH (s:Source {id: $id})
DELETE s
RETURN count(*) AS deleted
