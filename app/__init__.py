"""NeoRAG: a Neo4j-backed Graph-RAG platform."""

API_VERSION = "0.1.0"
