"""top_k_indices: the k largest values, ties at the k-th value to the lowest indices, whatever the guess."""

from __future__ import annotations

import numpy as np
import pytest

from app.retrieval.topk import top_k_indices


def reference(values: np.ndarray, k: int) -> list[int]:
    order = sorted(range(len(values)), key=lambda i: (-float(values[i]), i))
    return sorted(order[: max(k, 0)])


@pytest.mark.parametrize("n", [5, 1_000, 20_000, 100_000])
@pytest.mark.parametrize("k", [0, 1, 80, 800, 4_999])
def test_matches_a_full_sort_with_ties(n: int, k: int) -> None:
    rng = np.random.default_rng(n + k)
    for values in (rng.standard_normal(n).astype(np.float32),  # continuous
                   rng.integers(0, 50, n).astype(np.float64),  # many ties at every value
                   np.where(rng.random(n) < 0.97, 0.0, rng.random(n)).astype(np.float32)):  # sparse (BM25)
        assert sorted(top_k_indices(values, k).tolist()) == reference(values, k)


def test_k_at_least_the_length_is_every_index() -> None:
    values = np.array([3.0, 1.0, 2.0])
    assert sorted(top_k_indices(values, 3).tolist()) == [0, 1, 2]
    assert sorted(top_k_indices(values, 7).tolist()) == [0, 1, 2]
    assert top_k_indices(np.zeros(0), 4).tolist() == []


def test_a_guess_that_keeps_too_few_falls_back_to_the_whole_vector() -> None:
    n, k = 100_000, 5_000
    values = np.ones(n, dtype=np.float32)
    step = n // 4096
    values[::step] = 10.0  # every sampled value is large, but there are fewer than k of them
    values[1] = 5.0
    got = top_k_indices(values, k)
    assert sorted(got.tolist()) == reference(values, k)
    assert 1 in set(got.tolist())
