// Range index on IngestLock.key (one cross-process ingest lock per path; MERGE keeps keys unique). Params: none.
CREATE INDEX FOR (l:IngestLock) ON (l.key)
