// Create per-sample fact buckets: `facts` is JSON {"<entity name>": [out_rel, out_ent, in_rel, in_ent], ...} (aligned lists) for the sample's entities hashed into this bucket. Params: $rows [{key, sample, facts}].
UNWIND $rows AS r
CREATE (:KGFacts {key: r.key, sample: r.sample, facts: r.facts})
