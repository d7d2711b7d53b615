// Cosine vector index on Chunk.embedding. Params: $dim (embedder dimension).
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (c:Chunk) ON c.embedding
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dim), `vector.similarity_function`: 'cosine'}}
