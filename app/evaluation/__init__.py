"""Evaluation commands: KGQA (Hits@1, F1) and CoRAG (retrieval recall)."""
