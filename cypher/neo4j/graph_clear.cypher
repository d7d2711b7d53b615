// Delete every node and relationship, 10,000 nodes per transaction (tests, resets; bounded memory). Params: none.
// @auto-commit: CALL { } IN TRANSACTIONS runs only in an auto-commit transaction
MATCH (n)
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
