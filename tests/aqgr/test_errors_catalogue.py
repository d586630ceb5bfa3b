"""One catalogue of errors: aqgr/foundation/errors.py defines every aqgr error, and `aqgr` exports each one."""

import ast
import inspect
from pathlib import Path

import aqgr
import aqgr.foundation.errors

REPO = Path(__file__).resolve().parents[2]
CATALOGUE = {
    name: cls
    for name, cls in vars(aqgr.foundation.errors).items()
    if inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == "aqgr.foundation.errors"
}


def test_every_error_is_exported_from_aqgr_and_documented():
    assert "AqgrError" in CATALOGUE and "NoStatutesError" in CATALOGUE
    for name, cls in CATALOGUE.items():
        assert name in aqgr.__all__, name
        assert getattr(aqgr, name) is cls
        assert (cls.__doc__ or "").strip(), f"{name} has no docstring: the catalogue says what it means"


def test_no_aqgr_error_is_defined_outside_the_catalogue():
    offenders = []
    folders = ["aqgr", "summarizer", "retrieval", "schemas", "eval"]
    for path in sorted(p for folder in folders for p in (REPO / folder).rglob("*.py")):
        if path == REPO / "aqgr" / "foundation" / "errors.py" or "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(base, "id", getattr(base, "attr", "")) for base in node.bases}
                if bases & set(CATALOGUE):
                    offenders.append(f"{path.relative_to(REPO)}: {node.name}")
    assert offenders == []
