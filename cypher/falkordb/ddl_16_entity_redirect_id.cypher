// Range index on EntityRedirect.id (the key of an entity merged into another; MERGE keeps it unique). Params: none.
CREATE INDEX FOR (r:EntityRedirect) ON (r.id)
