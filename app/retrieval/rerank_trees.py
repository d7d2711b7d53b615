"""Gradient-boosted trees over the reranker's features, and the share of each feature in a score.

The default multi-hop reranker (``NEORAG_RETRIEVAL_RERANKER=trees``): an ensemble of small regression
trees over ``rerank_features.FEATURES`` (binary log-loss, fitted by ``bench/train_reranker.py`` with
scikit-learn's ``HistGradientBoostingClassifier`` on the issue-24 train pools' fit halves only, then written
as JSON into ``app/retrieval/models/``). Here it is evaluated with numpy alone: every tree is an array of
nodes, all trees are walked together, level by level.

``contributions`` splits each score into a part per feature (the path method of Saabas: along a
candidate's path through a tree, each split moves the expected value of the subtree, and that move is
credited to the split's feature), so ``bias + sum(contributions) == logit(final)``: the ranking preview
shows why a candidate scored what it did, as it does for the linear model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

MODELS = Path(__file__).with_name("models")


@dataclass(frozen=True)
class TreeModel:
    """Every tree's nodes in one flat array per field: tree ``t`` holds slots ``t * width`` to
    ``(t + 1) * width`` (padded), its root first; children are flat indexes, and a leaf is its own child."""

    features: tuple[str, ...]
    baseline: float  # the raw score before any tree (log-odds of the training prior)
    depth: int  # the longest root-to-leaf path
    width: int  # node slots per tree
    feature: np.ndarray  # int, the split feature of each node (0 at leaves)
    threshold: np.ndarray  # float, x <= threshold goes left
    left: np.ndarray  # int
    right: np.ndarray  # int
    value: np.ndarray  # float, leaf value; inner nodes: count-weighted mean of their leaves

    @property
    def trees(self) -> int:
        """How many trees."""
        return len(self.feature) // self.width

    @property
    def roots(self) -> np.ndarray:
        """Each tree's root slot."""
        return np.arange(self.trees, dtype=np.int64) * self.width

    @classmethod
    def from_dict(cls, d: dict) -> TreeModel:
        """Build from the JSON form (``to_dict``: per tree, lists of its nodes, children as its own
        indexes, -1 at leaves)."""
        trees = d["trees"]
        width = max(len(t["feature"]) for t in trees)
        size = len(trees) * width
        feature = np.zeros(size, dtype=np.int64)
        threshold = np.zeros(size, dtype=np.float64)
        value = np.zeros(size, dtype=np.float64)
        left = np.arange(size, dtype=np.int64)
        right = left.copy()
        for i, t in enumerate(trees):
            at = i * width
            k = len(t["feature"])
            feature[at:at + k] = t["feature"]
            threshold[at:at + k] = t["threshold"]
            value[at:at + k] = t["value"]
            for j, (a, b) in enumerate(zip(t["left"], t["right"], strict=True)):
                if a >= 0:
                    left[at + j], right[at + j] = at + a, at + b
        return cls(tuple(d["features"]), float(d["baseline"]), int(d["depth"]), width, feature, threshold,
                   left, right, value)

    def to_dict(self) -> dict:
        """The JSON form (``from_dict``)."""
        trees = []
        for at in self.roots.tolist():
            own = slice(at, at + self.width)
            leaf = self.left[own] == np.arange(at, at + self.width)
            trees.append({
                "feature": self.feature[own].tolist(), "threshold": self.threshold[own].tolist(),
                "left": np.where(leaf, -1, self.left[own] - at).tolist(),
                "right": np.where(leaf, -1, self.right[own] - at).tolist(),
                "value": self.value[own].tolist(),
            })
        return {"features": list(self.features), "baseline": self.baseline, "depth": self.depth,
                "trees": trees}

    def _walk(self, x: np.ndarray) -> list[np.ndarray]:
        """Node index per (candidate, tree) at each level, roots first."""
        node = np.broadcast_to(self.roots, (x.shape[0], self.trees))
        base = (np.arange(x.shape[0], dtype=np.int64) * x.shape[1])[:, None]
        flat_x = np.ascontiguousarray(x, dtype=np.float64).ravel()
        path = [node]
        for _ in range(self.depth):
            go_left = flat_x[base + self.feature[node]] <= self.threshold[node]
            node = np.where(go_left, self.left[node], self.right[node])
            path.append(node)
        return path

    def raw(self, x: np.ndarray) -> np.ndarray:
        """The log-odds of every row of ``x`` (candidates x features)."""
        if x.shape[0] == 0:
            return np.zeros(0)
        return self.baseline + self.value[self._walk(x)[-1]].sum(axis=1)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """sigmoid(raw) of every row of ``x``."""
        return sigmoid(self.raw(x))

    def contributions(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(bias, candidates x features): each feature's share of the log-odds; they sum to ``raw``."""
        n, width = x.shape[0], len(self.features)
        slots = (np.arange(n, dtype=np.int64) * width)[:, None]
        out = np.zeros(n * width)
        path = self._walk(x)
        for node, child in zip(path, path[1:], strict=False):
            out += np.bincount((slots + self.feature[node]).ravel(),
                               weights=(self.value[child] - self.value[node]).ravel(),
                               minlength=n * width)  # a leaf is its own child: it moves nothing
        return self.baseline + float(self.value[self.roots].sum()), out.reshape(n, width)


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-z), without overflow warnings."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def embedding_model_path(untitled: bool, embedding: str) -> Path:
    """Where trees fitted on ``embedding``'s features live (``reranker_trees[_untitled].<embedding>.json``),
    whether or not they ship."""
    stem = "reranker_trees_untitled" if untitled else "reranker_trees"
    return MODELS / f"{stem}.{embedding.removeprefix('BAAI/')}.json"


def model_path(untitled: bool = False, embedding: str | None = None) -> Path:
    """Where the shipped model of a kind of corpus lives: the embedding model's own trees where they ship
    (``embedding_model_path``), else the default (MiniLM-fitted) file."""
    if embedding and (own := embedding_model_path(untitled, embedding)).is_file():
        return own
    return MODELS / ("reranker_trees_untitled.json" if untitled else "reranker_trees.json")


@cache
def tree_model(untitled: bool = False, embedding: str | None = None) -> TreeModel:
    """The shipped model: fitted with titles, or on the same pools with ids for titles (``untitled``);
    fitted on ``embedding``'s features where such a file ships (bge-small-en-v1.5), else on MiniLM's."""
    return TreeModel.from_dict(json.loads(model_path(untitled, embedding).read_text(encoding="utf-8")))
