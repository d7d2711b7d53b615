// Current generation tokens of KG datasets. Params: $names [string].
UNWIND $names AS n
MATCH (d:KGDataset {name: n})
RETURN n AS name, d.generation AS generation
