// Number of Sources (ingested files). Params: none.
MATCH (s:Source)
RETURN count(s) AS n
