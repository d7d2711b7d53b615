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
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
