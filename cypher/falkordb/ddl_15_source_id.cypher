// Range index on Source.id (one Source per ingested file; MERGE keeps ids unique). Params: none.
CREATE INDEX FOR (s:Source) ON (s.id)
