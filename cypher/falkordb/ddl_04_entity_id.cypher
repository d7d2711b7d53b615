// Range index on Entity.id (the normalised key; MERGE keeps it unique). Params: none.
CREATE INDEX FOR (e:Entity) ON (e.id)
