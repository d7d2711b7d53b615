// Unique KGEntity.key ("<dataset>/<name>"), reserved for KG triples. Params: none.
CREATE CONSTRAINT kg_entity_key IF NOT EXISTS FOR (e:KGEntity) REQUIRE e.key IS UNIQUE
