// Full-text (Lucene) index on Chunk.text. Params: none.
CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (c:Chunk) ON EACH [c.text]
