// Recompute Entity.name (most frequent surface form over its MENTIONS; ties: smallest) and aliases (every surface form, sorted) from MENTIONS.surfaces. Params: $rows [{id}].
UNWIND $rows AS r
MATCH (e:Entity {id: r.id})<-[m:MENTIONS]-(:Chunk)
WHERE m.surfaces IS NOT NULL
UNWIND range(0, size(m.surfaces) - 1) AS i
WITH e, m.surfaces[i] AS form, m.surface_counts[i] AS n
WITH e, form, sum(n) AS n
ORDER BY n DESC, form
WITH e, collect(form) AS forms
UNWIND forms AS alias
WITH e, forms[0] AS name, alias
ORDER BY alias
WITH e, name, collect(alias) AS aliases
SET e.name = name, e.aliases = aliases
RETURN count(e) AS updated
