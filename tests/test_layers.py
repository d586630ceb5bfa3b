"""The layers point down: the import-linter contract in pyproject.toml holds, and it is a real check."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STAGES = ("summarizer", "retrieval", "schemas", "eval")
# The modules and packages (under aqgr/interfaces/) that reach the API through the `aqgr` facade; the facade itself is for users.
INTERFACES = {"cli.py", "serve_cli.py", "mcp_server.py", "server"}


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """lint-imports over the package under `root` with the repository's contract, no cache written."""
    code = (
        "import sys; from importlinter.cli import lint_imports;"
        f"sys.exit(lint_imports(config_filename={str(REPO / 'pyproject.toml')!r}, no_cache=True, no_logo=True))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def python_files(root: Path):
    """The modules under `root`, the stage folders included (aqgr/<stage> links to the top-level
    folder; pathlib's ** does not follow links)."""
    roots = [root] + [REPO / stage for stage in STAGES if root.name == "aqgr"]
    for path in sorted(p for r in roots for p in r.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield path


def imported_names(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_layers_point_down():
    done = lint_imports(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "13 kept, 0 broken" in done.stdout


def test_a_lower_layer_importing_a_higher_one_breaks_the_check(tmp_path):
    """The check is not vacuous: errors (the foundation) importing the CLI fails it."""
    shutil.copytree(
        REPO / "aqgr",
        tmp_path / "aqgr",
        symlinks=False,
        ignore=shutil.ignore_patterns("__pycache__", "sample", "static", "*.txt", "data"),
    )
    errors = tmp_path / "aqgr" / "foundation" / "errors.py"
    errors.write_text(
        errors.read_text(encoding="utf-8") + "\nfrom aqgr.interfaces.cli import app  # deliberate violation\n"
    )
    done = lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "BROKEN" in done.stdout and "aqgr.foundation.errors -> aqgr.interfaces.cli" in done.stdout


def test_an_engine_importing_the_embedded_backend_breaks_the_retrieval_rooms(tmp_path):
    """The retrieval contract is real too: the lexical engines sit below the embedded backend."""
    shutil.copytree(
        REPO / "aqgr",
        tmp_path / "aqgr",
        symlinks=False,
        ignore=shutil.ignore_patterns("__pycache__", "sample", "static", "*.txt", "data"),
    )
    engine = tmp_path / "aqgr" / "retrieval" / "lexical" / "tantivy.py"
    engine.write_text(
        engine.read_text(encoding="utf-8")
        + "\nfrom ..embedded.restriction import Restriction  # deliberate violation\n"
    )
    done = lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "aqgr.retrieval.lexical.tantivy -> aqgr.retrieval.embedded.restriction" in done.stdout


def test_the_stages_are_imported_only_through_aqgr():
    """`summarizer`, `retrieval`, `schemas`, `eval` are not top-level packages: the wheel installs
    only `aqgr`, so an import of the bare name works in a checkout and fails for every user."""
    offenders = [
        f"{path.relative_to(REPO)}: {name}"
        for folder in ("aqgr", "tests")
        for path in python_files(REPO / folder)
        for name in imported_names(path)
        if name.split(".")[0] in STAGES
    ]
    assert offenders == []


def test_only_the_interfaces_use_the_public_facade():
    """Below the interfaces, modules import what they use from its own module, never `from aqgr
    import ...`: the facade resolves names lazily, so grimp cannot see (or check) those edges."""
    offenders = []
    for path in python_files(REPO / "aqgr"):
        relative = path.relative_to(REPO / ("aqgr" if path.is_relative_to(REPO / "aqgr") else ""))
        if (
            relative.parts[:1] == ("interfaces",)
            and relative.parts[1] in INTERFACES
            or relative.name == "__init__.py"
            and len(relative.parts) == 1
        ):
            continue
        offenders += [f"{relative}" for name in imported_names(path) if name == "aqgr"]
    assert offenders == []
