// Update where stored chunks came from (their text is unchanged but lines/pages moved). Params: $rows [{id, section, page, page_end, line_start, line_end, record, paragraph, pos}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.id})
SET c.section = r.section, c.page = r.page, c.page_end = r.page_end, c.line_start = r.line_start,
    c.line_end = r.line_end, c.record = r.record, c.paragraph = r.paragraph, c.pos = r.pos
RETURN count(c) AS updated
