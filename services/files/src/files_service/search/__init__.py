"""Ranked retrieval over a vector store's chunks, and the embeddings client it may use."""
