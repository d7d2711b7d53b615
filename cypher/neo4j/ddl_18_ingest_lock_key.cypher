// Unique IngestLock.key (one cross-process ingest lock per path). Params: none.
CREATE CONSTRAINT ingest_lock_key IF NOT EXISTS FOR (l:IngestLock) REQUIRE l.key IS UNIQUE
