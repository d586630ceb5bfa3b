import subprocess
import sys

HEAVY = (
    "torch",
    "faiss",
    "sentence_transformers",
    "llama_index",
    "llama_cpp",
    "unstructured",
    "google.genai",
    "google.generativeai",
    "openai",
    "transformers",
    "tantivy",
    "onnxruntime",
    "onnx",
    "tokenizers",
)


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


def test_import_aqgr_loads_no_heavy_module():
    loaded = _loaded_after("import aqgr, aqgr.interfaces.cli")
    assert not [m for m in HEAVY if m in loaded]


def test_cli_help_is_instant_and_light():
    loaded = _loaded_after(
        "from typer.testing import CliRunner\nfrom aqgr.interfaces.cli import app\nr = CliRunner().invoke(app, ['--help'])\nassert r.exit_code == 0, r.output"
    )
    assert not [m for m in HEAVY if m in loaded]


def test_public_api_is_explicit():
    import aqgr

    assert "Archive" in aqgr.__all__ and "SearchResult" in aqgr.__all__
    for name in aqgr.__all__:
        assert hasattr(aqgr, name), name


def test_looking_up_every_provider_imports_no_sdk():
    loaded = _loaded_after(
        "from aqgr.llm.base import providers\nfor name in providers.names():\n    providers.get(name)"
    )
    assert not [m for m in HEAVY if m in loaded]


def test_creating_every_embedder_loads_no_model_library():
    code = (
        "from aqgr.retrieval.dense.embedders import embedders\n"
        "for name in embedders.names():\n    embedders.create(name).fingerprint"
    )
    loaded = _loaded_after(code)
    assert not [m for m in HEAVY if m in loaded]


def test_the_default_search_path_loads_no_scipy():
    """The BM25 defaults live in retrieval/spec.py, and matrix.v1 (the evaluation's engine) imports its
    scipy matrix only when an index of it is made or opened: the modules a search imports, and the
    lookup of the default lexical engine (which registers every engine), load no scipy."""
    loaded = _loaded_after(
        "import aqgr.archive.home, aqgr.pipeline.search, aqgr.retrieval.embedded.index\n"
        "from aqgr.retrieval.lexical import lexical_engines\nlexical_engines.get('tantivy.v1')"
    )
    assert "scipy" not in loaded and "aqgr.retrieval.lexical.bm25" not in loaded
