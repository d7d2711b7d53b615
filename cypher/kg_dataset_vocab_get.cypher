// Relation vocabularies of KG datasets (null when none was stored: not loaded from the KG-R1 layout). Params: $names [string].
UNWIND $names AS n
MATCH (d:KGDataset {name: n})
RETURN n AS name, d.relation_vocab AS relations
