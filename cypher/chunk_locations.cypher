// Where chunks came from (page, line range or record) and their heading path. Params: $ids [string].
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
RETURN c.id AS id, c.page AS page, c.page_end AS page_end, c.line_start AS line_start, c.line_end AS line_end,
       c.record AS record, c.paragraph AS paragraph, c.section AS section
