// Create or update Chunks and link them to their Document. Params: $rows [{id, doc_id, text, hash, source, seq, title, pos, section, page, page_end, line_start, line_end, record, paragraph}].
UNWIND $rows AS r
MATCH (d:Document {id: r.doc_id})
MERGE (c:Chunk {id: r.id})
SET c.text = r.text, c.hash = r.hash, c.source = r.source, c.seq = r.seq, c.doc_id = r.doc_id,
    c.title = r.title, c.pos = r.pos, c.section = r.section, c.page = r.page, c.page_end = r.page_end,
    c.line_start = r.line_start, c.line_end = r.line_end, c.record = r.record, c.paragraph = r.paragraph
MERGE (d)-[:HAS_CHUNK]->(c)
RETURN count(c) AS written
