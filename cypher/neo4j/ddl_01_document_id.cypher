// Unique Document.id (constraint + backing index). Params: none.
CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE
