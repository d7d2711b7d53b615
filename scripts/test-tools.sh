#!/usr/bin/env bash
# Installs the test-only tools that are not Python packages (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
# Neo4j's own Cypher parser for the lint test, pinned, into a git-ignored folder.
if [ -f tests/lint/package.json ] && [ ! -d tests/.lint/node_modules/@neo4j-cypher/language-support ]; then
  mkdir -p tests/.lint
  cp tests/lint/package.json tests/.lint/package.json
  (cd tests/.lint && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
