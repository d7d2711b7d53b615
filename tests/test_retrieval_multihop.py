"""Unit tests of the issue-17 scoring pieces: PPR, the entity graph, bridge signals, reranker features and
bounded co-occurrence (pure functions, no store)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from app.retrieval.graph_index import EntityGraph, TitleMatcher, title_keys
from app.retrieval.multihop import (
    AUTO_BONUS_CHUNKS_PER_TITLE,
    MultihopParams,
    Signals,
    auto_graph_mode,
    entity_hits,
    first_stage,
    hop_two,
    ppr_of,
    title_matches,
    titles_usable,
)
from app.retrieval.ppr import BipartiteWalk, personalized_pagerank, personalized_pagerank_push
from app.retrieval.rerank_features import (
    BIAS,
    BIAS_UNTITLED,
    FEATURES,
    WEIGHTS,
    WEIGHTS_UNTITLED,
    explain,
    feature_vector,
    model_score,
    model_weights,
    rank_feature,
    rerank_by_features,
)
from app.retrieval.rerank_trees import tree_model
from app.retrieval.scoring import Candidate
from ingest.cooccur import PairCount, association, cooccur_rows, top_partners


def _walk(pairs: list[tuple[int, int]], chunks: int, entities: int) -> BipartiteWalk:
    rows, cols = zip(*pairs, strict=True)
    m = sparse.csr_matrix((np.ones(len(pairs)), (rows, cols)), shape=(chunks, entities))
    return BipartiteWalk.from_incidence(m)


def test_ppr_prefers_close_chunks_and_reaches_two_hops_only_through_entities() -> None:
    # chunk 0 - e0 - chunk 1 - e1 - chunk 2; chunk 3 - e2 is a separate component
    walk = _walk([(0, 0), (1, 0), (1, 1), (2, 1), (3, 2)], chunks=4, entities=3)
    assert np.allclose(walk.to_entities.sum(axis=0), 1.0)  # every chunk spreads all its mass
    scores = personalized_pagerank(walk, {0: 1.0}, {}, alpha=0.5)
    assert scores[0] > scores[2] > 0 and scores[1] > scores[2]
    assert scores[3] == 0.0  # unreachable
    assert scores.sum() <= 1.0 + 1e-6
    # a chunk seed counts too, and seeds are additive
    both = personalized_pagerank(walk, {0: 1.0}, {3: 1.0}, alpha=0.5)
    assert both[3] > 0
    assert not personalized_pagerank(walk, {}, {}).any()
    with pytest.raises(ValueError):
        personalized_pagerank(walk, {0: 1.0}, {}, alpha=0.0)


def test_ppr_matches_the_closed_form_on_a_tiny_graph() -> None:
    # one chunk, one entity: p_e = a + (1-a) p_c, p_c = (1-a) p_e  ->  p_e = a / (1 - (1-a)^2)
    walk = _walk([(0, 0)], chunks=1, entities=1)
    a = 0.3
    p_c = personalized_pagerank(walk, {0: 1.0}, {}, alpha=a, iterations=200, tol=0.0)
    p_e = a / (1 - (1 - a) ** 2)
    assert p_c[0] == pytest.approx((1 - a) * p_e, rel=1e-4)


def _random_walk(chunks: int, entities: int, seed: int) -> BipartiteWalk:
    rng = np.random.default_rng(seed)
    pairs = {(int(rng.integers(chunks)), int(rng.integers(entities))) for _ in range(chunks * 4)}
    return _walk(sorted(pairs), chunks=chunks, entities=entities)


def _dense(walk: BipartiteWalk, pushed) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = np.zeros(walk.chunks)
    out[pushed.rows] = pushed.scores
    return out


@pytest.mark.parametrize("eps", [1e-4, 1e-6])
def test_push_ppr_is_within_its_tolerance_of_the_exact_walk(eps: float) -> None:
    walk = _random_walk(400, 150, seed=7)
    entity_seeds, chunk_seeds = {3: 1.0, 40: 0.5}, {10: 0.8, 200: 0.2}
    exact = personalized_pagerank(walk, entity_seeds, chunk_seeds, alpha=0.5, iterations=300, tol=0.0)
    pushed = personalized_pagerank_push(walk, entity_seeds, chunk_seeds, alpha=0.5, eps=eps)
    error = np.abs(_dense(walk, pushed) - exact)
    assert np.all(error <= eps * np.maximum(walk.chunk_degree, 1) + 1e-7)
    assert pushed.pushes > 0 and np.all(pushed.scores > 0)
    top = set(np.argsort(-exact)[:10].tolist())
    assert top == set(np.argsort(-_dense(walk, pushed))[:10].tolist())


def test_push_ppr_stays_in_the_seeds_neighbourhood() -> None:
    # the same component beside a large unrelated one: the walk never enters it and does the same work
    small = [(0, 0), (1, 0), (1, 1), (2, 1), (3, 2)]
    big = [(4 + i, 3 + i // 3) for i in range(3000)]
    alone = personalized_pagerank_push(_walk(small, 4, 3), {0: 1.0}, {}, eps=1e-6)
    beside = personalized_pagerank_push(_walk(small + big, 3004, 1003), {0: 1.0}, {}, eps=1e-6)
    assert beside.rows.tolist() == alone.rows.tolist() == [0, 1, 2]  # chunk 3 is not reachable from e0
    assert beside.pushes == alone.pushes
    assert np.allclose(beside.scores, alone.scores)
    coarse = personalized_pagerank_push(_walk(small, 4, 3), {0: 1.0}, {}, eps=1e-2)
    assert coarse.pushes < alone.pushes


def test_push_ppr_matches_the_closed_form_and_refuses_bad_parameters() -> None:
    walk = _walk([(0, 0)], chunks=1, entities=1)
    a = 0.3
    pushed = personalized_pagerank_push(walk, {0: 1.0}, {}, alpha=a, eps=1e-10, max_rounds=500)
    assert pushed.scores[0] == pytest.approx((1 - a) * a / (1 - (1 - a) ** 2), rel=1e-6)
    empty = personalized_pagerank_push(walk, {}, {0: 0.0})
    assert empty.rows.size == 0 and empty.pushes == 0
    for bad in ({"alpha": 0.0}, {"alpha": 1.5}, {"eps": 0.0}):
        with pytest.raises(ValueError):
            personalized_pagerank_push(walk, {0: 1.0}, {}, **bad)  # type: ignore[arg-type]


def test_title_keys_and_matcher_find_capitalised_titles_only() -> None:
    assert title_keys("Lilu (mythology)") == ["lilu", "lilu mythology"]
    assert title_keys(None) == []
    m = TitleMatcher({"Young, New South Wales": title_keys("Young, New South Wales"),
                      "Two Dollar Radio": title_keys("Two Dollar Radio")})
    found = m.find("She was born in Young, New South Wales. Published by Two Dollar Radio in 2010.")
    assert found == set(title_keys("Young, New South Wales")) | set(title_keys("Two Dollar Radio"))
    assert m.find("a young new south wales fan") == set()  # lower-case words never start a title


def _graph() -> EntityGraph:
    return EntityGraph.build([
        {"id": "c1", "title": "Grace Krilanovich", "text": "Her novel was published by Two Dollar Radio.",
         "entities": ["grace krilanovich", "american"]},
        {"id": "c2", "title": "Two Dollar Radio", "text": "Two Dollar Radio is based in Columbus, Ohio.",
         "entities": ["columbus", "ohio"]},
        {"id": "c3", "title": "Columbus Crew", "text": "A soccer club.",
         "entities": ["columbus", "american"]},
    ])


def test_entity_graph_links_a_chunk_to_the_titles_its_text_names() -> None:
    g = _graph()
    c1, c2 = g.row["c1"], g.row["c2"]
    two_dollar = g.entity_col["two dollar radio"]
    assert two_dollar in g.chunk_entities(c1) and two_dollar in g.chunk_entities(c2)
    assert g.titled[two_dollar] == [c2]
    assert title_matches(g, ["grace krilanovich", "novel"]) == {"c1"}
    assert g.freq[g.entity_col["american"]] == 2


def _id_titled_graph() -> EntityGraph:
    """The same three chunks with their titles replaced by ids (no title is a name)."""
    return EntityGraph.build([{**row, "title": f"p{i:06d}"} for i, row in enumerate([
        {"id": "c1", "text": "Her novel was published by Two Dollar Radio.",
         "entities": ["grace krilanovich", "american"]},
        {"id": "c2", "text": "Two Dollar Radio is based in Columbus, Ohio.",
         "entities": ["columbus", "ohio"]},
        {"id": "c3", "text": "A soccer club.", "entities": ["columbus", "american"]},
    ], 1)])


def test_title_links_tell_names_from_ids_and_file_names() -> None:
    g = _graph()  # c1 names "Two Dollar Radio" (c2's title); c2 names its own title, which does not count
    assert g.title_links == pytest.approx(1 / 3) and titles_usable(g)
    ids = _id_titled_graph()
    assert ids.title_links == 0.0 and not titles_usable(ids)
    one_file = EntityGraph.build([  # one document's chunks naming their own (file name) title
        {"id": f"k{i}", "title": "Guide", "doc_id": "guide.md", "text": "The Guide says: rest.",
         "entities": []} for i in range(3)])
    assert one_file.title_links == 0.0 and not titles_usable(one_file)
    assert EntityGraph.build([]).title_links == 0.0


def _file_graph(files: int, chunks_each: int, named: bool = False) -> EntityGraph:
    """``files`` documents of ``chunks_each`` chunks titled by their file name; ``named``: each chunk's text
    names the next file's title, as Wikipedia passages name other articles."""
    titles = [f"Meeting {chr(65 + f)}" for f in range(files)]
    return EntityGraph.build([
        {"id": f"f{f}c{c}", "title": titles[f], "doc_id": f"doc{f}",
         "text": f"On {titles[(f + 1) % files]}." if named else "We agreed on the budget.", "entities": []}
        for f in range(files) for c in range(chunks_each)])


def test_auto_graph_mode_runs_bonus_only_where_titles_are_file_names_of_long_documents() -> None:
    t = int(AUTO_BONUS_CHUNKS_PER_TITLE)
    transcripts = _file_graph(3, t)  # titles no other document names, each shared by t chunks
    assert transcripts.chunks_per_title == t and auto_graph_mode(transcripts) == "bonus"
    short = _file_graph(3, t - 1)  # the same under the threshold
    assert short.chunks_per_title == t - 1 and auto_graph_mode(short) == "multihop"
    named = _file_graph(3, t, named=True)  # long, but titles are names other documents use
    assert titles_usable(named) and auto_graph_mode(named) == "multihop"
    # passage corpora: Wikipedia titles, or ids for titles
    assert auto_graph_mode(_graph()) == "multihop" and auto_graph_mode(_id_titled_graph()) == "multihop"
    assert _id_titled_graph().chunks_per_title == 1.0
    untitled = EntityGraph.build([{"id": f"u{i}", "text": "x", "entities": []} for i in range(30)])
    assert untitled.chunks_per_title == 1.0 and auto_graph_mode(untitled) == "multihop"
    assert EntityGraph.build([]).chunks_per_title == 1.0


def test_entity_hits_are_the_chunks_of_highest_overlap() -> None:
    signals = Signals(overlap={"a": 0.5, "b": 1.0, "c": 0.5})
    assert entity_hits(signals, 2) == {"b": 1.0, "a": 0.5} and entity_hits(signals, 0) == {}


def test_without_usable_titles_the_bridge_is_off_but_the_walk_still_seeds_from_the_first_hop() -> None:
    g = _graph()
    cands = [Candidate("c1", score_raw=0.9, bm25=1.0), Candidate("c3", score_raw=0.6, bm25=0.0)]
    first = first_stage(cands, set(), MultihopParams())
    signals = Signals()
    hop_two(g, [], first, MultihopParams(bridge_n=1, use_titles=False), signals)
    assert signals.bridge == {} and signals.ppr["c1"] == 1.0  # chunk seeds only: no question entity


def test_untitled_corpus_scores_with_the_untitled_weights() -> None:
    assert model_weights() == (WEIGHTS, BIAS) and model_weights(True) == (WEIGHTS_UNTITLED, BIAS_UNTITLED)
    assert len(WEIGHTS_UNTITLED) == len(FEATURES) and WEIGHTS_UNTITLED != WEIGHTS
    title_features = ("title", "bridge", "bridge_v", "title_v", "bridge_b")  # always 0 without titles
    assert all(WEIGHTS_UNTITLED[FEATURES.index(f)] == 0.0 for f in title_features)
    c = Candidate("x", score_raw=0.8, bm25=0.5, vector_rank=1, bm25_rank=4)
    c.base_norm, c.ppr, c.overlap = 1.0, 0.25, 0.5
    rerank_by_features([c], untitled=True, trees=False)
    assert c.final == pytest.approx(model_score(feature_vector(c), WEIGHTS_UNTITLED, BIAS_UNTITLED))
    explain([c], untitled=True, trees=False)
    assert c.contributions == pytest.approx(
        {"bias": BIAS_UNTITLED, **{f: w * v for f, w, v in zip(FEATURES, WEIGHTS_UNTITLED, feature_vector(c),
                                                                strict=True)}}, abs=1e-6)
    rerank_by_features([c], trees=False)
    assert c.final == pytest.approx(model_score(feature_vector(c)))
    rerank_by_features([c], untitled=True)  # the default: the trees fitted without titles
    x = np.array([feature_vector(c)])
    assert c.final == pytest.approx(float(tree_model(True).probabilities(x)[0]))
    assert c.final != pytest.approx(float(tree_model().probabilities(x)[0]))


def test_bridge_strength_is_relative_to_the_best_first_stage_chunk_even_one_the_graph_lacks() -> None:
    g = _graph()  # "new" was ingested after the graph's last build: a stale graph does not know it
    first = {"new": 2.0, "c1": 1.0}
    signals = Signals()
    hop_two(g, [], first, MultihopParams(bridge_n=2), signals)
    assert signals.bridge == {"c2": 0.5}  # c1 is only half as good as the best first-stage chunk


def test_hop_two_bridges_from_the_first_hop_and_walks_from_question_entities() -> None:
    g = _graph()
    cands = [Candidate("c1", score_raw=0.9, bm25=1.0), Candidate("c3", score_raw=0.6, bm25=0.0)]
    first = first_stage(cands, {"c1"}, MultihopParams())
    assert first["c1"] == pytest.approx(1.0 + 0.4 + 0.3) and first["c3"] == pytest.approx(0.0)
    signals = Signals(title={"c1"})
    hop_two(g, ["grace krilanovich"], first, MultihopParams(bridge_n=1), signals)
    assert signals.bridge == {"c2": 1.0} and signals.bridge_via == {"c2": "c1"}
    assert signals.ppr["c1"] == 1.0 and 0 < ppr_of(g, signals, "c2") < 1.0
    assert signals.overlap == {"c1": 1.0}
    off = Signals()
    hop_two(g, ["grace krilanovich"], first, MultihopParams(bridge_n=0, use_ppr=False), off)
    assert off.bridge == {} and off.ppr == {} and ppr_of(g, off, "c2") == 0.0


def test_feature_vector_order_and_model_monotonic_in_positive_features() -> None:
    c = Candidate("x", score_raw=0.8, bm25=0.5, vector_rank=1, bm25_rank=4)
    c.base_norm, c.title_match, c.bridge, c.ppr, c.overlap = 1.0, 1.0, 0.5, 0.25, 0.0
    x = feature_vector(c)
    assert len(x) == len(FEATURES) == len(WEIGHTS)
    assert dict(zip(FEATURES, x, strict=True)) == {
        "vector_n": 1.0, "vector": 0.8, "bm25": 0.5, "title": 1.0, "bridge": 0.5, "ppr": 0.25,
        "overlap": 0.0, "vector_rk": 1.0, "bm25_rk": 0.5, "bridge_v": 0.5, "title_v": 1.0, "bridge_b": 0.25,
        "ppr_v": 0.25}
    assert rank_feature(None) == 0.0 and rank_feature(10_000) == 0.0 and rank_feature(4) == 0.5
    for i, w in enumerate(WEIGHTS):  # the model is linear in its feature vector
        up = list(x)
        up[i] += 0.1
        assert (model_score(up) > model_score(x)) == (w > 0)
    c.bridge = 0.0
    assert model_score(feature_vector(c)) < model_score(x)  # a bridged chunk ranks higher
    assert 0.0 < model_score(x) < 1.0


def test_bounded_cooccurrence_keeps_top_k_partners_by_count_times_pmi() -> None:
    # "a" and "b" share 3 of 4 chunks: the strongest association; "c" is everywhere (a hub)
    chunks = [["a", "b", "c"], ["a", "b", "c"], ["a", "b", "c", "d"], ["c", "d"], ["c", "e"], ["c", "e"]]
    rows = cooccur_rows(chunks, top_k=1, min_count=2)
    pairs = {(r["a"], r["b"]) for r in rows}
    assert ("a", "b") in pairs and all(a < b for a, b in pairs)
    assert not any("c" in p for p in pairs)  # PMI of a hub is <= 0
    ab = next(r for r in rows if (r["a"], r["b"]) == ("a", "b"))
    assert ab["count"] == 3 and ab["pmi"] == pytest.approx(math.log(3 * 6 / (3 * 3)), abs=1e-4)
    assert cooccur_rows(chunks, top_k=0, min_count=1) == []
    unbounded = cooccur_rows(chunks, top_k=100, min_count=1)
    assert len(unbounded) >= len(rows)
    # each entity keeps at most top_k partners of its own choosing
    many = [PairCount("x", f"y{i}", 2, 2, 2) for i in range(5)]
    chosen = top_partners(many, total_chunks=100, top_k=2, min_count=2)
    assert len(chosen) == 2 and association(many[0], 100)[0] > 0


def test_ppr_top_zero_switches_the_walk_off_and_ablations_switch_signals_off() -> None:
    from types import SimpleNamespace

    from app.core.config import Settings
    from app.retrieval.multihop_stage import params_from_settings

    on = params_from_settings(SimpleNamespace(settings=Settings()))  # type: ignore[arg-type]
    assert on.use_ppr and on.bridge_n == 5 and on.ppr_eps == 1e-5
    fine = params_from_settings(SimpleNamespace(settings=Settings(retrieval_ppr_eps=1e-7)))  # type: ignore[arg-type]
    assert fine.ppr_eps == 1e-7
    with pytest.raises(ValueError):
        Settings(retrieval_ppr_eps=0)
    off = params_from_settings(SimpleNamespace(settings=Settings(retrieval_ppr_top=0)))  # type: ignore[arg-type]
    assert not off.use_ppr
    ablated = params_from_settings(SimpleNamespace(settings=Settings()),  # type: ignore[arg-type]
                                   frozenset({"bridge", "ppr"}))
    assert ablated.bridge_n == 0 and not ablated.use_ppr
    assert on.use_titles
    untitled = params_from_settings(SimpleNamespace(settings=Settings()), untitled=True)  # type: ignore[arg-type]
    assert not untitled.use_titles and untitled.bridge_n == 5 and untitled.use_ppr  # PPR keeps its seeds
