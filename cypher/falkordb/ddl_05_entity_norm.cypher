// Range index on Entity.norm (question entity linking). Params: none.
CREATE INDEX FOR (e:Entity) ON (e.norm)
