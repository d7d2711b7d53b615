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
# Debian's Chromium + chromedriver for the headless browser tests of /ui (never a downloaded browser).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      chromium chromium-driver fonts-dejavu-core) >/dev/null
  else
    echo "test-tools: chromium/chromedriver missing; as root: apt-get install -y chromium chromium-driver" >&2
  fi
fi
