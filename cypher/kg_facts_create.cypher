// Create per-sample entity fact nodes (parallel arrays: out_rel[i] -> out_ent[i], in_ent[i] -> in_rel[i]). Params: $rows [{key, lkey, sample, name, out_rel, out_ent, in_rel, in_ent}].
UNWIND $rows AS r
CREATE (:KGFacts {key: r.key, lkey: r.lkey, sample: r.sample, name: r.name,
                  out_rel: r.out_rel, out_ent: r.out_ent, in_rel: r.in_rel, in_ent: r.in_ent})
