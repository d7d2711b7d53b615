// :param dataset => 'webqsp'
// :param sample_id => 'WebQTrn-0'
// One KG sample's subgraph: the sample, its question (KG_TOPIC) and answer (KG_ANSWER) entities, and its triples as KG_FACT edges (null: the first sample, by key, of the dataset or of any dataset).
:param dataset => null;
:param sample_id => null;
MATCH (s:KGSample)
WHERE ($dataset IS NULL OR s.dataset = $dataset) AND ($sample_id IS NULL OR s.sample_id = $sample_id)
WITH s ORDER BY s.key
LIMIT 1
OPTIONAL MATCH (s)-[a:KG_TOPIC|KG_ANSWER]->(q:KGEntity)
WITH s, collect(a) AS links, collect(q) AS linked
MATCH (h:KGEntity)-[f:KG_FACT {sample: s.key}]->(t:KGEntity)
RETURN s, links, linked, h, f, t
LIMIT 1000
