// Create or update Documents in a batch. Params: $rows [{id, title, source, props: map}].
UNWIND $rows AS r
MERGE (d:Document {id: r.id})
SET d.title = r.title, d.source = r.source
SET d += r.props
RETURN count(d) AS written
