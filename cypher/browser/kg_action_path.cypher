// :param dataset => 'pq2h'
// :param sample_id => 'pq2h_questions-0'
// :param entity => 'frederica_of_mecklenburg-strelitz'
// :param relation => 'spouse'
// The path a KG action walked in one sample: the entity's facts through the relation, both directions (get_tail_entities / get_head_entities), or all its facts (get_relations) when relation is null (null entity: the sample's first question entity).
:param dataset => null;
:param sample_id => null;
:param entity => null;
:param relation => null;
MATCH (s:KGSample)
WHERE ($dataset IS NULL OR s.dataset = $dataset) AND ($sample_id IS NULL OR s.sample_id = $sample_id)
WITH s ORDER BY s.key
LIMIT 1
CALL (s) {
  OPTIONAL MATCH (given:KGEntity {key: s.dataset + '/' + $entity})
  OPTIONAL MATCH (s)-[:KG_TOPIC]->(topic:KGEntity)
  OPTIONAL MATCH (head:KGEntity)-[:KG_FACT {sample: s.key}]->()
  RETURN CASE WHEN $entity IS NULL THEN coalesce(topic, head) ELSE given END AS start
  LIMIT 1
}
MATCH p = (start)-[f:KG_FACT]-(x:KGEntity)
WHERE f.sample = s.key AND ($relation IS NULL OR f.relation = $relation)
OPTIONAL MATCH (s)-[a:KG_TOPIC]->(start)
RETURN s, a, p
LIMIT 300
