// Create or update Chunks and link them to their Document. Params: $rows [{id, doc_id, text, hash, source, seq, title, pos}].
UNWIND $rows AS r
MATCH (d:Document {id: r.doc_id})
MERGE (c:Chunk {id: r.id})
SET c.text = r.text, c.hash = r.hash, c.source = r.source, c.seq = r.seq, c.doc_id = r.doc_id,
    c.title = r.title, c.pos = r.pos
MERGE (d)-[:HAS_CHUNK]->(c)
RETURN count(c) AS written
