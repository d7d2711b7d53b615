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
    """Trees as (tree, node) arrays; node 0 is each tree's root; a leaf's children are itself."""

    features: tuple[str, ...]
    baseline: float  # the raw score before any tree (log-odds of the training prior)
    feature: np.ndarray  # int, the split feature of each node (0 at leaves)
    threshold: np.ndarray  # float, x <= threshold goes left
    left: np.ndarray  # int
    right: np.ndarray  # int
    value: np.ndarray  # float, leaf value; inner nodes: count-weighted mean of their leaves
    depth: int  # the longest root-to-leaf path

    @classmethod
    def from_dict(cls, d: dict) -> TreeModel:
        """Build from the JSON form (``to_dict``; a list of node lists per tree, padded here)."""
        trees = d["trees"]
        width = max(len(t["feature"]) for t in trees)
        n = len(trees)
        feature = np.zeros((n, width), dtype=np.int64)
        threshold = np.zeros((n, width), dtype=np.float64)
        left = np.tile(np.arange(width, dtype=np.int64), (n, 1))
        right = left.copy()
        value = np.zeros((n, width), dtype=np.float64)
        for i, t in enumerate(trees):
            k = len(t["feature"])
            feature[i, :k] = t["feature"]
            threshold[i, :k] = t["threshold"]
            value[i, :k] = t["value"]
            for j, (a, b) in enumerate(zip(t["left"], t["right"], strict=True)):
                if a >= 0:  # -1 marks a leaf
                    left[i, j], right[i, j] = a, b
        return cls(tuple(d["features"]), float(d["baseline"]), feature, threshold, left, right, value,
                   int(d["depth"]))

    def to_dict(self) -> dict:
        """The JSON form (``from_dict``)."""
        trees = []
        for i in range(self.feature.shape[0]):
            leaf = self.left[i] == np.arange(self.left.shape[1])
            trees.append({
                "feature": self.feature[i].tolist(), "threshold": self.threshold[i].tolist(),
                "left": np.where(leaf, -1, self.left[i]).tolist(),
                "right": np.where(leaf, -1, self.right[i]).tolist(),
                "value": self.value[i].tolist(),
            })
        return {"features": list(self.features), "baseline": self.baseline, "depth": self.depth,
                "trees": trees}

    def _flat(self) -> tuple[np.ndarray, ...]:
        """Nodes of all trees in one array each (children as flat indexes), and each root's index."""
        flat = self.__dict__.get("_flat_arrays")
        if flat is None:
            trees, width = self.feature.shape
            offset = (np.arange(trees, dtype=np.int64) * width)[:, None]
            flat = (self.feature.ravel(), self.threshold.ravel(), (self.left + offset).ravel(),
                    (self.right + offset).ravel(), self.value.ravel(), offset.ravel())
            object.__setattr__(self, "_flat_arrays", flat)  # frozen: cached once per model
        return flat

    def _walk(self, x: np.ndarray) -> list[np.ndarray]:
        """Flat node index per (candidate, tree) at each level, roots first."""
        feature, threshold, left, right, _, roots = self._flat()
        node = np.broadcast_to(roots, (x.shape[0], roots.size))
        base = (np.arange(x.shape[0], dtype=np.int64) * x.shape[1])[:, None]
        flat_x = np.ascontiguousarray(x, dtype=np.float64).ravel()
        path = [node]
        for _ in range(self.depth):
            go_left = flat_x[base + feature[node]] <= threshold[node]
            node = np.where(go_left, left[node], right[node])
            path.append(node)
        return path

    def raw(self, x: np.ndarray) -> np.ndarray:
        """The log-odds of every row of ``x`` (candidates x features)."""
        if x.shape[0] == 0:
            return np.zeros(0)
        value = self._flat()[4]
        return self.baseline + value[self._walk(x)[-1]].sum(axis=1)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """sigmoid(raw) of every row of ``x``."""
        return sigmoid(self.raw(x))

    def contributions(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(bias, candidates x features): each feature's share of the log-odds; they sum to ``raw``."""
        feature, _, _, _, value, roots = self._flat()
        n, width = x.shape[0], len(self.features)
        slots = (np.arange(n, dtype=np.int64) * width)[:, None]
        out = np.zeros(n * width)
        path = self._walk(x)
        for node, child in zip(path, path[1:], strict=False):
            out += np.bincount((slots + feature[node]).ravel(), weights=(value[child] - value[node]).ravel(),
                               minlength=n * width)  # a leaf is its own child: it moves nothing
        return self.baseline + float(value[roots].sum()), out.reshape(n, width)


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-z), without overflow warnings."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def model_path(untitled: bool = False) -> Path:
    """Where the shipped model of a kind of corpus lives."""
    return MODELS / ("reranker_trees_untitled.json" if untitled else "reranker_trees.json")


@cache
def tree_model(untitled: bool = False) -> TreeModel:
    """The shipped model: fitted with titles, or on the same pools with ids for titles (``untitled``)."""
    return TreeModel.from_dict(json.loads(model_path(untitled).read_text(encoding="utf-8")))
