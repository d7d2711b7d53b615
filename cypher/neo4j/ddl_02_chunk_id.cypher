// Unique Chunk.id (constraint + backing index). Params: none.
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE
