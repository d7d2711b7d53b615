"""The int8 first pass of the in-process vector search: results equal the exact float32 product."""

from __future__ import annotations

import numpy as np

from app.retrieval.int8_prefilter import MIN_HEAD, MIN_ROWS, OVERSAMPLE, Int8Codes
from app.retrieval.vectors import DenseIndex, unit_rows


def _clustered(rows: int, dim: int, seed: int) -> np.ndarray:
    """Unit vectors in tight clusters: many near-ties, the hard case for a quantised first pass."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((rows // 100, dim))
    points = centres[rng.integers(len(centres), size=rows)] + 0.35 * rng.standard_normal((rows, dim))
    return unit_rows(points.tolist())


def _exact(matrix: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[tuple[str, float]]:
    cos = matrix @ (query / np.linalg.norm(query))
    order = sorted(range(len(ids)), key=lambda i: (-cos[i], ids[i]))[:k]
    return [(ids[i], float(np.clip((1 + cos[i]) / 2, 0, 1))) for i in order]


def test_a_large_index_searches_int8_first_and_returns_the_exact_top_k() -> None:
    matrix = _clustered(MIN_ROWS + 5_000, 64, seed=3)
    ids = [f"c{i:06d}" for i in range(len(matrix))]
    index = DenseIndex(ids, matrix, "m")
    assert index.codes is not None
    assert index.memory_bytes() > matrix.nbytes  # the codes are counted
    rng = np.random.default_rng(4)
    for _ in range(25):
        query = matrix[rng.integers(len(matrix))] + 0.2 * rng.standard_normal(64).astype(np.float32)
        for k in (10, 80):
            got = index.search(query.tolist(), k)
            want = _exact(matrix, ids, query, k)
            assert [cid for cid, _ in got] == [cid for cid, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
    zero = index.search([0.0] * 64, 3)  # a zero question: the plain product, every row ties at cos 0
    assert len(zero) == 3 and all(score == 0.5 for _, score in zero)


def test_a_small_index_has_no_codes() -> None:
    matrix = _clustered(1_000, 16, seed=5)
    assert DenseIndex([str(i) for i in range(1_000)], matrix, None).codes is None


def test_the_head_covers_what_is_asked_and_degenerate_queries_keep_every_row() -> None:
    matrix = _clustered(5_000, 32, seed=6)
    codes = Int8Codes.of(matrix)
    assert codes.codes.dtype == np.int8 and np.abs(codes.codes).max() == 127
    head = codes.top_rows(matrix[0], 10)
    assert head is not None and len(head) == max(OVERSAMPLE * 10, MIN_HEAD) and 0 in head.tolist()
    assert codes.top_rows(matrix[0], 1_000) is None  # the head would be every row: the plain product
    assert codes.top_rows(np.zeros(32, dtype=np.float32), 10) is None  # a zero question ranks nothing
    zero = Int8Codes.of(np.zeros((3, 4), dtype=np.float32))
    assert not zero.codes.any() and not zero.scale.any()
