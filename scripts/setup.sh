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
  # torch first, pinned, CPU build (PyPI's Linux wheel pulls GBs of CUDA libraries; +cpu sorts first).
  if ! .venv/bin/python -c "import torch, sys; sys.exit(not torch.__version__.startswith('2.13.0'))" 2>/dev/null; then
    .venv/bin/python -m pip install -q "torch==2.13.0" \
      --extra-index-url "${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
  fi
  .venv/bin/python -m pip install -q -e ".[dev]"
  echo "$want" > "$stamp"
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
