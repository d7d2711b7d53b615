// Delete every node and relationship (tests, `neorag db reset`). Params: none.
MATCH (n)
DETACH DELETE n
