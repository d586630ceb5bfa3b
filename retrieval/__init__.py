"""Stage 2: structured summaries in, ranked runs out (imported as `aqgr.retrieval`).

Contract
--------
Inputs: `StructuredSummary` objects (aqgr.schemas.summary) keyed by judgment id, an
`IndexSpec` (spec.py: the indexed slots, embedder, tokenizer, BM25 k1/b/idf and n-grams,
dense window size, lexical engine), optionally the judgments' full texts (the `fulltext`
retriever) and an embedding cache (dense/cache.py). Statutes enter the same way as plain
slot texts (`SummaryIndex.from_texts`).

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
- A saved index is a directory with `manifest.json` (backend, format and schema version,
  spec, embedder name and fingerprint, committed generation, file checksums), written
  atomically (a temporary file, fsynced, then renamed). The embedded index is updated in
  place, one generation at a time: until the manifest names a generation, readers see the
  previous one (embedded/index.py). Loading recomputes nothing and refuses an index built
  differently.
- Every index backend (backends.py: `embedded.v1` = embedded/index.py's SummaryIndex,
  `milvus.v1` = milvus.py's MilvusIndex) implements `protocol.Index`, so the search runs
  unchanged on either (one contract suite, tests/retrieval/test_index_contract.py, runs
  against both); the manifest names the backend that wrote it (`load_index`).
- The retrievers of an embedded index are registered kinds (embedded/retrievers.py), each
  owning its build, save, load and scoring; `retrievers=None` means every one the index has.
- Choices are registries keyed by versioned names (embedders, tokenizers, lexical engines,
  retriever kinds, ANN kinds, BM25 implementations, fusers, backends, treatment engines); an
  unknown name raises `UnknownNameError` listing the known ones.
- The rooms import downwards only (pyproject.toml's import-linter contracts): backends.py and
  llama.py over the two backends, milvus.py and embedded/ (which never import each other), over
  manifest.py, over lexical/ and dense/ (which never import each other), over protocol, fusion,
  quotes and citations/, over spec.py, over documents, text and types.
- Importing this package or any module but llama.py loads neither torch, faiss,
  sentence-transformers, onnxruntime, tantivy, llama-index nor pymilvus; they load inside
  the functions that need them. Only lexical/bm25.py imports scipy: matrix.v1 imports it when
  one of its indexes is made or opened, so a search on the default engines never does.

Errors (aqgr.foundation.errors): `NoIndexError` (nothing saved there), `IndexMismatchError` (built
with another spec, schema, embedder or format: names every difference and says to
rebuild), `EmptyArchiveError` (a build with no documents), `IndexLockedError` (a lexical
index another writer holds), `UnknownNameError` (unknown slot, retriever, embedder, fuser,
backend), `MissingDependencyError` (an optional extra, with its install command);
`ValueError` / `TypeError` for malformed arguments (a negative k, runs in a shape fusion does
not accept, a retriever the index was not built with).

Import the modules directly; this package imports nothing.

Modules
  backends                the index backends by name (embedded.v1, milvus.v1), build_index / load_index
  documents               slots -> document text (SLOT_NAMES, DEFAULT_SLOTS, slot_texts, dense_texts)
  fusion                  rrf.v1 / score.v1 over runs keyed by doc id
  llama                   SummaryIndexRetriever, a llama-index BaseRetriever (imports llama-index)
  manifest                manifest.json, both backends': written atomically, compared on load (format, spec, embedder, files)
  milvus                  milvus.v1: MilvusIndex (pymilvus, loaded when used; `aqgr[milvus]`)
  protocol                Index, what every backend offers the search; select_retrievers
  quotes                  which judgments quote which statutes (QuoteFinder)
  spec                    IndexSpec and its defaults (BM25 k1/b/idf, embedder, window size, tokenizer)
  text                    BM25 tokenizers (words.v2, words.v1), word pairs, placeholder stripping
  types                   ScoredDoc, rank_key, ranked; Where, a filter as an engine applies it
  citations/              which archive judgments cite which: CitationGraph, CitationStore
  citations/graph         CitationGraph: the links of an archive, the precedents a ranking refers to
  citations/judgments     a judgment's title, parties, date and body paragraphs
  citations/links         where a judgment cites another of the same archive (titles, reporter citations)
  citations/normalize     case titles and reporter citations normalised so that a mention matches a title
  citations/passes        one judgment's turn in the store's two passes, here or in worker processes
  citations/snapshot      the citation graph as one file of arrays, for a fast opening
  citations/store         CitationStore: the citation graph in SQLite, updated judgment by judgment
  citations/treatment     how a citing judgment treats the cited one (phrases.v1), registry of engines
  citations/treatment_llm llm.v1 treatment engine: the model labels the citing sentence
  dense/                  dense retrieval: embedders, cache, window vectors and their store
  dense/ann               ANN kinds for large dense segments (ivf-sq8.v1)
  dense/cache             SQLite cache of vectors by (embedder fingerprint, text sha256)
  dense/embedders         minilm-l6.v1 (torch), hashing.v1 (no torch), registry `embedders`
  dense/onnx_minilm       minilm-l6-int8.v1 (default): MiniLM in int8 on ONNX Runtime (exported once)
  dense/store             DenseStore: window vectors by document number in immutable segments
  dense/windows           texts as ~1,000-character windows; query vectors; pre-embedded sentences
  embedded/               the embedded backend (embedded.v1)
  embedded/docstore       DocStore: docs.sqlite, n -> judgment id by generation, facets, sentences
  embedded/facets         filter fields normalised at index time; FacetReader (select, counts)
  embedded/index          SummaryIndex: build / update / save / load / retrieve, the manifest
  embedded/restriction    a restricted search, applied inside each engine the cheapest way
  embedded/retrievers     the retrievers of an embedded index (bm25, dense, fulltext), `retriever_kinds`
  lexical/                the lexical engine registry (tantivy.v1, matrix.v1) and their interface
  lexical/bm25            BM25Matrix, rank-bm25's BM25 as a sparse weight matrix (rank-bm25.v1)
  lexical/matrix          matrix.v1: BM25Matrix behind the engine interface (any k1 / b / idf)
  lexical/tantivy         tantivy.v1 (default): BM25 on disk
"""
