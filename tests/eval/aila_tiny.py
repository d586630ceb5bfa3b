"""A tiny AILA-shaped dataset, written by the tests into tmp_path (never the real data)."""

from __future__ import annotations

from pathlib import Path

CASES = {
    "C1": "Land acquisition compensation award under the statute; the collector fixed market value.",
    "C2": "Dowry death: harassment of the wife by the husband soon before her death; cruelty proved.",
    "C3": "The husband appealed against the decree of divorce granted by the family court.",
    "C4": "Income tax assessment of a partnership firm; deduction of interest disallowed.",
    "C5": "Service law: dismissal of a bank officer after a departmental inquiry into misconduct.",
}
QUERIES = {
    "AILA_Q1": "The wife died after dowry harassment by her husband.",
    "AILA_Q2": "Compensation for land acquisition was too low.",
    "AILA_Q3": "A bank officer was dismissed after an inquiry.",
}
QRELS = """AILA_Q1 Q0 C2 0
AILA_Q1 Q0 C3 1
AILA_Q1 Q0 C1 0
AILA_Q2 Q0 C1 1
AILA_Q2 Q0 C4 0
"""
STATUTES = {
    "S1": ("Punishment for murder", "Whoever commits murder shall be punished with death or imprisonment for life."),
    "S2": (
        "Dowry death",
        "Where the death of a woman is caused within seven years of marriage and she was subjected to cruelty for dowry.",
    ),
    "S3": ("Land acquisition", "Compensation for land acquired shall be the market value on the date of notification."),
}


def write_dataset(root: Path, *, qrels: str = QRELS, citing: str | None = None, statutes: bool = True) -> Path:
    (root / "Object_casedocs").mkdir(parents=True)
    for doc_id, text in CASES.items():
        (root / "Object_casedocs" / f"{doc_id}.txt").write_text(text, encoding="utf-8")
    if statutes:
        (root / "Object_statutes").mkdir()
        for doc_id, (title, desc) in STATUTES.items():
            (root / "Object_statutes" / f"{doc_id}.txt").write_text(f"Title: {title}\nDesc: {desc}\n", encoding="utf-8")
        (root / "relevance_judgments_statutes.dev.txt").write_text(
            "AILA_Q1 Q0 S2 1\nAILA_Q1 Q0 S1 0\nAILA_Q2 Q0 S3 1\n", encoding="utf-8"
        )
    (root / "Query_doc.txt").write_text("".join(f"{q}||{t}\n" for q, t in QUERIES.items()), encoding="utf-8")
    (root / "relevance_judgments_priorcases.dev.txt").write_text(qrels, encoding="utf-8")
    if citing is not None:
        (root / "citing.tsv").write_text(citing, encoding="utf-8")
    return root
