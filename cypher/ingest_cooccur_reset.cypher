// Remove every CO_OCCURS edge (before the bounded recompute). Params: none.
MATCH (:Entity)-[x:CO_OCCURS]->(:Entity)
DELETE x
RETURN count(*) AS deleted
