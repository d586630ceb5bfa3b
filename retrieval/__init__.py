"""Stage 2: structured summaries -> field-based retrieval documents -> BM25 + FAISS index.

Modules (import them directly; this package imports nothing heavy):
  documents   slots -> document text (SLOT_NAMES, DEFAULT_SLOTS, slot_texts, document_text)
  text        BM25 tokenizers (`words.v1`)
  bm25        BM25 as a sparse weight matrix (scores equal rank-bm25's BM25Okapi)
  embedders   `minilm-l6.v1` (default), `hashing.v1` (no torch)
  embed_cache SQLite cache of vectors by (embedder fingerprint, text sha256)
  dense       windowed embeddings in FAISS, max-over-windows scoring
  fusion      rrf.v1 / score.v1 over runs keyed by doc id
  retrievers  the retrievers of an embedded index (bm25, dense, fulltext), registry `retriever_kinds`
  index       IndexSpec, SummaryIndex (build / save / load / retrieve)
  protocol    Index, what both backends offer (SummaryIndex, milvus.MilvusIndex)
  backends    the index backends by name (embedded.v1, milvus.v1), build_index / load_index
  llama       SummaryIndexRetriever, a llama-index BaseRetriever (imports llama-index)
"""
