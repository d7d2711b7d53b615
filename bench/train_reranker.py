"""Fit the feature reranker's weights (app/retrieval/rerank_features.py) and score held-out questions.

Runs the retrieval pipeline's own pure functions in memory, without a store: the corpus is chunked like
ingest, embedded with the configured model (vectors cached under ``--cache``), BM25 is the in-process
index, entities come from the heuristic extractor, and the multi-hop signals and features from
``app.retrieval.multihop`` / ``rerank_features``. Every candidate of a question is one example (label:
its paragraph is a supporting one); the model is a class-balanced logistic regression (scikit-learn,
already installed with sentence-transformers; only this script needs it).

    .venv/bin/python bench/hotpot_dev500.py /tmp/hp500    # the 500-question sample (bench/datasets)
    .venv/bin/python bench/train_reranker.py \\
        --train hotpotqa:/work/shared/data/hotpotqa-train100 --train hotpotqa:/tmp/hp500:0:250 \\
        --test hotpotqa:/tmp/hp500:250:500 --cache /tmp/reranker_cache

A dataset is ``KIND:PATH[:FIRST:LAST]`` (question slice); KIND as ``neorag eval retrieval --dataset``.
Prints the weights as Python to paste into rerank_features.py, and recall@2/5/10 per test set for the
fitted weights and for the weights in the code. Then the pair stage (``app/retrieval/pairs.py``): with the
reranker weights in the code, every pair of a training question's ``--pair-top`` best documents is one
example (label: both supporting), a plain logistic regression gives ``PAIR_WEIGHTS``, and each test set
is scored with the pair stage off, with the fitted pair weights and with those in the code.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.retrieval_eval import load_dataset  # noqa: E402
from app.retrieval.bm25 import SparseBM25  # noqa: E402
from app.retrieval.entities import question_keys  # noqa: E402
from app.retrieval.expand import Pool  # noqa: E402
from app.retrieval.graph_index import EntityGraph  # noqa: E402
from app.retrieval.hybrid import MIN_CANDIDATES  # noqa: E402
from app.retrieval.multihop import MultihopParams, Signals, first_stage, hop_two, ppr_of, title_matches  # noqa: E402
from app.retrieval.pairs import (  # noqa: E402
    PAIR_FEATURES,
    PAIR_WEIGHTS,
    choose_pair,
    logit,
    pair_rows,
    term_weights,
)
from app.retrieval.rerank_features import BIAS, FEATURES, WEIGHTS, feature_vector, model_score  # noqa: E402
from app.retrieval.scoring import Weights, score  # noqa: E402
from app.retrieval.text import query_terms, tokenize  # noqa: E402
from ingest.chunk import chunk_document  # noqa: E402
from ingest.entities import extract_heuristic  # noqa: E402
from ingest.load import load_file  # noqa: E402

TOP_K = 20  # as `neorag eval retrieval`
OVERSAMPLE = 4


@dataclass
class Corpus:
    """Chunks, their vectors, BM25, entity graph, and the questions of one dataset slice."""

    questions: list[tuple[str, set[str]]]
    titles: list[str]
    tokens: list[set[str]]
    vectors: np.ndarray
    qvectors: np.ndarray
    bm25: SparseBM25
    graph: EntityGraph


def _cached(cache: Path, texts: list[str], encode: object, tag: str) -> np.ndarray:
    key = hashlib.sha1(("\x1f".join(texts) + tag).encode()).hexdigest()[:16]
    path = cache / f"{tag}-{key}.npy"
    if path.exists():
        return np.load(path)
    arr = np.asarray(encode(texts), dtype=np.float32)  # type: ignore[operator]
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, arr)
    return arr


def load(spec: str, embedder: object, cache: Path) -> Corpus:
    kind, path, *rng = spec.split(":")
    questions, corpus_path = load_dataset(kind, Path(path))
    if rng:
        questions = questions[int(rng[0]):int(rng[1])]
    chunks = [c for d in load_file(corpus_path).docs for c in chunk_document(d)]
    model = getattr(embedder, "model_name", "model")
    vectors = _cached(cache, [c.text for c in chunks], embedder.encode_raw, f"{model}-p")  # type: ignore[attr-defined]
    qvectors = _cached(cache, [q.question for q in questions], embedder.encode_raw, f"{model}-q")  # type: ignore[attr-defined]
    bm25 = SparseBM25([str(i) for i in range(len(chunks))], [f"{c.title} {c.text}" for c in chunks])
    rows = [{"id": str(i), "title": c.title, "text": c.text,
             "entities": [m.key for m in extract_heuristic(c.text)]} for i, c in enumerate(chunks)]
    return Corpus([(q.question, set(q.support_titles)) for q in questions], [c.title for c in chunks],
                  [set(tokenize(f"{c.title} {c.text}")) for c in chunks], vectors, qvectors, bm25,
                  EntityGraph.build(rows))


def candidates(corpus: Corpus, qi: int, p: MultihopParams = MultihopParams(), max_nodes: int = 120) -> Pool:
    """The default pipeline's candidates of question ``qi`` with every signal set (as retrieve does)."""
    question = corpus.questions[qi][0]
    raw = (1 + corpus.vectors @ corpus.qvectors[qi]) / 2
    k = max(MIN_CANDIDATES, TOP_K * OVERSAMPLE)
    pool = Pool(max_nodes)
    for rank, i in enumerate(np.argsort(-raw)[:k], 1):
        c = pool.get_or_add(str(i), max_nodes - len(pool.by_id))
        if c is not None:
            c.vector_rank, c.score_raw = rank, float(raw[i])
    bm25 = dict(corpus.bm25.search(query_terms(question), k))
    for rank, (cid, value) in enumerate(bm25.items(), 1):
        c = pool.get_or_add(cid, max_nodes - len(pool.by_id))
        if c is not None:
            c.bm25_rank, c.bm25 = rank, value
    keys = question_keys(question)
    signals = Signals(title=title_matches(corpus.graph, keys))
    for cid in sorted(signals.title):
        c = pool.get_or_add(cid, max_nodes - len(pool.by_id))
        if c is not None:
            c.title_match = 1.0
    for c in pool.by_id.values():
        c.score_raw = float(raw[int(c.id)])
    hop_two(corpus.graph, keys, first_stage(list(pool.by_id.values()), signals.title, p), p, signals)
    for scores in (signals.bridge, signals.ppr):
        for cid in sorted(scores, key=lambda key: (-scores[key], key)):
            c = pool.get_or_add(cid, max_nodes - len(pool.by_id))
            if c is not None:
                c.score_raw = float(raw[int(cid)])
    for c in pool.by_id.values():
        c.bridge = signals.bridge.get(c.id, 0.0)
        c.ppr = ppr_of(corpus.graph, signals, c.id)
        c.overlap = signals.overlap.get(c.id, 0.0)
    score(list(pool.by_id.values()), Weights())
    return pool


def examples(corpus: Corpus) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per question: (chunk rows, feature matrix, labels)."""
    out = []
    for qi, (_, support) in enumerate(corpus.questions):
        cands = list(candidates(corpus, qi).by_id.values())
        ids = np.array([int(c.id) for c in cands])
        x = np.array([feature_vector(c) for c in cands])
        y = np.array([corpus.titles[int(c.id)] in support for c in cands], dtype=float)
        out.append((ids, x, y))
    return out


def best_documents(corpus: Corpus, ids: np.ndarray, s: np.ndarray) -> tuple[list[str], list[int]]:
    """Distinct paragraph titles by score ``s`` and the candidate index standing for each."""
    titles: list[str] = []
    heads: list[int] = []
    for k in np.lexsort((ids, -s)):
        if corpus.titles[ids[k]] not in titles:
            titles.append(corpus.titles[ids[k]])
            heads.append(int(k))
    return titles, heads


def ranked_titles(corpus: Corpus, qi: int, ids: np.ndarray, x: np.ndarray, weights: tuple[float, ...],
                  bias: float, pair: tuple[float, ...] | None, pair_top: int) -> list[str]:
    """Distinct paragraph titles, best first: the reranker's order, the chosen pair first when ``pair``."""
    s = np.array([model_score(list(row), weights, bias) for row in x])
    titles, heads = best_documents(corpus, ids, s)
    if pair is None or len(heads) < 2:
        return titles
    head = heads[:pair_top]
    qw = term_weights(corpus.questions[qi][0], corpus.bm25.idf)
    choice = choose_pair([logit(s[k]) for k in head], [corpus.tokens[ids[k]] for k in head], qw, pair)
    assert choice is not None
    first, second = titles[choice.first], titles[choice.second]
    return [first, second] + [t for t in titles if t not in (first, second)]


def recall(corpus: Corpus, data: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
           weights: tuple[float, ...], bias: float, pair: tuple[float, ...] | None = None,
           pair_top: int = 8) -> list[float]:
    """Mean recall@2/5/10 of supporting paragraphs (distinct titles) under ``weights`` (and ``pair``)."""
    out = []
    for qi, ((ids, x, _), (_, support)) in enumerate(zip(data, corpus.questions, strict=True)):
        seen = ranked_titles(corpus, qi, ids, x, weights, bias, pair, pair_top)
        out.append([len(support & set(seen[:k])) / max(len(support), 1) for k in (2, 5, 10)])
    return [round(float(v), 4) for v in np.mean(out, axis=0)]


def pair_examples(corpus: Corpus, data: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                  pair_top: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of each question's ``pair_top`` best documents (reranker weights in the code):
    PAIR_FEATURES rows and labels (both supporting)."""
    rows, labels = [], []
    for (ids, x, y), (question, _) in zip(data, corpus.questions, strict=True):
        s = np.array([model_score(list(row)) for row in x])
        head = best_documents(corpus, ids, s)[1][:pair_top]
        qw = term_weights(question, corpus.bm25.idf)
        for i, j, f in pair_rows([logit(s[k]) for k in head], [corpus.tokens[ids[k]] for k in head], qw):
            rows.append(f)
            labels.append(y[head[i]] * y[head[j]])
    return np.array(rows), np.array(labels)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", action="append", required=True)
    ap.add_argument("--test", action="append", default=[])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/neorag_reranker_cache"))
    ap.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength")
    ap.add_argument("--pair-top", type=int, default=8, help="documents paired (NEORAG_RETRIEVAL_PAIR_TOP)")
    args = ap.parse_args()
    from sklearn.linear_model import LogisticRegression

    from app.services.embedder_choice import shared_embedder

    embedder = shared_embedder()
    corpora = [load(spec, embedder, args.cache) for spec in args.train]
    train = [examples(corpus) for corpus in corpora]
    x = np.concatenate([row[1] for data in train for row in data])
    y = np.concatenate([row[2] for data in train for row in data])
    model = LogisticRegression(C=args.c, max_iter=5000, class_weight="balanced").fit(x, y)
    weights = tuple(round(float(w), 3) for w in model.coef_.ravel())
    bias = round(float(model.intercept_[0]), 3)
    n_questions = sum(len(d) for d in train)
    print(f"# fitted on {len(y)} candidates ({int(y.sum())} supporting) of {n_questions} questions")
    print(f"WEIGHTS = {weights}  # {FEATURES}")
    print(f"BIAS = {bias}")
    pairs = [pair_examples(corpus, data, args.pair_top) for corpus, data in zip(corpora, train, strict=True)]
    px = np.concatenate([p[0] for p in pairs])
    py = np.concatenate([p[1] for p in pairs])
    pair_model = LogisticRegression(C=args.c, max_iter=5000).fit(px, py)
    pair = tuple(round(float(w), 2) for w in pair_model.coef_.ravel())
    print(f"# pairs: {len(py)} ({int(py.sum())} both supporting)")
    print(f"PAIR_WEIGHTS = {pair}  # {PAIR_FEATURES}")
    for spec in args.test:
        corpus = load(spec, embedder, args.cache)
        data = examples(corpus)
        print(f"{spec}: R@2/5/10 fitted {recall(corpus, data, weights, bias)}; in code: no pair stage "
              f"{recall(corpus, data, WEIGHTS, BIAS)}, fitted pairs "
              f"{recall(corpus, data, WEIGHTS, BIAS, pair, args.pair_top)}, pairs in code "
              f"{recall(corpus, data, WEIGHTS, BIAS, PAIR_WEIGHTS, args.pair_top)}")


if __name__ == "__main__":
    main()
