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

A dataset is ``KIND:PATH[:FIRST:LAST]`` (question slice) or ``KIND:POOL:fit`` / ``KIND:POOL:heldout`` (the
halves of a ``bench/train_pools.py`` pool, from its pool.json); KIND as ``neorag eval retrieval --dataset``.
Supporting paragraphs are matched like the evaluation: by document id where the question carries their
texts (MuSiQue, whose paragraphs share titles), else by title; recall counts distinct documents.
A corpus without usable titles (``app.retrieval.multihop.titles_usable``: titles that are ids or file
names) runs like the app: no title or bridge signal, and "in code" means ``WEIGHTS_UNTITLED`` /
``PAIR_WEIGHTS_UNTITLED``; the training sets must all be of one kind, and the printed names say which.

How to fit is chosen on the training sets alone (``bench/reranker_cv.py``: two-fold cross-validation
inside them, macro recall): every candidate weighing the same or every training set weighing the same, and
refitting the pair stage (``app/retrieval/pairs.py``: with the fitted reranker weights, every pair of a
training question's ``--pair-top`` best documents is one example, label both supporting, a plain logistic
regression) or keeping its weights in the code. The chosen variant is fitted on all training questions and
printed as Python to paste into rerank_features.py / pairs.py. Each test set gets recall@2/5/10 of the
single retrievers (vector, BM25: top 40, as the evaluation), of the weights in the code (reranker alone
and with the pair stage) and of the fitted ones (reranker alone, with the pairs in the code, with the
fitted pairs = the refit); ``--json-out`` keeps them.

    P=/work/data24/pools
    .venv/bin/python bench/train_reranker.py --train 2wiki:$P/2wiki_train1000:fit \\
        --train hotpotqa:$P/hotpotqa_train100:fit --train musique:$P/musique_train150:fit \\
        --test 2wiki:$P/2wiki_train1000:heldout --test hotpotqa:$P/hotpotqa_train100:heldout \\
        --test musique:$P/musique_train150:heldout --cache /work/data24/i24b/cache
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.retrieval_eval import EvalQuestion, load_dataset  # noqa: E402
from app.retrieval.bm25 import SparseBM25  # noqa: E402
from app.retrieval.entities import question_keys  # noqa: E402
from app.retrieval.expand import Pool  # noqa: E402
from app.retrieval.graph_index import EntityGraph  # noqa: E402
from app.retrieval.hybrid import MIN_CANDIDATES  # noqa: E402
from app.retrieval.multihop import (  # noqa: E402
    UNTITLED_ENTITY_TOP,
    MultihopParams,
    Signals,
    entity_hits,
    first_stage,
    hop_two,
    ppr_of,
    title_matches,
    titles_usable,
)
from app.retrieval.pairs import (  # noqa: E402
    PAIR_FEATURES,
    PAIR_WEIGHTS,
    PAIR_WEIGHTS_UNTITLED,
    choose_pair,
    logit,
    pair_rows,
    term_weights,
)
from app.retrieval.rerank_features import FEATURES, LinearModel, feature_vector, reranker_model  # noqa: E402
from app.retrieval.rerank_trees import (  # noqa: E402
    MODELS,
    TreeModel,
    embedding_model_path,
    model_path,
    tree_model,
)
from app.retrieval.scoring import Weights, score  # noqa: E402
from app.retrieval.text import query_terms, tokenize  # noqa: E402
from app.services.packaged_models import packaged  # noqa: E402
from bench.reranker_cv import VARIANTS, Variant, best, cross_validate, macro, set_weights  # noqa: E402
from bench.reranker_trees import fit_trees  # noqa: E402
from ingest.chunk import chunk_document  # noqa: E402
from ingest.entities import extract_heuristic  # noqa: E402
from ingest.load import load_file, record_doc_id  # noqa: E402

TOP_K = 20  # as `neorag eval retrieval`
OVERSAMPLE = 4
DEPTH2_RESERVE = 20  # NEORAG_RETRIEVAL_DEPTH2_RESERVE: vector and BM25 hits fill max_nodes - this
SINGLE_K = 40  # the evaluation's single retrievers
Data = list[tuple[np.ndarray, np.ndarray, np.ndarray]]
# by Corpus.untitled (--entity-top overrides entity_top)
PARAMS = {False: MultihopParams(), True: MultihopParams(use_titles=False, entity_top=UNTITLED_ENTITY_TOP)}


@dataclass
class Corpus:
    """Chunks, their vectors, BM25, entity graph, and the questions of one dataset slice."""

    questions: list[tuple[str, set[str]]]  # question, its supporting documents (doc ids)
    docs: list[str]  # each chunk's document (doc id)
    tokens: list[set[str]]
    vectors: np.ndarray
    qvectors: np.ndarray
    bm25: SparseBM25
    graph: EntityGraph

    @property
    def untitled(self) -> bool:
        """No usable titles: the app's multi-hop stage leaves title and bridge out."""
        return not titles_usable(self.graph)


def _cached(cache: Path, texts: list[str], encode: object, tag: str) -> np.ndarray:
    key = hashlib.sha1(("\x1f".join(texts) + tag).encode()).hexdigest()[:16]
    path = cache / f"{tag}-{key}.npy"
    if path.exists():
        return np.load(path)
    arr = np.asarray(encode(texts), dtype=np.float32)  # type: ignore[operator]
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, arr)
    return arr


def question_slice(path: Path, rng: list[str], count: int) -> tuple[int, int]:
    """(first, last) question of a spec's range: FIRST:LAST, or a pool's ``fit`` / ``heldout`` half."""
    if not rng:
        return 0, count
    if rng[0] in ("fit", "heldout"):
        fit = int(json.loads((path / "pool.json").read_text(encoding="utf-8"))["fit"])
        return (0, fit) if rng[0] == "fit" else (fit, count)
    return int(rng[0]), int(rng[1])


def support_docs(q: EvalQuestion, doc_ids: set[str], by_title: dict[str, set[str]]) -> set[str]:
    """The question's supporting documents, as the evaluation matches them: the doc id of (title, text)
    when it is in the corpus, else every document of that title."""
    out: set[str] = set()
    for j, title in enumerate(q.support_titles):
        did = record_doc_id(title, q.support_texts[j]) if j < len(q.support_texts) else None
        out |= {did} if did in doc_ids else by_title.get(title, {f"title:{title}"})
    return out


def load(spec: str, embedder: object, cache: Path) -> Corpus:
    kind, path, *rng = spec.split(":")
    questions, corpus_path = load_dataset(kind, Path(path))
    first, last = question_slice(Path(path), rng, len(questions))
    questions = questions[first:last]
    chunks = [c for d in load_file(corpus_path).docs for c in chunk_document(d)]
    model = getattr(embedder, "model_name", "model")
    vectors = _cached(cache, [c.text for c in chunks], embedder.encode_raw, f"{model}-p")  # type: ignore[attr-defined]
    # questions as the app encodes them (e5: with its "query: " prefix; MiniLM: the same as passages)
    qvectors = _cached(cache, [q.question for q in questions], embedder.encode_queries, f"{model}-query")  # type: ignore[attr-defined]
    bm25 = SparseBM25([str(i) for i in range(len(chunks))], [f"{c.title} {c.text}" for c in chunks])
    rows = [{"id": str(i), "title": c.title, "doc_id": c.doc_id, "text": c.text,
             "entities": [m.key for m in extract_heuristic(c.text)]} for i, c in enumerate(chunks)]
    by_title: dict[str, set[str]] = {}
    for c in chunks:
        by_title.setdefault(c.title, set()).add(c.doc_id)
    doc_ids = {c.doc_id for c in chunks}
    return Corpus([(q.question, support_docs(q, doc_ids, by_title)) for q in questions],
                  [c.doc_id for c in chunks], [set(tokenize(f"{c.title} {c.text}")) for c in chunks],
                  vectors, qvectors, bm25, EntityGraph.build(rows))


def candidates(corpus: Corpus, qi: int, max_nodes: int = 120) -> Pool:
    """The default pipeline's candidates of question ``qi`` with every signal set (as retrieve does)."""
    question = corpus.questions[qi][0]
    p = PARAMS[corpus.untitled]
    raw = (1 + corpus.vectors @ corpus.qvectors[qi]) / 2
    k = max(MIN_CANDIDATES, TOP_K * OVERSAMPLE)
    pool = Pool(max_nodes)
    direct = max_nodes - DEPTH2_RESERVE  # retrieve keeps room for the graph's candidates
    for rank, i in enumerate(np.argsort(-raw)[:k], 1):
        c = pool.get_or_add(str(i), direct - len(pool.by_id))
        if c is not None:
            c.vector_rank, c.score_raw = rank, float(raw[i])
    bm25 = dict(corpus.bm25.search(query_terms(question), k))
    for rank, (cid, value) in enumerate(bm25.items(), 1):
        c = pool.get_or_add(cid, direct - len(pool.by_id))
        if c is not None:
            c.bm25_rank, c.bm25 = rank, value
    keys = question_keys(question)
    signals = Signals(title=set() if corpus.untitled else title_matches(corpus.graph, keys))
    for cid in sorted(signals.title):
        c = pool.get_or_add(cid, max_nodes - len(pool.by_id))
        if c is not None:
            c.title_match = 1.0
    for c in pool.by_id.values():
        c.score_raw = float(raw[int(c.id)])
    hop_two(corpus.graph, keys, first_stage(list(pool.by_id.values()), signals.title, p), p, signals)
    for scores in (signals.bridge, signals.ppr, entity_hits(signals, p.entity_top)):
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


def examples(corpus: Corpus) -> Data:
    """Per question: (chunk rows, feature matrix, labels)."""
    out = []
    for qi, (_, support) in enumerate(corpus.questions):
        cands = list(candidates(corpus, qi).by_id.values())
        ids = np.array([int(c.id) for c in cands])
        x = np.array([feature_vector(c) for c in cands])
        y = np.array([corpus.docs[int(c.id)] in support for c in cands], dtype=float)
        out.append((ids, x, y))
    return out


def best_documents(corpus: Corpus, ids: np.ndarray, s: np.ndarray) -> tuple[list[str], list[int]]:
    """Distinct documents by score ``s`` and the candidate index standing for each."""
    docs: list[str] = []
    heads: list[int] = []
    for k in np.lexsort((ids, -s)):
        if corpus.docs[ids[k]] not in docs:
            docs.append(corpus.docs[ids[k]])
            heads.append(int(k))
    return docs, heads


Reranker = LinearModel | TreeModel


def ranked_docs(corpus: Corpus, qi: int, ids: np.ndarray, x: np.ndarray, reranker: Reranker,
                pair: tuple[float, ...] | None, pair_top: int) -> list[str]:
    """Distinct documents, best first: the reranker's order, the chosen pair first when ``pair``."""
    s = reranker.probabilities(x)
    docs, heads = best_documents(corpus, ids, s)
    if pair is None or len(heads) < 2:
        return docs
    head = heads[:pair_top]
    qw = term_weights(corpus.questions[qi][0], corpus.bm25.idf)
    choice = choose_pair([logit(s[k]) for k in head], [corpus.tokens[ids[k]] for k in head], qw, pair)
    assert choice is not None
    first, second = docs[choice.first], docs[choice.second]
    return [first, second] + [d for d in docs if d not in (first, second)]


def recall_of(corpus: Corpus, ranked: list[list[str]]) -> list[float]:
    """Mean recall@2/5/10 of supporting documents over the questions' rankings (distinct documents)."""
    out = [[len(support & set(seen[:k])) / max(len(support), 1) for k in (2, 5, 10)]
           for seen, (_, support) in zip(ranked, corpus.questions, strict=True)]
    return [round(float(v), 4) for v in np.mean(out, axis=0)]


def recall(corpus: Corpus, data: Data, reranker: Reranker, pair: tuple[float, ...] | None = None,
           pair_top: int = 8) -> list[float]:
    """Mean recall@2/5/10 under ``reranker`` (and ``pair``)."""
    return recall_of(corpus, [ranked_docs(corpus, qi, ids, x, reranker, pair, pair_top)
                              for qi, (ids, x, _) in enumerate(data)])


def distinct(corpus: Corpus, rows: list[int]) -> list[str]:
    """Distinct documents of chunk rows, in order."""
    return list(dict.fromkeys(corpus.docs[r] for r in rows))


def single_retrievers(corpus: Corpus) -> dict[str, list[float]]:
    """Recall@2/5/10 of plain vector search and plain BM25 (their top SINGLE_K chunks)."""
    vec, lex = [], []
    for qi, (question, _) in enumerate(corpus.questions):
        raw = corpus.vectors @ corpus.qvectors[qi]
        vec.append(distinct(corpus, [int(i) for i in np.argsort(-raw)[:SINGLE_K]]))
        hits = corpus.bm25.search(query_terms(question), SINGLE_K)
        lex.append(distinct(corpus, [int(cid) for cid, _ in hits]))
    return {"vector": recall_of(corpus, vec), "bm25": recall_of(corpus, lex)}


def pair_examples(corpus: Corpus, data: Data, reranker: Reranker,
                  pair_top: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of each question's ``pair_top`` best documents (under ``reranker``): PAIR_FEATURES rows
    and labels (both supporting)."""
    rows, labels = [], []
    for (ids, x, y), (question, _) in zip(data, corpus.questions, strict=True):
        s = reranker.probabilities(x)
        head = best_documents(corpus, ids, s)[1][:pair_top]
        qw = term_weights(question, corpus.bm25.idf)
        for i, j, f in pair_rows([logit(s[k]) for k in head], [corpus.tokens[ids[k]] for k in head], qw):
            rows.append(f)
            labels.append(y[head[i]] * y[head[j]])
    return np.array(rows), np.array(labels)


# the embedding model's name (main sets it): trees fitted on its features ship as their own file
# (rerank_trees.model_path), and "trees in the code" are those the app would use with it
EMBEDDING: str | None = None


def code_models(untitled: bool) -> tuple[Reranker | None, Reranker, tuple[float, ...]]:
    """The app's shipped rerankers for a kind of corpus: (trees, None before the first fit; linear; pair
    weights)."""
    path = model_path(untitled, EMBEDDING)
    trees = tree_model(untitled, EMBEDDING) if path.exists() else None
    return trees, reranker_model(untitled, trees=False), PAIR_WEIGHTS_UNTITLED if untitled else PAIR_WEIGHTS


def report(spec: str, corpus: Corpus, data: Data, fitted: Reranker, pair: tuple[float, ...],
           pair_top: int) -> dict[str, object]:
    """Recall@2/5/10 of one test set: single retrievers, the models in the code, the fitted one."""
    trees, linear, code_pair = code_models(corpus.untitled)
    return {
        "spec": spec, "questions": len(corpus.questions), "untitled": corpus.untitled,
        "title_links": round(corpus.graph.title_links, 4), **single_retrievers(corpus),
        **({} if trees is None else {"code_no_pair": recall(corpus, data, trees),
                                     "code": recall(corpus, data, trees, code_pair, pair_top)}),
        "code_linear": recall(corpus, data, linear, code_pair, pair_top),
        "fitted_no_pair": recall(corpus, data, fitted),
        "fitted_code_pairs": recall(corpus, data, fitted, code_pair, pair_top),
        "fitted": recall(corpus, data, fitted, pair, pair_top),
    }


Model = tuple[Reranker, tuple[float, ...]]  # reranker, pair weights


def subset(corpus: Corpus, data: Data, idx: list[int]) -> tuple[Corpus, Data]:
    """The questions ``idx`` of a set (the corpus is shared)."""
    return replace(corpus, questions=[corpus.questions[i] for i in idx]), [data[i] for i in idx]


def fit(sets: list[tuple[Corpus, Data]], variant: Variant, c: float, pair_top: int) -> Model:
    """Boosted trees (``variant.trees``, bench/reranker_trees.py) or a class-balanced logistic regression
    over every candidate of ``sets``, then the pair weights under it (or those in the code), as
    ``variant`` says."""
    from sklearn.linear_model import LogisticRegression

    x = np.concatenate([row[1] for _, data in sets for row in data])
    y = np.concatenate([row[2] for _, data in sets for row in data])
    sw = set_weights([sum(len(row[2]) for row in data) for _, data in sets], variant.balance)
    reranker: Reranker
    if variant.trees:
        reranker = fit_trees(x, y, sw, FEATURES)
    else:
        model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced").fit(x, y, sample_weight=sw)
        reranker = LinearModel(tuple(round(float(w), 3) for w in model.coef_.ravel()),
                               round(float(model.intercept_[0]), 3))
    if not variant.fit_pairs:
        return reranker, PAIR_WEIGHTS_UNTITLED if sets[0][0].untitled else PAIR_WEIGHTS
    pairs = [pair_examples(corpus, data, reranker, pair_top) for corpus, data in sets]
    px = np.concatenate([p[0] for p in pairs])
    py = np.concatenate([p[1] for p in pairs])
    psw = set_weights([len(p[1]) for p in pairs], variant.balance)
    pair_model = LogisticRegression(C=c, max_iter=5000).fit(px, py, sample_weight=psw)
    return reranker, tuple(round(float(w), 2) for w in pair_model.coef_.ravel())


def choose(sets: list[tuple[Corpus, Data]], c: float, pair_top: int,
           variants: tuple[Variant, ...] = VARIANTS) -> tuple[Variant, dict[str, object]]:
    """Two-fold cross-validation inside the training sets (bench/reranker_cv.py): the best variant, and
    every variant's macro recall (the weights in the code too, for comparison)."""
    def score(model: Model, idx: list[list[int]]) -> list[list[float]]:
        parts = [subset(corpus, data, i) for (corpus, data), i in zip(sets, idx, strict=True)]
        return [recall(corpus, data, model[0], model[1], pair_top) for corpus, data in parts]

    sizes = [len(data) for _, data in sets]
    per_set = {v: cross_validate(sizes, lambda idx, v=v: fit(  # type: ignore[misc]
        [subset(corpus, data, i) for (corpus, data), i in zip(sets, idx, strict=True)], v, c, pair_top),
        score) for v in variants}
    untitled = sets[0][0].untitled
    trees, linear, code_pair = code_models(untitled)
    table: dict[str, object] = {v.name: {"macro": macro(r), "per_set": r} for v, r in per_set.items()}
    for name, reranker in (("trees in the code", trees), ("linear weights in the code", linear)):
        if reranker is None:
            continue
        r = cross_validate(sizes, lambda idx, m=reranker: (m, code_pair), score)  # type: ignore[misc]
        table[name] = {"macro": macro(r), "per_set": r}
    table["single retrievers"] = [single_retrievers(corpus) for corpus, _ in sets]
    return best({v: macro(r) for v, r in per_set.items()}), table


def main(argv: list[str] | None = None) -> dict[str, object]:
    """Fit, print and (``--json-out``) write; returns the report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", action="append", required=True)
    ap.add_argument("--test", action="append", default=[])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/neorag_reranker_cache"))
    ap.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength")
    ap.add_argument("--pair-top", type=int, default=8, help="documents paired (NEORAG_RETRIEVAL_PAIR_TOP)")
    ap.add_argument("--json-out", type=Path, help="write the weights and every test set's recall here")
    ap.add_argument("--embedding-model", help="embed with this model instead of the default (e.g. "
                    "multilingual-e5-small: the quality profile)")
    ap.add_argument("--model", choices=("linear", "trees"), help="only this kind of reranker takes part in "
                    "the choice (default: both)")
    ap.add_argument("--write-model", action="store_true",
                    help="write fitted trees into app/retrieval/models/ (else beside --json-out)")
    ap.add_argument("--entity-top", type=int, help="chunks of highest entity overlap joining the candidates "
                    "(MultihopParams.entity_top; default: the app's for each kind of corpus)")
    args = ap.parse_args(argv)
    if args.entity_top is not None:
        for untitled, p in list(PARAMS.items()):
            PARAMS[untitled] = replace(p, entity_top=args.entity_top)
    from app.services.embedder_choice import shared_embedder

    global EMBEDDING
    embedder = shared_embedder(args.embedding_model) if args.embedding_model else shared_embedder()
    EMBEDDING = embedder.model_name
    corpora = [load(spec, embedder, args.cache) for spec in args.train]
    kinds = {corpus.untitled for corpus in corpora}
    if len(kinds) != 1:
        sys.exit("the training sets mix corpora with and without usable titles: fit each kind on its own")
    untitled = kinds.pop()
    suffix = "_UNTITLED" if untitled else ""
    sets = [(corpus, examples(corpus)) for corpus in corpora]
    variants = tuple(v for v in VARIANTS if args.model in (None, "trees" if v.trees else "linear"))
    variant, cv = choose(sets, args.c, args.pair_top, variants)
    for name, r in cv.items():
        print(f"# cross-validated on the training sets: {name}: {r}")
    reranker, pair = fit(sets, variant, args.c, args.pair_top)
    n_questions = sum(len(data) for _, data in sets)
    print(f"# chosen: {variant.name}; fitted on {n_questions} questions")
    out: dict[str, object] = {"train": args.train, "variant": variant.name, "pair_weights": pair,
                              "entity_top": {"titled": PARAMS[False].entity_top,
                                             "untitled": PARAMS[True].entity_top},
                              "cross_validation": cv, "tests": []}
    if isinstance(reranker, TreeModel):
        # a packaged embedder's trees: their own file
        name = (embedding_model_path(untitled, EMBEDDING) if EMBEDDING and packaged(EMBEDDING)
                else model_path(untitled)).name
        target = (MODELS if args.write_model else args.json_out.parent if args.json_out else Path(".")) / name
        target.write_text(json.dumps(reranker.to_dict()), encoding="utf-8")
        print(f"# {reranker.trees} trees written to {target}")
        out["trees"] = str(target)
    else:
        print(f"WEIGHTS{suffix} = {reranker.weights}  # {FEATURES}")
        print(f"BIAS{suffix} = {reranker.bias}")
        out.update(weights=reranker.weights, bias=reranker.bias)
    print(f"PAIR_WEIGHTS{suffix} = {pair}  # {PAIR_FEATURES}")
    for spec in args.test:
        corpus = load(spec, embedder, args.cache)
        row = report(spec, corpus, examples(corpus), reranker, pair, args.pair_top)
        out["tests"].append(row)  # type: ignore[attr-defined]
        print(json.dumps(row))
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
