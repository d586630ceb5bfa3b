"""The evaluation measures the product through its public or internal pipeline objects: no eval
module imports a private (_underscore) name from aqgr, nor reads another object's private attribute."""

from __future__ import annotations

import ast
from pathlib import Path

EVAL = Path(__file__).resolve().parents[2] / "eval"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_eval_module_reaches_into_private_names():
    found = []
    for path in sorted(EVAL.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(EVAL.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("aqgr"):
                found += [f"{where} {node.module}.{a.name}" for a in node.names if _private(a.name)]
                found += [f"{where} {node.module}" for part in node.module.split(".") if _private(part)]
            elif isinstance(node, ast.Import):
                found += [
                    f"{where} {a.name}"
                    for a in node.names
                    if a.name.startswith("aqgr") and any(map(_private, a.name.split(".")))
                ]
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    found.append(f"{where} {ast.unparse(node)}")
    assert not found, "eval reaches into private names:\n" + "\n".join(found)
