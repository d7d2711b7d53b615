// Delete every relationship, then every node, 10,000 per transaction (tests, resets; bounded memory even where one node has a million relationships: a node's relationships are never deleted in one transaction with it). Params: none.
// @auto-commit: CALL { } IN TRANSACTIONS runs only in an auto-commit transaction
CALL () {
  MATCH ()-[r]->() RETURN r AS item
  UNION ALL
  MATCH (n) RETURN n AS item
}
CALL (item) { DETACH DELETE item } IN TRANSACTIONS OF 10000 ROWS
