// Range index on Entity.norm (question entity linking). Params: none.
CREATE INDEX entity_norm IF NOT EXISTS FOR (e:Entity) ON (e.norm)
