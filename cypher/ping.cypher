// Cheapest round trip (health probe). Params: none.
RETURN 1 AS ok
