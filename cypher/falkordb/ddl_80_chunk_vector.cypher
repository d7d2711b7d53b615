// Cosine vector index on Chunk.embedding. Params: $dim (embedder dimension).
CREATE VECTOR INDEX FOR (c:Chunk) ON (c.embedding) OPTIONS {dimension: $dim, similarityFunction: 'cosine'}
