// One KG sample's stored fields. Params: $key string (sample key).
MATCH (s:KGSample {key: $key})
RETURN s.sample_id AS sample_id, s.dataset AS dataset, s.question AS question, s.answers AS answers,
       s.q_entity AS q_entity, s.a_entity AS a_entity, s.n_triples AS n_triples
