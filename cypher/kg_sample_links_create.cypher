// Link samples to their question (topic) and answer entities found in the dataset graph. Params: $rows [{key, entity, role}] (sample key, entity key, 'topic' or 'answer').
UNWIND $rows AS r
MATCH (s:KGSample {key: r.key})
MATCH (e:KGEntity {key: r.entity})
FOREACH (_ IN CASE WHEN r.role = 'topic' THEN [1] ELSE [] END | MERGE (s)-[:KG_TOPIC]->(e))
FOREACH (_ IN CASE WHEN r.role = 'answer' THEN [1] ELSE [] END | MERGE (s)-[:KG_ANSWER]->(e))
