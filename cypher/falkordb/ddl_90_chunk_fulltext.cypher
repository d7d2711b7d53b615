// Full-text (RediSearch) index on Chunk.text. Params: none.
CALL db.idx.fulltext.createNodeIndex({label: 'Chunk', language: 'english'}, 'text')
