"""Docs that cannot drift: README.md and docs/ checked against the code and the pinned scores.

Fast, and needs no data set. What is checked:
- the README's scores table is the one tests/readme_tables.py makes from eval/data/expected_scores.json,
  and a figure in README prose about the citation benchmark, the dev split or a measure is a pinned value;
- every default README.md and docs/ARCHITECTURE.md state, in the phrasings of DEFAULT_PHRASES, is the code's;
  the registries table of ARCHITECTURE.md names every registry of the code, each bold default the code's;
- the `Modules` maps of retrieval/__init__.py and eval/__init__.py list exactly the modules on disk, and
  every repository path and `python -m` module README.md and docs/*.md name exists;
- every relative link of README.md and docs/**/*.md reaches a path inside the repository, no page of
  docs/ is out of reach from the README, and nothing sends a reader to ../shared;
- README.md is at most 250 lines and keeps the CI's test command, docs/ARCHITECTURE.md at most 200
  lines, and docs/ holds no .patch file.

A sentence that states a default in another phrasing is not checked: state defaults as the
phrasings below do ("full-text BM25 ... (k1 1.2, b 0.75", "the embedder `NAME`", "fusion 3/2/1", ...).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import readme_tables

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
ARCHITECTURE = DOCS / "ARCHITECTURE.md"
STAGES = ("aqgr", "retrieval", "eval", "summarizer", "schemas")  # where the code's registries live


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _paragraphs(text: str) -> list[str]:
    """Blank-line-separated paragraphs, each on one line (phrases may span line breaks)."""
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


# --- figures: the citation benchmark and the dev split -------------------------------------------------

SCORE_WORDS = re.compile(r"citation benchmark|dev split|AILA dev|study subset|\bMAP\b|\bAP\b|R@100|P@10", re.I)
FIGURE = re.compile(r"(?<![\d.])0\.\d{3,4}(?![\d])")


def pinned_values(expected: dict) -> set[float]:
    return {v for run in expected["runs"] for v in run["mean"].values()}


def unpinned_figures(text: str, expected: dict) -> list[str]:
    """The figures of `text`'s paragraphs about scores that no pinned value rounds to."""
    pinned = pinned_values(expected)
    wrong = []
    for paragraph in _paragraphs(text):
        if not SCORE_WORDS.search(paragraph):
            continue
        for figure in FIGURE.findall(paragraph):
            decimals = len(figure) - 2
            if not any(f"{v:.{decimals}f}" == figure for v in pinned):
                wrong.append(f"{figure} in: {paragraph[:100]}...")
    return wrong


def test_the_readme_scores_table_is_generated_from_the_pinned_scores():
    expected = readme_tables.load()
    assert readme_tables.readme_block(_text(README)) == readme_tables.block(expected), (
        "README.md's scores table differs from eval/data/expected_scores.json: run `python -m tests.readme_tables --write`"
    )


def test_every_score_in_readme_prose_is_a_pinned_one():
    text = _text(README)
    prose = text.replace(readme_tables.readme_block(text), "")
    assert unpinned_figures(prose, readme_tables.load()) == []


# --- defaults -------------------------------------------------------------------------------------------


def code_defaults() -> dict[str, object]:
    from aqgr.llm.config import ProviderConfig
    from aqgr.pipeline.config import SearchOptions, Settings
    from aqgr.retrieval.backends import DEFAULT_BACKEND
    from aqgr.retrieval.spec import IndexSpec

    spec, options, settings = IndexSpec(), SearchOptions(), Settings.model_fields
    return {
        "fulltext_k1": spec.fulltext_k1,
        "bm25_k1": spec.bm25_k1,
        "bm25_b": spec.bm25_b,
        "query_tf": spec.fulltext_query_tf,
        "idf": spec.bm25_idf,
        "tokenizer": spec.tokenizer,
        "embedder": spec.embedder,
        "lexical_engine": spec.lexical_engine,
        "weights": (options.weights["fulltext"], options.weights["bm25"], options.weights["dense"]),
        "question_weight": options.question_weight,
        "citation_weight": options.citation_weight,
        "n_questions": options.n_questions,
        "min_score": options.min_score,
        "fuser": options.fuser,
        "summarizer": settings["summarizer"].default,
        "question_generator": settings["question_generator"].default,
        "explainer": settings["explainer"].default,
        "treatment": settings["treatment"].default,
        "backend": DEFAULT_BACKEND,
        "provider": ProviderConfig.model_fields["provider"].default,
    }


# (what, pattern, what the groups must equal, whether README.md must state it). Matched within
# one paragraph; numbers compared as numbers, names as written (case-insensitively); a set: any of it.
DEFAULT_PHRASES: tuple[tuple[str, str, Callable[[dict], tuple], bool], ...] = (
    (
        "full-text BM25 k1 and b",
        r"full-text BM25 [^()]{0,80}?\(k1 (\d+(?:\.\d+)?), b (\d+(?:\.\d+)?)",
        lambda d: (d["fulltext_k1"], d["bm25_b"]),
        True,
    ),
    (
        "summary BM25 k1 and b",
        r"summary BM25 \(k1 (\d+(?:\.\d+)?), b (\d+(?:\.\d+)?)",
        lambda d: (d["bm25_k1"], d["bm25_b"]),
        True,
    ),
    ("full-text query tf", r"\b(log|raw) query term frequency", lambda d: (d["query_tf"],), True),
    ("idf", r"\b(Lucene|Okapi|lucene|okapi) idf\b", lambda d: (d["idf"],), True),
    ("tokenizer", r"\btokenizer `([^`]+)`", lambda d: (d["tokenizer"],), True),
    ("embedder", r"\bembedder `([^`]+)`", lambda d: (d["embedder"],), True),
    ("lexical engine", r"\blexical engine `([^`]+)`", lambda d: (d["lexical_engine"],), True),
    ("fusion weights", r"\bfusion (\d+)/(\d+)/(\d+)", lambda d: d["weights"], True),
    ("fusion weights", r"`fulltext` (\d+), `bm25` (\d+), `dense` (\d+)", lambda d: d["weights"], False),
    ("question weight", r"\bquestion weight (\d+(?:\.\d+)?)", lambda d: (d["question_weight"],), True),
    ("citation weight", r"\bcitation weight (\d+(?:\.\d+)?)", lambda d: (d["citation_weight"],), False),
    ("questions kept", r"\bup to (\d+) generated questions", lambda d: (d["n_questions"],), False),
    ("relevance threshold", r"\bhits below (\d+) are not returned", lambda d: (d["min_score"],), False),
    (
        "offline engines",
        r"offline \(`([^`]+)`, `([^`]+)`, `([^`]+)`\)",
        lambda d: (d["summarizer"], d["question_generator"], d["explainer"]),
        False,
    ),
    # any k1 or b stated at all: one of the code's
    ("any k1", r"\bk1 =? ?(\d+(?:\.\d+)?)", lambda d: ({d["fulltext_k1"], d["bm25_k1"]},), False),
    ("any b", r"\bb =? ?(0\.\d+)", lambda d: (d["bm25_b"],), False),
)


def _same(stated: str, code: object) -> bool:
    if isinstance(code, set):  # any of these
        return any(_same(stated, c) for c in code)
    if isinstance(code, (int, float)) and not isinstance(code, bool):
        return float(stated) == float(code)
    return stated.lower() == str(code).lower()


def stated_defaults(text: str, defaults: dict) -> tuple[list[str], set[str]]:
    """(the statements of `text` that differ from the code, the names of those found)."""
    wrong, found = [], set()
    for paragraph in _paragraphs(text):
        for what, pattern, expected, _ in DEFAULT_PHRASES:
            for match in re.finditer(pattern, paragraph):
                found.add(what)
                code = expected(defaults)
                if not all(_same(s, c) for s, c in zip(match.groups(), code, strict=True)):
                    wrong.append(f"{what}: {match.group(0)!r}, the code has {code}")
    return wrong, found


@pytest.mark.parametrize("page", [README, ARCHITECTURE], ids=["README", "ARCHITECTURE"])
def test_every_default_the_docs_state_is_the_codes(page):
    wrong, found = stated_defaults(_text(page), code_defaults())
    assert wrong == []
    if page == README:
        required = {what for what, _, _, must in DEFAULT_PHRASES if must}
        assert required <= found, f"README.md no longer states {sorted(required - found)} in a checked phrasing"


def code_registries() -> set[str]:
    """The names of every `foundation.registry.Registry` the code makes."""
    made = re.compile(r"^(\w+)\s*(?::[^=\n]+)?=\s*Registry\(", re.M)
    seen: set[Path] = set()
    names: set[str] = set()
    for stage in STAGES:
        for path in (ROOT / stage).rglob("*.py"):
            real = path.resolve()
            if real in seen or "__pycache__" in path.parts:
                continue
            seen.add(real)
            names.update(made.findall(_text(path)))
    return names


def registry_table(text: str) -> dict[str, list[str]]:
    """ARCHITECTURE.md's registries table: registry name -> the names it shows in bold."""
    section = text.split("\n## Registries", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = line.split(" | ")
            rows[re.findall(r"`([^`]+)`", cells[0])[-1]] = re.findall(r"\*\*`([^`]+)`\*\*", cells[1])
    return rows


REGISTRY_DEFAULTS = {
    "summarizers": "summarizer",
    "question_generators": "question_generator",
    "explainers": "explainer",
    "treatment_engines": "treatment",
    "tokenizers": "tokenizer",
    "embedders": "embedder",
    "lexical_engines": "lexical_engine",
    "fusers": "fuser",
    "backends": "backend",
    "providers": "provider",
}


def test_the_architecture_lists_every_registry_with_the_codes_defaults():
    table, code = registry_table(_text(ARCHITECTURE)), code_registries()
    assert len(code) >= 15
    assert sorted(table) == sorted(code)
    defaults = code_defaults()
    for registry, setting in REGISTRY_DEFAULTS.items():
        expected = [] if defaults[setting] is None else [defaults[setting]]
        assert table[registry] == expected, registry


# --- module maps ----------------------------------------------------------------------------------------


def module_map(init: Path) -> list[str]:
    """The modules the `Modules` section of a package's docstring lists (format: docs in layout-plan)."""
    lines = [line.rstrip() for line in (ast.get_docstring(ast.parse(_text(init)), clean=False) or "").splitlines()]
    if "Modules" not in lines:
        raise AssertionError(f"{init}: no `Modules` line in its docstring")
    entries = []
    for line in lines[lines.index("Modules") + 1 :]:
        if not line.strip():
            break
        if line.startswith("  ") and not line.startswith("   "):
            entries.append(line.split()[0])
    return entries


def package_modules(package: Path) -> set[str]:
    """Every module of a package as a map names it: `spec`, `lexical/tantivy`, `lexical/`."""
    names = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        if "__pycache__" in parts or parts[-1] == "__main__" or parts == ("__init__",):
            continue
        names.add("/".join(parts[:-1]) + "/" if parts[-1] == "__init__" else "/".join(parts))
    return names


def map_problems(package: Path) -> list[str]:
    listed = module_map(package / "__init__.py")
    on_disk = package_modules(package)
    twice = sorted({name for name in listed if listed.count(name) > 1})
    return (
        [f"not listed: {name}" for name in sorted(on_disk - set(listed))]
        + [f"listed, no such module: {name}" for name in sorted(set(listed) - on_disk)]
        + [f"listed twice: {name}" for name in twice]
    )


def test_a_module_map_is_checked_against_the_files(tmp_path):
    package = tmp_path / "pkg"
    (package / "lexical").mkdir(parents=True)
    for name in ("__main__.py", "spec.py", "lexical/__init__.py", "lexical/tantivy.py"):
        (package / name).write_text("")
    entries = "  spec            the spec\n  lexical/        engines\n  lexical/tantivy tantivy.v1\n"
    (package / "__init__.py").write_text(f'"""The package.\n\nModules\n{entries}\nMore text.\n"""\n')
    assert map_problems(package) == []
    (package / "dense.py").write_text("")
    (package / "__init__.py").write_text(f'"""Modules\n{entries}  gone            no file\n"""\n')
    assert map_problems(package) == ["not listed: dense", "listed, no such module: gone"]


@pytest.mark.parametrize("package", ["retrieval", "eval"])
def test_the_module_maps_list_exactly_the_modules_on_disk(package):
    assert map_problems(ROOT / package) == []


# --- links, reach and sizes -----------------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def links(page: Path) -> list[str]:
    """The relative link targets of a markdown page, outside code blocks and code spans."""
    text = re.sub(r"```.*?```", "", _text(page), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    targets = []
    for target in LINK.findall(text):
        if re.match(r"[A-Za-z][\w+.-]*:", target) or target.startswith("#"):
            continue
        targets.append(re.split(r"[#?]", target, maxsplit=1)[0])
    return targets


def test_every_relative_link_resolves_inside_the_repository():
    broken = []
    for page in pages():
        for target in links(page):
            path = (page.parent / target).resolve()
            if not path.exists() or not path.is_relative_to(ROOT):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def test_no_page_sends_a_reader_to_the_shared_folder():
    assert [p.relative_to(ROOT) for p in pages() if "../shared" in _text(p)] == []


def test_every_docs_page_is_reached_from_the_readme_and_linked_there_once():
    reached, todo = {README}, [README]
    while todo:
        page = todo.pop()
        for target in links(page):
            path = (page.parent / target).resolve()
            if path.is_dir() and (path / "README.md").exists():
                path = path / "README.md"
            if path.suffix == ".md" and path.exists() and path not in reached:
                reached.add(path)
                todo.append(path)
    assert sorted(p.relative_to(ROOT) for p in set(pages()) - reached) == []
    top = [t for t in links(README) if re.fullmatch(r"docs/[\w-]+\.md", t)]
    assert sorted({t for t in top if top.count(t) > 1}) == []


CODE_PATH = re.compile(r"`((?:aqgr|retrieval|eval|summarizer|schemas|tests|datasets|docs|src)/[\w./-]*)`")
MODULE = re.compile(r"python -m (aqgr(?:\.\w+)+)")


def missing_names(page: Path) -> list[str]:
    """The repository paths (in code spans) and `python -m` modules `page` names that do not exist."""
    text = _text(page)
    missing = [path for path in sorted(set(CODE_PATH.findall(text))) if not (ROOT / path).exists()]
    for module in sorted(set(MODULE.findall(text))):
        base = ROOT.joinpath(*module.split("."))
        if not any(p.exists() for p in (base.with_suffix(".py"), base / "__init__.py", base / "__main__.py")):
            missing.append(f"python -m {module}")
    return missing


def test_every_path_and_module_the_guides_name_exists():
    """README.md and docs/*.md (not the dated reports) name the code as it is after issue 49's rooms."""
    missing = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in [README, *sorted(DOCS.glob("*.md"))]
        for name in missing_names(page)
    ]
    assert missing == []


def test_sizes_and_no_patches():
    readme = _text(README)
    assert len(readme.splitlines()) <= 250
    assert len(_text(ARCHITECTURE).splitlines()) <= 200
    assert sorted(p.relative_to(ROOT) for p in DOCS.rglob("*.patch")) == []
    commands = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    ci = _text(ROOT / ".ci" / "run").rstrip("\n").splitlines()[-1]
    assert len(commands) == 2 and commands[0].endswith("aqgr demo") and commands[1] == ci


def test_the_stage_folders_keep_at_most_twelve_modules_at_their_top():
    """retrieval/ and eval/ hold their shared contracts at the top and the rest in rooms."""
    for folder in ("retrieval", "eval"):
        top = sorted(p.name for p in (ROOT / folder).glob("*.py"))
        assert len(top) <= 12, (folder, top)


def test_the_expected_scores_file_is_what_the_table_reads():
    expected = json.loads(_text(readme_tables.EXPECTED))
    assert {"tolerance", "runs"} <= set(expected)
    assert readme_tables.scores_table(expected).count("\n| `") == len({r["system"] for r in expected["runs"]})
