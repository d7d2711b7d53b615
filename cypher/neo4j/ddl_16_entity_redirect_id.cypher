// Unique EntityRedirect.id (the key of an entity merged into another). Params: none.
CREATE CONSTRAINT entity_redirect_id IF NOT EXISTS FOR (r:EntityRedirect) REQUIRE r.id IS UNIQUE
