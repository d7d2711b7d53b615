"""KG actions over per-sample subgraphs stored in the graph (KG-R1 compatible), plus whole-graph queries."""
