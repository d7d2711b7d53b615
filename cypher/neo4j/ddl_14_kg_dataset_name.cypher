// Unique KGDataset.name. Params: none.
CREATE CONSTRAINT kg_dataset_name IF NOT EXISTS FOR (d:KGDataset) REQUIRE d.name IS UNIQUE
