// Create or update KG samples (written last per chunk, so a visible sample is complete). Params: $rows [{key, props}].
UNWIND $rows AS r
MERGE (s:KGSample {key: r.key})
SET s += r.props
