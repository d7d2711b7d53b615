// Wait until every index is online (after a bulk import built them over existing data). Params: $seconds int.
CALL db.awaitIndexes($seconds)
