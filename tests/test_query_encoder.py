"""The fast query encoder (traced bf16/fp32 copy of the model) against the model's exact fp32 path."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.config import Settings
from app.services import query_encoder
from app.services.embedder import Embedder, QueryBatcher
from app.services.embedder_choice import shared_embedder
from app.services.query_encoder import (
    MIN_COSINE,
    SEQ_BUCKET,
    EncoderSelection,
    FastQueryEncoder,
    native_bf16,
    rank_by_speed,
    row_bucket,
)
from tests.support.apps import app_client

QUESTIONS: list[str] = json.loads(
    (Path(__file__).parent / "fixtures" / "embedder" / "hotpot_questions.json").read_text(encoding="utf-8"))


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b))


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Like the query worker (and robust on a busy 2-core host): 1 torch thread on the test thread."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module", params=["bf16", "fp32"])
def fast(request: pytest.FixtureRequest, embedder: Embedder) -> FastQueryEncoder:
    return FastQueryEncoder(embedder._model, request.param)


def wait_ready(batcher: QueryBatcher, timeout_s: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        info = batcher.stats()["encoder"]
        if info["ready"]:
            return info
        time.sleep(0.05)
    raise AssertionError("the query encoder selection did not finish")


def test_fast_encoder_matches_fp32_on_hotpot_questions(fast: FastQueryEncoder, embedder: Embedder) -> None:
    want = embedder.encode_raw(QUESTIONS)
    got = [fast.encode([q])[0] for q in QUESTIONS]
    worst = min(cos(g, w) for g, w in zip(got, want, strict=True))
    assert worst >= MIN_COSINE
    assert all(abs(math.fsum(x * x for x in g) - 1.0) < 1e-4 for g in got)  # unit length
    if fast.precision == "fp32":
        assert worst > 0.99999


def test_padded_batch_matches_embed_of_each_question(fast: FastQueryEncoder, embedder: Embedder) -> None:
    batch = [QUESTIONS[0], "Who?", QUESTIONS[5], QUESTIONS[1] + " " + QUESTIONS[2] + " " + QUESTIONS[3]]
    ids, mask = fast.features(batch)
    assert int(mask.sum(dim=1).min()) < ids.shape[1]  # really padded
    embedder.clear_cache()
    got = fast.encode(batch)
    for text, vec in zip(batch, got, strict=True):
        assert cos(vec, embedder.embed([text])[0]) >= MIN_COSINE
        assert cos(vec, fast.encode([text])[0]) > 0.9999  # padding does not change a question's vector
    everything = fast.encode(QUESTIONS)  # 24 questions of 8..34 words in one padded batch
    want = embedder.encode_raw(QUESTIONS)
    assert min(cos(g, w) for g, w in zip(everything, want, strict=True)) >= MIN_COSINE


def test_shapes_are_bucketed_and_the_padding_changes_no_vector(fast: FastQueryEncoder,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert [row_bucket(n) for n in (1, 2, 3, 5, 8, 9, 16, 17, 64, 65)] == [1, 2, 4, 8, 8, 16, 16, 24, 64, 72]
    batch = QUESTIONS[:3]
    ids, mask = fast.features(batch)
    exact_ids, exact_mask = fast.tokens(batch)
    assert ids.shape[0] == 4 and ids.shape[1] % SEQ_BUCKET == 0 and ids.shape[1] >= exact_ids.shape[1]
    assert (ids[:3, :exact_ids.shape[1]] == exact_ids).all() and int(mask[:3].sum()) == int(exact_mask.sum())
    got = fast.encode(batch)
    monkeypatch.setattr(query_encoder, "BUCKETED", False)
    assert fast.features(batch)[0].shape == exact_ids.shape
    plain = fast.encode(batch)
    assert len(got) == 3 and min(cos(a, b) for a, b in zip(got, plain, strict=True)) > 0.9999
    monkeypatch.setattr(query_encoder, "BUCKETED", True)
    shapes = {tuple(fast.features(QUESTIONS[:n])[0].shape) for n in range(1, len(QUESTIONS) + 1)}
    assert {rows for rows, _ in shapes} == {1, 2, 4, 8, 16, 24}  # 24 batch sizes -> 6 row buckets


def test_every_length_up_to_max_seq_length_and_truncation(fast: FastQueryEncoder, embedder: Embedder) -> None:
    words = " ".join(QUESTIONS).split() * 4
    top = fast.max_seq_length
    lengths = sorted({*range(1, 33), *range(33, top + 1, 9), top - 3, top - 2, top - 1, top, top + 1})
    texts = [" ".join(words[i:i + n]) for i, n in enumerate(lengths)]  # 1..max_seq_length(+1) words
    texts.append(" ".join(words))  # a very long question (1,000+ words): truncated to max_seq_length tokens
    assert fast.features([texts[-1]])[0].shape[1] == top
    want = embedder.encode_raw(texts)
    got: list[list[float]] = []
    for i in range(0, len(texts), 16):  # padded batches of mixed lengths, and single questions
        got.extend(fast.encode(texts[i:i + 16]))
    assert min(cos(g, w) for g, w in zip(got, want, strict=True)) >= MIN_COSINE
    for i in (0, 1, len(texts) // 2, len(texts) - 2, len(texts) - 1):
        assert cos(fast.encode([texts[i]])[0], want[i]) >= MIN_COSINE


def test_fp32_setting_is_the_exact_eager_path(embedder: Embedder) -> None:
    texts = QUESTIONS[6:10]
    single = [embedder.encode_raw([t])[0] for t in texts]
    together = embedder.encode_raw(texts)
    embedder.clear_cache()
    batcher = QueryBatcher(embedder, threads=1, window_ms=0.0, precision="fp32")
    try:
        assert [batcher.submit(t).result(timeout=30) for t in texts] == single  # bit-identical
        info = wait_ready(batcher)
        assert info["precision"] == "fp32" and info["traced"] is False and info["setting"] == "fp32"
        again = [batcher.submit(t) for t in texts]  # from the batcher's own cache, not ingest's
        assert all(f.done() for f in again) and [f.result() for f in again] == single
        assert embedder.cache_size() == 0
    finally:
        batcher.close()
    embedder.clear_cache()
    batcher = QueryBatcher(embedder, threads=1, window_ms=200.0, precision="fp32")
    try:
        assert [f.result(timeout=30) for f in [batcher.submit(t) for t in texts]] == together
        assert batcher.batches == 1
    finally:
        batcher.close()


def test_the_fastest_candidate_wins_whatever_its_precision() -> None:
    assert rank_by_speed({"bf16": 4.1, "fp32_traced": 6.0}) == ["bf16", "fp32_traced"]
    assert rank_by_speed({"bf16": 7.5, "fp32_traced": 6.0}) == ["fp32_traced", "bf16"]
    assert rank_by_speed({"bf16": 5.0, "fp32_traced": 5.0}) == ["bf16", "fp32_traced"]  # a tie: listed order
    assert rank_by_speed({"fp32_traced": 3.0}) == ["fp32_traced"]


def test_auto_selection_times_every_candidate_and_keeps_the_fastest(embedder: Embedder) -> None:
    sel = EncoderSelection(embedder._model, "auto", embedder.encode_raw,
                           native=lambda: (True, "native bf16 (test)"), time_rounds=1).run()
    info = sel.info()
    assert info["setting"] == "auto" and info["ready"] and info["traced"] is True
    timed = {name: c["p50_ms"] for name, c in info["candidates"].items()}
    assert set(timed) == {"bf16", "fp32_traced"} and all(ms > 0 for ms in timed.values())
    want = rank_by_speed(timed)[0]
    assert info["precision"] == ("bf16" if want == "bf16" else "fp32")  # whichever measured faster
    assert info["choice"].startswith(f"fastest: {want} ")


def test_candidates_are_timed_on_the_given_clock(embedder: Embedder) -> None:
    ticks = iter(range(10_000))  # every timed call lasts exactly one tick (1 s), whatever the wall time
    sel = EncoderSelection(embedder._model, "auto", embedder.encode_raw, native=lambda: (True, "test"),
                           time_rounds=1, clock=lambda: float(next(ticks))).run()
    assert {c["p50_ms"] for c in sel.info()["candidates"].values()} == {1000.0}


def test_candidates_are_timed_in_thread_cpu_time_with_one_torch_thread() -> None:
    """Wall time would also count whatever else holds the cores while a candidate runs (index builds at
    start-up, other processes); the query worker runs torch on its own thread, so its CPU time is the
    candidate's cost. With more intra-op threads the work is spread over threads: wall time."""
    import threading
    import time

    import torch

    from app.services.query_encoder import candidate_clock

    seen: dict[int, object] = {}

    def probe(threads: int) -> None:
        torch.set_num_threads(threads)  # the calling thread's setting (as the query worker does)
        seen[threads] = candidate_clock()

    for threads in (1, 2):
        worker = threading.Thread(target=probe, args=(threads,))
        worker.start()
        worker.join(30)
    assert seen == {1: time.thread_time, 2: time.perf_counter}


def test_batcher_serves_fast_vectors_and_keeps_ingest_exact(embedder: Embedder) -> None:
    question = QUESTIONS[11]
    exact = embedder.encode_raw([question])[0]
    embedder.clear_cache()
    batcher = QueryBatcher(embedder, threads=1, window_ms=0.0, warm_words=3, precision="bf16")
    try:
        early = batcher.submit(QUESTIONS[12]).result(timeout=60)  # served while the encoder is built
        assert cos(early, embedder.encode_raw([QUESTIONS[12]])[0]) >= MIN_COSINE
        info = wait_ready(batcher)
        assert info["setting"] == "bf16" and info["traced"] is True and info["precision"] == "bf16"
        assert info["probe_cosine"] >= MIN_COSINE
        assert info["candidates"]["bf16"]["p50_ms"] > 0
        vec = batcher.submit(question).result(timeout=60)
        assert cos(vec, exact) >= MIN_COSINE
        assert vec != exact  # a bf16 vector, not the exact one
        again = batcher.submit(question)
        assert again.done() and again.result() == vec  # the batcher's own cache
        assert embedder.embed([question])[0] == exact  # the fast vector never reaches the ingest cache
        assert batcher.submit(question).result() == exact  # exact vectors, where cached, go first
    finally:
        batcher.close()


def test_auto_without_native_bf16_uses_traced_fp32_and_says_why(embedder: Embedder) -> None:
    sel = EncoderSelection(embedder._model, "auto", embedder.encode_raw,
                           native=lambda: (False, "CPU lacks avx512_bf16 (test)"), time_rounds=1).run()
    info = sel.info()
    assert info["precision"] == "fp32" and info["traced"] is True and info["probe_cosine"] > 0.99999
    assert "bf16 skipped: CPU lacks avx512_bf16 (test)" in info["fallback_reason"]
    assert list(info["candidates"]) == ["fp32_traced"]


def test_probe_mismatch_falls_back_to_the_eager_path(embedder: Embedder) -> None:
    def other_model(texts: list[str]) -> list[list[float]]:  # a reference the fast encoder cannot match
        return [list(reversed(v)) for v in embedder.encode_raw(texts)]

    sel = EncoderSelection(embedder._model, "fp32_traced", other_model, time_rounds=1).run()
    info = sel.info()
    assert sel.encoder is None and info["traced"] is False and info["precision"] == "fp32"
    assert "fp32_traced rejected: probe cosine" in info["fallback_reason"]
    assert info["candidates"]["fp32_traced"]["probe_cosine"] < MIN_COSINE


def test_unsupported_model_pipeline_falls_back(embedder: Embedder) -> None:
    modules = list(embedder._model)
    sel = EncoderSelection([modules[0], modules[2]], "auto", embedder.encode_raw).run()
    assert sel.encoder is None and sel.done
    assert sel.info()["fallback_reason"] == (
        "model pipeline is Transformer -> Normalize, not Transformer -> Pooling(mean) -> Normalize")
    with pytest.raises(ValueError, match="not one of"):
        EncoderSelection(embedder._model, "fp16", embedder.encode_raw)


def test_native_bf16_agrees_with_cpu_flags() -> None:
    ok, why = native_bf16()
    flags = Path("/proc/cpuinfo").read_text().split()
    assert ok == ("avx512_bf16" in flags or "amx_bf16" in flags) and why


def test_diagnostics_reports_the_query_encoder(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings.model_copy(update={"embedding_query_precision": "auto"})  # the production default
    assert Settings.model_fields["embedding_query_precision"].default == "auto"
    # the process-wide batcher is made by the first app with its settings: start a fresh one for this app
    app_embedder = shared_embedder(settings.embedding_model, settings.embedding_device,
                                   settings.embedding_batch_size)
    monkeypatch.setattr(app_embedder, "_queries", None)
    with app_client(settings) as client:
        section = client.get("/diagnostics").json()["retrieval"]["query_embedder"]["encoder"]
        assert section["setting"] == settings.embedding_query_precision == "auto"
        batcher = client.app.state.services.embedder.queries()
        wait_ready(batcher)
        section = client.get("/diagnostics").json()["retrieval"]["query_embedder"]["encoder"]
    batcher.close()
    assert section == batcher.selection.info()
    assert section["ready"] is True
    if section["traced"]:
        assert section["probe_cosine"] >= MIN_COSINE and section["precision"] in ("bf16", "fp32")
    else:
        assert section["fallback_reason"]
