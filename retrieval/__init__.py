"""Stage 2: structured summaries -> field-based retrieval documents -> BM25 + FAISS index."""
