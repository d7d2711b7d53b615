// Drop the Chunk.embedding vector index (re-embedding with another dimension). Params: none.
DROP INDEX chunk_embedding IF EXISTS
