"""The README's table of pinned scores, generated from eval/data/expected_scores.json.

    python -m tests.readme_tables            # print the table
    python -m tests.readme_tables --write    # put it into README.md, between its two markers

The scores are pinned once, in expected_scores.json (checked by the slow regression test,
tests/eval/test_eval_regression.py); the README shows them only through this table, and
tests/test_docs.py regenerates it and compares. Needs nothing but the standard library.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EXPECTED = ROOT / "eval" / "data" / "expected_scores.json"
BEGIN = "<!-- scores: generated from eval/data/expected_scores.json by `python -m tests.readme_tables --write` -->"
END = "<!-- /scores -->"

# (column header, dataset, protocol, measure); the header gets the number of queries scored.
COLUMNS = (
    ("citation benchmark MAP", "aila2019-citebench", "aila-cases", "AP"),
    ("citation benchmark R@100", "aila2019-citebench", "aila-cases", "R@100"),
    ("dev split precedents MAP", "aila2019", "aila-cases", "AP"),
    ("dev split statutes MAP", "aila2019", "aila-statutes", "AP"),
    ("study subset MAP", "aila2019", "study-subset", "AP"),
)
BASELINE, PRODUCT = "bm25-fulltext", "aqgr"


def load(path: Path = EXPECTED) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _runs(expected: dict) -> dict[tuple[str, str, str], dict]:
    """(system, dataset, protocol) -> that run."""
    return {(r["system"], r["dataset"], r["protocol"]): r for r in expected["runs"]}


def scores_table(expected: dict) -> str:
    """The markdown table: one row per system (the baseline first, aqgr last), one column per
    COLUMNS entry, '-' where a system is not pinned there; then aqgr's ratio to the baseline."""
    runs = _runs(expected)
    systems = list(dict.fromkeys(r["system"] for r in expected["runs"]))
    systems.sort(key=lambda s: (s != BASELINE, s == PRODUCT))
    headers = []
    for label, dataset, protocol, _ in COLUMNS:
        counts = {r["n_scored"] for key, r in runs.items() if key[1:] == (dataset, protocol)}
        headers.append(f"{label} ({'/'.join(map(str, sorted(counts)))} queries)")
    lines = ["| system | " + " | ".join(headers) + " |", "| --- |" + " ---: |" * len(COLUMNS)]
    for system in systems:
        cells = []
        for _, dataset, protocol, measure in COLUMNS:
            value = runs.get((system, dataset, protocol), {}).get("mean", {}).get(measure)
            cells.append("-" if value is None else f"{value:.4f}")
        lines.append(f"| `{system}` | " + " | ".join(cells) + " |")
    cite = "aila2019-citebench", "aila-cases"
    ratio = runs[(PRODUCT, *cite)]["mean"]["AP"] / runs[(BASELINE, *cite)]["mean"]["AP"]
    lines += [
        "",
        f"`{PRODUCT}` scores {ratio:.2f}x the MAP of `{BASELINE}` on the citation benchmark. "
        f"Pinned within {expected['tolerance']} by the slow regression test.",
    ]
    return "\n".join(lines)


def block(expected: dict) -> str:
    """The README's text from BEGIN to END inclusive."""
    return f"{BEGIN}\n{scores_table(expected)}\n{END}"


def readme_block(text: str) -> str:
    """The generated block as the README holds it (ValueError when its markers are missing)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"README.md lacks the markers {BEGIN!r} ... {END!r}")
    return text[start : end + len(END)]


def main(argv: list[str]) -> int:
    generated = block(load())
    if argv == ["--write"]:
        text = README.read_text(encoding="utf-8")
        README.write_text(text.replace(readme_block(text), generated), encoding="utf-8")
    elif argv:
        print(__doc__, file=sys.stderr)
        return 2
    else:
        print(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
