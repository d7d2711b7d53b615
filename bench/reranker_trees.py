"""Fit the tree reranker (app/retrieval/rerank_trees.py) and turn scikit-learn's trees into its arrays.

Used by bench/train_reranker.py. The trees are scikit-learn's ``HistGradientBoostingClassifier`` (binary
log-loss; early stopping on a 10 % validation split of the training rows, seeded, so a refit gives the
same trees); positives and negatives weigh the same in total, like the linear model's
``class_weight="balanced"``. Only the exported arrays reach the app, which evaluates them with numpy.
"""

from __future__ import annotations

import numpy as np

from app.retrieval.rerank_trees import TreeModel

DEPTH = 3
MAX_TREES = 100
LEARNING_RATE = 0.1


def fit_trees(x: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, features: tuple[str, ...],
              depth: int = DEPTH, max_trees: int = MAX_TREES) -> TreeModel:
    """Boosted trees over rows ``x`` with labels ``y`` (1 = supporting), as a TreeModel."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    positive = float(y.mean())
    balance = np.where(y > 0, 0.5 / positive, 0.5 / (1.0 - positive))
    model = HistGradientBoostingClassifier(max_depth=depth, max_iter=max_trees, learning_rate=LEARNING_RATE,
                                           random_state=0)
    model.fit(x, y, sample_weight=sample_weight * balance)
    return export(model, features)


def export(model: object, features: tuple[str, ...]) -> TreeModel:
    """A fitted binary HistGradientBoostingClassifier as a TreeModel (numeric splits, no missing values).

    scikit-learn keeps shrunk values at the leaves only; an inner node's value here is the mean of its
    leaves weighted by their training rows, which the contributions need (Saabas' path method)."""
    trees = []
    for (predictor,) in model._predictors:  # type: ignore[attr-defined]
        nodes = predictor.nodes
        value = nodes["value"].astype(float).copy()
        count = nodes["count"].astype(float).copy()
        leaf = nodes["is_leaf"].astype(bool)
        for j in sorted(range(len(nodes)), key=lambda k: -int(nodes["depth"][k])):  # deepest first
            if not leaf[j]:
                a, b = int(nodes["left"][j]), int(nodes["right"][j])
                count[j] = count[a] + count[b]
                value[j] = (value[a] * count[a] + value[b] * count[b]) / count[j] if count[j] else 0.0
        trees.append({
            "feature": [0 if leaf[j] else int(nodes["feature_idx"][j]) for j in range(len(nodes))],
            "threshold": [0.0 if leaf[j] else float(nodes["num_threshold"][j]) for j in range(len(nodes))],
            "left": [-1 if leaf[j] else int(nodes["left"][j]) for j in range(len(nodes))],
            "right": [-1 if leaf[j] else int(nodes["right"][j]) for j in range(len(nodes))],
            "value": [round(float(v), 9) for v in value],
        })
    depth = max(int(p.nodes["depth"].max()) for (p,) in model._predictors)  # type: ignore[attr-defined]
    baseline = float(np.ravel(model._baseline_prediction)[0])  # type: ignore[attr-defined]
    return TreeModel.from_dict({"features": list(features), "baseline": round(baseline, 9), "depth": depth,
                                "trees": trees})
