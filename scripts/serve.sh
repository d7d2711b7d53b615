#!/usr/bin/env bash
# Sets up .venv if needed, then serves NeoRAG on the embedded FalkorDB at http://127.0.0.1:8010
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/neorag serve "$@"
