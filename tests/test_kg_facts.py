"""Per-sample fact buckets (app/kg/facts.py): encoding, and a many-bucket sample answered like a dict.

The reference is a plain Python index of the same triples (what KG-R1's own server keeps in memory);
names carry quotes, backslashes, non-ASCII, a newline and mixed case, because the buckets travel as
JSON inside a Cypher string parameter.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from app.core.errors import BadInput
from app.kg.browse import write_sample_edges
from app.kg.cache import KGCache
from app.kg.facts import decode_facts, encode_facts, outgoing
from app.kg.keys import facts_bucket, facts_bucket_count, facts_key, fold
from app.kg.service import run_actions
from app.store.base import GraphStore
from ingest.kg.loader import load_records
from ingest.kg.records import KGRecord
from tests.support.ingest_graph import q

Triple = tuple[str, str, str]
ODD = ['Say "Hi"', 'a",["b', '\n["c",', "back\\slash", "Zoë Saldaña", "two\nlines", "MiXeD Case",
       "Ünïcode 東京", "m.0abc", "line\u2028separator", "next\x85line", "form\x0cfeed"]


def make_triples(n: int, seed: int = 5) -> list[Triple]:
    rng = random.Random(seed)
    names = ODD + [f"Entity {i} {rng.choice(['Lake', 'Park'])}" for i in range(300)]
    rels = [f"people.person.p{i}" for i in range(25)] + ["film.film.actor", "location.location.contains"]
    return sorted({(rng.choice(names), rng.choice(rels), rng.choice(names)) for _ in range(n)})


def test_encode_lists_every_triple_once_under_its_head_and_once_under_its_tail() -> None:
    triples = make_triples(1500)
    buckets, rows = encode_facts("d/s1", triples)
    assert buckets == facts_bucket_count(len(triples)) > 1
    decoded = {row["key"]: decode_facts(row["facts"]) for row in rows}
    out = sorted(t for row in rows for t in outgoing(row["facts"]))
    incoming = sorted((h, r, name) for b in decoded.values() for name, (_, _, in_rel, in_ent) in b.items()
                      for r, h in zip(in_rel, in_ent, strict=True))
    assert out == triples and incoming == triples
    for key, bucket in decoded.items():
        for name in bucket:
            assert key == facts_key("d/s1", facts_bucket(name, buckets))
    assert facts_bucket("MiXeD Case", buckets) == facts_bucket("  mixed case ", buckets)


def reference(triples: list[Triple]) -> tuple[dict[str, set[str]], dict[tuple[str, str], set[str]],
                                              dict[tuple[str, str], set[str]]]:
    rels: dict[str, set[str]] = defaultdict(set)
    tails: dict[tuple[str, str], set[str]] = defaultdict(set)
    heads: dict[tuple[str, str], set[str]] = defaultdict(set)
    for h, r, t in triples:
        rels[h].add(r)
        rels[t].add(r)
        tails[(h, r)].add(t)
        heads[(t, r)].add(h)
    return rels, tails, heads


def item(action: str, entity: str, relation: str | None = None) -> dict[str, str]:
    out = {"action_type": action, "dataset_name": "facts", "sample_id": "big", "entity_id": entity}
    if relation is not None:
        out["relation"] = relation
    return out


def test_many_bucket_sample_answers_every_entity_like_a_dict(store: GraphStore) -> None:
    triples = make_triples(2500)
    other = KGRecord("other", [("MiXeD Case", "x.y.z", "Q")])
    load_records(store, "facts", [KGRecord("big", triples), other])
    rels, tails, heads = reference(triples)
    items, expected = [], []
    for name in sorted(rels):
        items.append(item("get_relations", name))
        expected.append({"relations": sorted(rels[name])})
    for (h, r), ts in sorted(tails.items()):
        items.append(item("get_tail_entities", h, r))
        expected.append({"tail_entities": sorted(ts)})
    for (t, r), hs in sorted(heads.items()):
        items.append(item("get_head_entities", t, r))
        expected.append({"head_entities": sorted(hs)})
    for cache in (KGCache(0), KGCache(5_000_000)):  # uncached path, then cached
        answers = run_actions(store, cache, items)
        assert [a["results"][0] for a in answers] == expected
    folded = run_actions(store, KGCache(0), [item("get_relations", "  mixed CASE "),
                                             item("get_relations", "ZOË SALDAÑA"),
                                             item("get_relations", "not there")])
    assert folded[0]["results"][0] == {"relations": sorted(rels["MiXeD Case"])}  # not sample "other"'s x.y.z
    assert folded[1]["results"][0] == {"relations": sorted(rels["Zoë Saldaña"])}
    assert folded[2]["total_results"] == 0 and "error" not in folded[2]
    assert fold("  mixed CASE ") == fold("MiXeD Case")


def test_replace_of_a_many_bucket_sample_releases_every_old_triple(store: GraphStore) -> None:
    old, new = make_triples(1200, seed=1), make_triples(300, seed=2)
    load_records(store, "facts", [KGRecord("big", old)], sample_edges=True)
    edges = "MATCH ()-[r:KG_REL]->() RETURN count(r) AS n"
    sample_edges = "MATCH ()-[f:KG_FACT {sample: 'facts/big'}]->() RETURN count(f) AS n"
    assert q(store, edges) == q(store, sample_edges) == [{"n": len(old)}]
    load_records(store, "facts", [KGRecord("big", new)], replace=True, sample_edges=True)
    assert q(store, edges) == q(store, sample_edges) == [{"n": len(new)}]
    buckets = store.run("kg_facts_by_sample", {"samples": ["facts/big"]})
    assert len(buckets) <= facts_bucket_count(len(new))
    assert sorted(t for row in buckets for t in outgoing(row["facts"])) == new


def test_sample_edges_only_when_asked_or_browsed(store: GraphStore) -> None:
    """KG_FACT edges are not written at load unless asked (``sample_edges``); `write_sample_edges` (what
    `neorag kg browse` runs) writes one sample's on demand from its fact buckets: exactly the edges a load
    asked for them writes, rewritten (never doubled) when run again. KG actions answer the same either way."""
    triples = make_triples(50, seed=3)
    load_records(store, "off", [KGRecord("s", triples), KGRecord("t", triples[:10])])
    load_records(store, "on", [KGRecord("s", triples)], sample_edges=True)
    per_sample = "MATCH ()-[f:KG_FACT]->() RETURN f.sample AS s, count(f) AS n ORDER BY s"
    assert q(store, per_sample) == [{"s": "on/s", "n": len(triples)}]
    edges = ("MATCH (h)-[f:KG_FACT {sample: $k}]->(t) RETURN h.name AS h, f.relation AS r, t.name AS t "
             "ORDER BY h, r, t")
    for _ in range(2):
        assert write_sample_edges(store, "off", "s") == len(set(triples))
        assert q(store, edges, {"k": "off/s"}) == q(store, edges, {"k": "on/s"})
    assert q(store, per_sample) == [{"s": "off/s", "n": len(triples)}, {"s": "on/s", "n": len(triples)}]
    h, r, _ = triples[0]
    answers = [run_actions(store, KGCache(0), [{"action_type": "get_tail_entities", "entity_id": h,
                                                "relation": r, "dataset_name": d, "sample_id": "s"}])
               for d in ("off", "on")]
    assert answers[0][0]["results"] == answers[1][0]["results"]
    assert answers[0][0]["total_results"] > 0


def test_browsing_a_sample_that_is_not_loaded_is_a_404(store: GraphStore) -> None:
    load_records(store, "off", [KGRecord("s", make_triples(5))])
    for dataset, sample in (("off", "nope"), ("nope", "s")):
        with pytest.raises(BadInput) as err:
            write_sample_edges(store, dataset, sample)
        assert err.value.status == 404 and sample in str(err.value)
    assert q(store, "MATCH ()-[f:KG_FACT]->() RETURN count(f) AS n") == [{"n": 0}]
