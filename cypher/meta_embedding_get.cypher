// The embedding model and dimension the graph's chunk vectors were made with (none before the first ingest). Params: none.
MATCH (m:NeoragMeta {key: 'embedding'})
RETURN m.model AS model, m.dimension AS dimension
