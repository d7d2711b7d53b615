// Record the embedding model and dimension of the graph's chunk vectors. Params: $model, $dimension.
MERGE (m:NeoragMeta {key: 'embedding'})
SET m.model = $model, m.dimension = $dimension
RETURN m.model AS model, m.dimension AS dimension
