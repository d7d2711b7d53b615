// Entity merge: redirects that pointed at a merged-away key follow it to the surviving entity. Params: $rows [{source, target}].
UNWIND $rows AS r
MATCH (x:EntityRedirect {target: r.source})
SET x.target = r.target
RETURN count(x) AS updated
