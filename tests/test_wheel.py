"""The built wheel: one top-level package, the data it needs inside, and `aqgr demo` working from
an empty folder with the same answer as the checkout gives."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = "import sys; from aqgr.interfaces.cli import main; sys.argv = ['aqgr', 'demo', '--json', '--home', sys.argv[1]]; main()"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of the working tree, built from a copy of its files (an in-tree build reuses
    build/, where a module deleted since an earlier build would linger)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    for name in filter(None, listed.split("\0")):
        path, copy = REPO / name, source / name
        if not path.exists() and not path.is_symlink():
            continue  # deleted in the working tree, not yet in git
        copy.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            copy.symlink_to(os.readlink(path))
        else:
            shutil.copy2(path, copy)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q", "-w", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return next(out.glob("aqgr-*.whl"))


def test_the_wheel_installs_only_aqgr_with_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names if ".dist-info/" not in name} == {"aqgr"}
    top_level = [name for name in names if name.endswith(".dist-info/top_level.txt")]
    if top_level:
        assert zipfile.ZipFile(wheel).read(top_level[0]).decode().split() == ["aqgr"]
    for needed in (
        "aqgr/py.typed",
        "aqgr/summarizer/base.py",
        "aqgr/retrieval/embedded/index.py",
        "aqgr/schemas/summary.py",
        "aqgr/eval/harness.py",
        "aqgr/sample/scenarios.json",
        "aqgr/sample/judgments/SC001.txt",
        "aqgr/summarizer/llm/prompts/summary.v1.txt",
        "aqgr/eval/data/expected_scores.json",
        "aqgr/prompts/questions.v1.txt",
        "aqgr/interfaces/server/static/index.html",
    ):
        assert needed in names, needed


def _demo(python_path: str, cwd: Path, home: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": python_path, "HF_HUB_OFFLINE": "1"}
    env.pop("AQGR_HOME", None)
    done = subprocess.run(
        [sys.executable, "-c", "import aqgr; print(aqgr.__file__)"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    where = done.stdout.strip()
    done = subprocess.run(
        [sys.executable, "-c", DEMO, str(home)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout)
    answer.pop("timings_ms")
    return where, _rounded(answer)


def _rounded(value):
    """Floats to 4 decimals: the embedding's last bits may differ between two runs on a loaded machine."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def test_demo_from_the_installed_wheel_matches_the_checkout(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert sorted(p.name for p in target.iterdir() if not p.name.endswith(".dist-info") and p.name != "bin") == ["aqgr"]
    empty = tmp_path / "empty"
    empty.mkdir()
    where, installed = _demo(str(target), empty, tmp_path / "home-wheel")
    assert Path(where).is_relative_to(target)  # the wheel's copy ran, not the checkout
    _, checkout = _demo(str(REPO), REPO, tmp_path / "home-checkout")
    assert installed["hits"]
    assert installed == checkout, _differences(installed, checkout)


def _differences(a, b, path="") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for key in sorted(set(a) | set(b)) for d in _differences(a.get(key), b.get(key), f"{path}.{key}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def test_an_editable_install_is_a_plain_path_holding_only_aqgr(tmp_path):
    """`pip install -e .` (the README's commands) adds src/ to sys.path: no import hook, so type
    checkers follow it, and from any folder `aqgr.summarizer` imports while `summarizer` does not."""
    import importlib.metadata as metadata

    pth = [
        f
        for dist in metadata.distributions(name="aqgr")
        for f in dist.files or []
        if f.name.startswith("__editable__") and f.suffix == ".pth"
    ]
    if not pth:
        pytest.skip("aqgr is not installed in editable mode here")
    lines = [line for line in pth[0].locate().read_text().splitlines() if line.strip()]
    assert len(lines) == 1 and not lines[0].startswith("import"), lines
    assert (Path(lines[0]) / "aqgr").resolve() == (REPO / "aqgr").resolve()
    code = "import importlib.util as u; print(u.find_spec('aqgr.summarizer') is not None, u.find_spec('summarizer') is None)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["True", "True"], done.stdout + done.stderr
