// Delete samples' KG_TOPIC / KG_ANSWER links to their entities (before --replace rewrites them). Params: $samples [string] (sample keys).
UNWIND $samples AS s
MATCH (:KGSample {key: s})-[x:KG_TOPIC|KG_ANSWER]->(:KGEntity)
DELETE x
