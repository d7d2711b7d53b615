// Range index on Document.id (uniqueness is kept by MERGE on id). Params: none.
CREATE INDEX FOR (d:Document) ON (d.id)
