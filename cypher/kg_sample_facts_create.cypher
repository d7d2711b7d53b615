// Create samples' triples as KG_FACT edges between whole-graph entities (a sample's browsable subgraph; KG actions read the fact buckets). Entities must exist (kg_graph_merge ran first); edges reference them by position in $ents. Params: $ents [{key}] (distinct), $rows [{h, r, t, s}] (h, t = positions in $ents, s = sample key; a sample's rows distinct).
UNWIND range(0, size($ents) - 1) AS i
WITH i, $ents[i].key AS key
OPTIONAL MATCH (e:KGEntity {key: key})
WITH i, e ORDER BY i
WITH collect([e]) AS nodes
UNWIND $rows AS x
WITH nodes[x.h][0] AS h, nodes[x.t][0] AS t, x
WHERE h IS NOT NULL AND t IS NOT NULL
CREATE (h)-[:KG_FACT {relation: x.r, sample: x.s}]->(t)
