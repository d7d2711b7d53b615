"""`graph_clear` on Neo4j deletes relationships first, then nodes, 10,000 per transaction, so a node with
very many relationships is never deleted in one transaction together with all of them. The old statement
(nodes with their relationships, 10,000 nodes per transaction) failed with MemoryPoolOutOfMemoryError on
the 100k-chunk graph of `bench/query.py --sizes 100000 --backend neo4j` (~1M MENTIONS on entities shared
by every chunk copy); the new one clears it in ~20 s (docs/BENCHMARKS.md, issue 23). That failure needs
the bench's size to show, so this test checks what the new statement must still do on a hub graph: leave
no node and no relationship behind, whatever the order the union yields them in."""

from __future__ import annotations

import neo4j
import pytest

from app.store.factory import make_store
from tests.support.backends import Backend

pytestmark = pytest.mark.backends("neo4j")
HUB_EDGES = 25_000


def test_graph_clear_empties_a_graph_with_a_hub_of_many_transactions(backend: Backend) -> None:
    settings = backend.settings()
    backend.claim(settings.graph_name)
    auth = (settings.neo4j_user, settings.neo4j_password)
    with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=auth,
                                    notifications_min_severity="OFF") as driver:
        with driver.session(database=settings.neo4j_database) as session:
            session.run("CREATE (h:Entity {id: 'hub'}) WITH h UNWIND range(1, $n) AS i "
                        "CREATE (h)<-[:MENTIONS {count: i}]-(c:Chunk {id: 'c' + i}) "
                        "WITH c, i WHERE i % 2 = 0 CREATE (c)-[:NEXT]->(:Chunk {id: 'd' + i})",
                        n=HUB_EDGES).consume()
            store = make_store(settings)
            try:
                store.run("graph_clear")
            finally:
                store.close()
            row = session.run("MATCH (n) WITH count(n) AS nodes "
                              "OPTIONAL MATCH ()-[r]->() RETURN nodes, count(r) AS rels").single()
            assert row is not None and (row["nodes"], row["rels"]) == (0, 0)
    backend.drop(settings.graph_name)
