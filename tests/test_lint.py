"""CI runs the formatter and the linter: the tree is as `ruff format` leaves it, and `ruff check` finds nothing.

The rules are in pyproject.toml ([tool.ruff]); ruff is pinned in the test extra, since a new
release may add rules or change the formatting. Fix with `ruff format . && ruff check --fix .`.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def ruff(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module", autouse=True)
def _ruff_installed():
    if ruff("--version").returncode != 0:
        pytest.fail("ruff is not installed: pip install -e '.[test]'")


def test_the_tree_is_formatted():
    done = ruff("format", "--check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_linter_finds_nothing():
    done = ruff("check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_checks_see_a_fault(tmp_path):
    """Not vacuous: the repository's configuration flags an unused import and an unformatted line."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "bad.py").write_text("import os\nx = {  'a':1 }\n")
    assert ruff("check", "--no-cache", ".", cwd=tmp_path).returncode == 1
    assert ruff("format", "--check", "--no-cache", ".", cwd=tmp_path).returncode == 1


def test_no_merge_conflict_markers_are_left():
    """A merge's conflict markers inside a docstring or a document pass the linter: searched here."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    markers = ("<<<<<<< ", ">>>>>>> ", "<<<<<<<< ", ">>>>>>>> ")
    found = []
    for name in tracked.splitlines():
        path = REPO / name
        if path.suffix not in {".py", ".md", ".toml", ".txt", ".json", ".yaml", ".cfg", ".sh"} or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if line.startswith(markers):
                found.append(f"{name}:{number}")
    assert not found, found
