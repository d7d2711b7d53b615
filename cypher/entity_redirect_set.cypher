// Entity merge: the merged-away key now redirects to the surviving entity. Params: $rows [{source, target}].
UNWIND $rows AS r
MERGE (x:EntityRedirect {id: r.source})
SET x.target = r.target
RETURN count(x) AS written
