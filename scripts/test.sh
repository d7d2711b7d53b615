#!/usr/bin/env bash
# Sets up .venv and the test tools if needed, then runs ruff, mypy, lint-imports (the layer contracts of
# docs/ARCHITECTURE.md) and pytest (which includes the Cypher lint).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test-tools.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
.venv/bin/ruff check app ingest tests bench
.venv/bin/mypy app ingest
.venv/bin/lint-imports
.venv/bin/python -m pytest "$@"
