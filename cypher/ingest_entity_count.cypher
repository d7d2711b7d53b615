// Number of Entity nodes. Params: none.
MATCH (e:Entity)
RETURN count(e) AS n
