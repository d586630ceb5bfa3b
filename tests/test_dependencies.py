"""What the code imports is what pyproject.toml declares: the offline default path needs only the
core dependencies, everything else an extra (a module that llama-index-core happened to bring in
once made a plain wheel install fail on its first search)."""

import ast
import importlib.metadata as metadata
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("aqgr", "summarizer", "retrieval", "schemas", "eval")
# Modules a user reaches only through an extra (or a benchmark): their imports may come from extras.
OPTIONAL = (
    "aqgr/interfaces/server/",
    "aqgr/interfaces/mcp_server.py",
    "aqgr/interfaces/mcp_stdio.py",
    "aqgr/llm/http_deadline.py",
    "aqgr/interfaces/serve_cli.py",
    "aqgr/llm/gemini.py",
    "aqgr/llm/openai_compat.py",
    "aqgr/llm/llamacpp.py",
    "retrieval/milvus.py",
    "retrieval/llama.py",
    "eval/systems/bm25s.py",
    "summarizer/readers/office.py",
    "eval/bench/",
    "eval/systems/on_backend.py",
)


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _closure(names: set[str]) -> set[str]:
    """The distributions `names` install, with what they require (markers for extras skipped)."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [_name(r) for r in requires if "extra ==" not in r]
    return seen


def _third_party_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    # `tests`: the checkout's own test helpers (eval/bench/batch.py --pdf), never a distribution
    return {m for m in found if m not in sys.stdlib_module_names and m not in ("aqgr", "tests")}


def test_every_import_is_declared_and_the_default_path_needs_only_the_core():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = _closure({_name(r) for r in project["dependencies"]})
    extras = _closure(
        {_name(r) for name, group in project["optional-dependencies"].items() if name != "test" for r in group}
    )
    providers = {
        module: {d.lower().replace("_", "-") for d in dists}
        for module, dists in metadata.packages_distributions().items()
    }
    undeclared, not_core = [], []
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            where = path.relative_to(REPO).as_posix()
            for module in _third_party_imports(path):
                dists = providers.get(module, {module})
                if not dists & (core | extras):
                    undeclared.append(f"{where}: {module}")
                elif not where.startswith(OPTIONAL) and not dists & core:
                    not_core.append(f"{where}: {module}")
    assert undeclared == [], "imported but declared nowhere"
    assert not_core == [], "the offline default path imports a module only an extra installs"
