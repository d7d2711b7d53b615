"""Reasoning agents over NeoRAG's store: StructGPT (KG), CoRAG (chain of retrieval), CONVINSE evidences."""
