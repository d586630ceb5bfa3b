"""Stage 2: structured summaries in, ranked runs out (imported as `aqgr.retrieval`).

Contract
--------
Inputs: `StructuredSummary` objects (aqgr.schemas.summary) keyed by judgment id, an
`IndexSpec` (index.py: the indexed slots, embedder, tokenizer, BM25 k1/b/idf and n-grams,
dense window size), optionally the judgments' full texts (the `fulltext` retriever) and
an embedding cache (embed_cache.py). Statutes enter the same way as plain slot texts
(`SummaryIndex.from_texts`).

Outputs: an index that answers `retrieve(query, k, retrievers=None, restrict=None,
exclude=None, vector=None) -> {retriever name: [ScoredDoc]}` (types.py), one run per
retriever, each at most `k` long; fusion (fusion.py) turns runs into one fused run; the
citation graph (citations/) and statute quotations (quotes.py) give the search its
precedents-referred and statute votes.

Invariants:
- Every run, fused or not, is ordered by `types.rank_key`: descending score, then a stable
  hash of the doc id, never raw id or input order (AILA ids leak relevance).
- `restrict` keeps only those ids and `exclude` drops those ids, in every retriever.
- Fusion is a pure function: it never mutates its runs and accepts an empty one.
- A saved index is a directory with `manifest.json` (format and schema version, spec,
  embedder fingerprint, doc-id order, file hashes), written atomically (temporary sibling,
  then rename); loading recomputes nothing and refuses an index built differently.
- Every index backend (backends.py: `embedded.v1` = index.py's SummaryIndex, `milvus.v1` =
  milvus.py's MilvusIndex) implements `protocol.Index`, so the search runs unchanged on
  either (one contract suite, tests/retrieval/test_index_contract.py, runs against both);
  the manifest names the backend that wrote it (`load_index`).
- The retrievers of an embedded index are registered kinds (retrievers.py), each owning its
  build, save, load and scoring; `retrievers=None` means every one the index has.
- Choices are registries keyed by versioned names (embedders, tokenizers, BM25
  implementations, fusers, backends); an unknown name raises `UnknownNameError` listing the
  known ones.
- Importing this package or any module but llama.py loads neither torch, faiss,
  sentence-transformers, llama-index, pymilvus nor bm25s; they load inside the functions
  that need them.

Errors (aqgr.foundation.errors): `NoIndexError` (nothing saved there), `IndexMismatchError` (built
with another spec, schema, embedder or format: names every difference and says to
rebuild), `UnknownNameError` (unknown slot, retriever, embedder, fuser, backend),
`MissingDependencyError` (an optional extra, with its install command); `ValueError` /
`TypeError` for malformed arguments (a negative k, runs in a shape fusion does not accept,
a retriever the index was not built with).

Modules (import them directly; this package imports nothing heavy):
  documents   slots -> document text (SLOT_NAMES, DEFAULT_SLOTS, slot_texts, document_text)
  text        BM25 tokenizers (`words.v1`), word pairs, placeholder stripping
  bm25        BM25 as a sparse weight matrix (`rank-bm25.v1`; okapi or lucene idf)
  bm25s_scorer  `bm25s.v1`, the optional bm25s implementation (compared in the eval)
  embedders   `minilm-l6.v1` (torch), `hashing.v1` (no torch)
  onnx_minilm `minilm-l6-int8.v1` (default): the same MiniLM in int8 on ONNX Runtime (exported once, cached)
  embed_cache SQLite cache of vectors by (embedder fingerprint, text sha256)
  dense       windowed embeddings in FAISS, max-over-windows scoring
  fusion      rrf.v1 / score.v1 over runs keyed by doc id
  types       ScoredDoc, rank_key, ranked
  retrievers  the retrievers of an embedded index (bm25, dense, fulltext), registry `retriever_kinds`
  index       IndexSpec, SummaryIndex (build / save / load / retrieve)
  protocol    Index, what both backends offer (SummaryIndex, milvus.MilvusIndex)
  backends    the index backends by name (embedded.v1, milvus.v1), build_index / load_index
  milvus      MilvusIndex (pymilvus, loaded when used; `aqgr[milvus]`)
  citations   which archive judgments cite which; CitationGraph.referred
  quotes      which judgments quote which statutes (QuoteFinder)
  llama       SummaryIndexRetriever, a llama-index BaseRetriever (imports llama-index)
"""
