"""Old and new codes as one: section correspondence tables, section references in text.

When a legislature replaces a code (India, 1 July 2024: the Indian Penal Code by the
Bharatiya Nyaya Sanhita, the Code of Criminal Procedure by the Bharatiya Nagarik Suraksha
Sanhita, the Indian Evidence Act by the Bharatiya Sakshya Adhiniyam), facts written today
cite the new sections ("Section 103 BNS") while the precedents cite the old ones ("Section
302 IPC"). A correspondence table maps old sections to new ones; with one loaded:

* `Correspondence.find(text)`: the section references of the table's codes in a text, in
  the forms judgments use ("s. 302 IPC", "Sections 302/34 I.P.C.", "Section 302 of the
  Indian Penal Code, 1860", "Sec. 103(1) BNS", "u/s 438 Cr.P.C.", "Section 32 of the
  Evidence Act").
* `expand(query)`: the query followed by each reference's counterpart in the other code,
  in both the short and the long form, so that the lexical retrievers match judgments
  written either way (query-side: the index is not touched).
* `describe(text)`: one line per reference, "Section 302 IPC, now Section 103(1) BNS", shown
  beside search and statute hits.
* `rewrite(text)`: the references moved into the other code, in the same form (for the
  benchmark, aqgr/eval/bench/correspondence.py).

Tables are CSV files, one row per (old section, new section) pair: `old_act, old_section,
new_act, new_section` and optionally `subject`, `note`, `old_act_name`, `new_act_name`
(the codes are named by the table, so nothing here is tied to one country; the names of the
Indian codes are known below, another code is recognised by its table name and the names
its rows give). An empty `old_section` is a new provision, an empty `new_section` an old
one omitted. A section mapped to several sections keeps all of them (IPC 498A -> BNS 85 and
86); a malformed line is reported with its line number and the rest is loaded.

An archive keeps its tables in `<home>/statutes/correspondence.json` (`CorrespondenceStore`,
filled by `aqgr statutes --correspondence FILE`); the package ships a small sample table
(`aqgr/sample/correspondence.csv`), and the full Indian tables are read from
`$AQGR_DATASETS/statute-correspondence/` or any path the user gives.
"""

from __future__ import annotations

import csv
import io
import json
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aqgr.foundation.errors import ReadError
from aqgr.foundation.files import write_atomic
from aqgr.foundation.inputs import files_in
from aqgr.foundation.paths import SAMPLE

SAMPLE_TABLE = SAMPLE / "correspondence.csv"
STORE_FILE = "correspondence.json"
STORE_VERSION = 1
REQUIRED_COLUMNS = ("old_act", "old_section", "new_act", "new_section")
DESCRIBED = 8  # most correspondence lines shown for one hit


@dataclass(frozen=True)
class CodeNames:
    """How texts name a code: abbreviations (dots and spaces between letters allowed:
    "I.P.C.", "Cr. P.C."), full names (an "of the" before and a year after allowed), and
    the full name written by `rewrite` and `describe` in the long form."""

    abbreviations: tuple[str, ...]
    names: tuple[str, ...] = ()
    title: str = ""


# The Indian criminal codes and their replacements. Any other code is named by its table.
KNOWN_CODES: dict[str, CodeNames] = {
    "IPC": CodeNames(("IPC",), ("Indian Penal Code", "Penal Code"), "Indian Penal Code, 1860"),
    "BNS": CodeNames(("BNS",), ("Bharatiya Nyaya Sanhita", "Bharatiya Nyay Sanhita"), "Bharatiya Nyaya Sanhita, 2023"),
    "CrPC": CodeNames(
        ("CrPC", "CRPC", "Cr.PC"),
        ("Code of Criminal Procedure", "Criminal Procedure Code"),
        "Code of Criminal Procedure, 1973",
    ),
    "BNSS": CodeNames(("BNSS",), ("Bharatiya Nagarik Suraksha Sanhita",), "Bharatiya Nagarik Suraksha Sanhita, 2023"),
    "IEA": CodeNames(("IEA",), ("Indian Evidence Act", "Evidence Act"), "Indian Evidence Act, 1872"),
    "BSA": CodeNames(("BSA",), ("Bharatiya Sakshya Adhiniyam",), "Bharatiya Sakshya Adhiniyam, 2023"),
}

_SECTION = re.compile(r"^\d{1,4}[A-Z]{0,3}(?:\([0-9A-Za-z]{1,5}\))*$")


@dataclass(frozen=True)
class Row:
    """One (old section, new section) pair of a table; an empty side: new or omitted provision."""

    old_act: str
    old_section: str
    new_act: str
    new_section: str
    subject: str = ""
    note: str = ""
    line: int = 0


@dataclass(frozen=True)
class Problem:
    """A table line that was not loaded, and why."""

    source: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.source}, line {self.line}: {self.reason}"


@dataclass(frozen=True)
class Reference:
    """A section reference found in a text: `sections` of `code`, at text[start:end]; `long`
    when the code was written by its full name."""

    code: str
    sections: tuple[str, ...]
    start: int
    end: int
    long: bool


def normalise_section(raw: str) -> str:
    """'304-B' -> '304B', '103 (1)' -> '103(1)', '498a' -> '498A', '2(1)(C)' -> '2(1)(c)'."""
    raw = re.sub(r"[\s\-]", "", re.sub(r"\s+Part\s+\w+$", "", raw, flags=re.IGNORECASE))
    m = re.match(r"(\d+)([A-Za-z]*)(.*)", raw)
    if not m:
        return raw
    return m.group(1) + m.group(2).upper() + m.group(3).lower()


def base_section(section: str) -> str:
    """The section without its sub-sections: '103(1)' -> '103'."""
    return section.split("(", 1)[0]


def _abbreviation_pattern(abbr: str) -> str:
    """'CrPC' -> 'Cr\\.?\\s?P\\.?\\s?C\\.?' (each capital starts a part; dots and a space may follow parts)."""
    parts = re.findall(r"[A-Z][a-z]*|[a-z]+|\d+|\.", abbr)
    parts = [p for p in parts if p != "."]
    return r"\.?\s?".join(re.escape(p) for p in parts) + r"\.?"


def _name_pattern(name: str) -> str:
    return r"\s+".join(re.escape(w) for w in name.split())


_SEC_WORD = r"(?:\bu/ss?\.?\s*|\bsections?\s*|\bsecs?\.?\s*|\bss?\.\s*)"
_NUM = (
    r"\d{1,4}(?:\s?-\s?[A-Za-z]{1,2}\b|(?-i:[A-Z]{1,2})\b|[a-z]\b|\s(?-i:[A-Z])\b)?(?:\s?\(\s?[0-9A-Za-z]{1,4}\s?\))*"
    r"(?:\s+Part\s+(?:I{1,3}|[123])\b)?"
)  # "Section 304 Part II": the part is not kept
_SEP = r"\s*(?:,|/|&|\band\b|\bor\b|\bread\s+with\b|\br/w\b|\bwith\b)\s*(?:(?:sections?|secs?\.?|ss?\.)\s*)?"
_YEAR = r"(?:\s*,?\s*\(?(?:1[89]|20)\d\d\)?)?"
_NUM_RE = re.compile(_NUM, re.IGNORECASE)


# The search filters name the Evidence Act by its words (aqgr.retrieval.embedded.facets); the tables by "IEA".
_FACET_TO_TABLE = {"Evidence Act": "IEA"}
_TABLE_TO_FACET = {v: k for k, v in _FACET_TO_TABLE.items()}


class Correspondence:
    """The loaded tables (any number of old -> new code pairs) and what they answer."""

    def __init__(
        self, rows: Iterable[Row], problems: Sequence[Problem] = (), names: dict[str, CodeNames] | None = None
    ):
        self.rows: list[Row] = list(rows)
        self.problems = list(problems)
        self.names = dict(KNOWN_CODES)
        for code, extra in (names or {}).items():
            known = self.names.get(code, CodeNames((code,), (), ""))
            self.names[code] = CodeNames(
                tuple(dict.fromkeys(known.abbreviations + extra.abbreviations)),
                tuple(dict.fromkeys(known.names + extra.names)),
                known.title or extra.title,
            )
        self._forward: dict[str, list[Row]] = {}  # "CODE section" -> rows, on both sides
        self._by_base: dict[str, list[Row]] = {}
        self.pairs: list[tuple[str, str]] = []
        for row in self.rows:
            if (row.old_act, row.new_act) not in self.pairs:
                self.pairs.append((row.old_act, row.new_act))
            for code, section in ((row.old_act, row.old_section), (row.new_act, row.new_section)):
                if section:
                    self._forward.setdefault(f"{code} {section}", []).append(row)
                    self._by_base.setdefault(f"{code} {base_section(section)}", []).append(row)
            for code in (row.old_act, row.new_act):
                self.names.setdefault(code, CodeNames((code,), (), ""))
        self.old_codes = {o for o, _ in self.pairs}
        self._pattern = self._compile()

    def __len__(self) -> int:
        return len(self.rows)

    def __bool__(self) -> bool:
        return bool(self.rows)

    # -- recognition -------------------------------------------------------
    def _codes(self) -> list[str]:
        return sorted({c for pair in self.pairs for c in pair})

    def _compile(self) -> re.Pattern | None:
        codes = self._codes()
        if not codes:
            return None
        alternatives = []
        for i, code in enumerate(codes):
            names = self.names[code]
            longs = sorted(names.names, key=len, reverse=True)
            shorts = sorted(names.abbreviations, key=len, reverse=True)
            parts = [rf"(?P<L{i}>(?:the\s+)?(?:{'|'.join(map(_name_pattern, longs))}){_YEAR})"] if longs else []
            parts.append(rf"(?P<S{i}>(?:{'|'.join(map(_abbreviation_pattern, shorts))})(?![A-Za-z]))")
            alternatives += parts
        code = "|".join(alternatives)
        pattern = rf"(?<![\w.]){_SEC_WORD}?(?P<list>{_NUM}(?:{_SEP}{_NUM})*)\s*,?\s*(?:of\s+(?:the\s+)?)?(?:{code})"
        return re.compile(pattern, re.IGNORECASE)

    def find(self, text: str) -> list[Reference]:
        """The references to the tables' codes in `text`, in order."""
        if self._pattern is None or not text:
            return []
        codes = self._codes()
        out = []
        for m in self._pattern.finditer(text):
            group = next(g for g, v in m.groupdict().items() if v is not None and g != "list")
            sections = tuple(dict.fromkeys(normalise_section(n.group(0)) for n in _NUM_RE.finditer(m.group("list"))))
            out.append(Reference(codes[int(group[1:])], sections, m.start(), m.end(), group[0] == "L"))
        return out

    # -- lookup ------------------------------------------------------------
    def counterparts(self, code: str, section: str) -> list[tuple[str, str, Row]]:
        """(other code, its section, the row) for `section` of `code`, on whichever side of a
        table `code` is: the exact section, else its sub-sections or its parent section."""
        section = normalise_section(section)
        rows = self._forward.get(f"{code} {section}")
        if not rows and "(" in section:
            rows = self._forward.get(f"{code} {base_section(section)}")
        if not rows:
            rows = self._by_base.get(f"{code} {base_section(section)}", [])
        out: list[tuple[str, str, Row]] = []
        for row in rows:
            if row.old_act == code and base_section(row.old_section) == base_section(section) and row.new_section:
                out.append((row.new_act, row.new_section, row))
            elif row.new_act == code and base_section(row.new_section) == base_section(section) and row.old_section:
                out.append((row.old_act, row.old_section, row))
        seen: set[tuple[str, str]] = set()
        return [c for c in out if (c[0], c[1]) not in seen and not seen.add((c[0], c[1]))]

    def section_equivalents(self, label: str) -> list[str]:
        """The search filters' labels of the provisions a filter label's section corresponds to
        ("IPC s. 302" -> ["BNS s. 103"]; aqgr.retrieval.embedded.facets labels name a section by its
        number, without sub-sections): for `Facets.select`."""
        from aqgr.retrieval.embedded.facets import section_label

        act, sep, number = label.partition(" s. ")
        if not sep:
            return []
        code = _FACET_TO_TABLE.get(act, act)
        out = []
        for other, section, _ in self.counterparts(code, number):
            other_act = _TABLE_TO_FACET.get(other, other)
            out.append(section_label(other_act, base_section(section)))
        return list(dict.fromkeys(out))

    def is_old(self, code: str) -> bool:
        return code in self.old_codes

    def _has_code(self, code: str) -> bool:
        return any(code in pair for pair in self.pairs)

    # -- what the search uses ----------------------------------------------
    def expand(self, query: str, *, both_forms: bool = False) -> str:
        """The query, then each referenced section's counterparts in the other code, written the
        way the reference was ("Section 103 BNS" -> "Section 302 IPC"; "Section 103 of the
        Bharatiya Nyaya Sanhita" -> "Section 302 of the Indian Penal Code"), or in both forms
        (`both_forms`); the query as it is when it names no section of the tables."""
        added: list[str] = []
        for ref in self.find(query):
            for section in ref.sections:
                for other, other_section, _ in self.counterparts(ref.code, section):
                    names = self.names[other]
                    short = f"Section {other_section} {names.abbreviations[0]}"
                    long = f"Section {other_section} of the {names.names[0]}" if names.names else short
                    forms = [short, long] if both_forms else [long if ref.long else short]
                    added += [f for f in forms if f not in added]
        return query if not added else query + "\n" + "; ".join(added)

    def describe(self, text: str, *, facts: str = "", limit: int = DESCRIBED) -> list[str]:
        """One line per section of the tables referenced in `text`: "Section 302 IPC, now
        Section 103(1) BNS", "Section 103 BNS, formerly Section 302 IPC", "Section 377 IPC: no
        counterpart in BNS"; the sections that `facts` name (in either code) first."""
        asked: set[tuple[str, str]] = set()
        for ref in self.find(facts):
            for section in ref.sections:
                asked.add((ref.code, base_section(section)))
                asked |= {(c, base_section(s)) for c, s, _ in self.counterparts(ref.code, section)}
        lines: list[tuple[bool, str]] = []
        for ref in self.find(text):
            for section in ref.sections:
                line = self.describe_section(ref.code, section)
                if line and line not in (told for _, told in lines):
                    lines.append(((ref.code, base_section(section)) not in asked, line))
        return [line for _, line in sorted(lines, key=lambda found: found[0])][:limit]

    def describe_section(self, code: str, section: str) -> str:
        short = self.names[code].abbreviations[0] if code in self.names else code
        found = self.counterparts(code, section)
        if not found:
            others = sorted({n for o, n in self.pairs if o == code} | {o for o, n in self.pairs if n == code})
            if not others:
                return ""
            return (
                f"Section {section} {short}: no counterpart in {', '.join(others)} (the correspondence table has none)"
            )
        by_code: dict[str, list[str]] = {}
        for other, other_section, _ in found:
            by_code.setdefault(other, []).append(other_section)
        word = "now" if self.is_old(code) else "formerly"
        told = []
        for other, sections in by_code.items():
            label = "Section" if len(sections) == 1 else "Sections"
            listed = sections[0] if len(sections) == 1 else ", ".join(sections[:-1]) + " and " + sections[-1]
            told.append(f"{label} {listed} {self.names[other].abbreviations[0]}")
        return f"Section {section} {short}, {word} {' / '.join(told)}"

    # -- the benchmark's rewriting -----------------------------------------
    def rewrite(self, text: str, *, to_new: bool = True, names: bool = True) -> tuple[str, int, int]:
        """`text` with each reference to an old code (a new one, `to_new=False`) written in the
        other code, in the same form ("Section 302 of the Indian Penal Code" -> "Section 103(1)
        of the Bharatiya Nyaya Sanhita, 2023"; "s. 302 IPC" -> "Section 103(1) BNS"); returns
        (text, references rewritten, references left as they were because a section has no
        counterpart). With `names`, the codes named outside a reference are renamed too
        ("(in short 'IPC')" -> "(in short 'BNS')")."""
        out, last, done, left = [], 0, 0, 0
        gap = (lambda piece: self._rename_codes(piece, to_new)) if names else (lambda piece: piece)
        for ref in self.find(text):
            if self.is_old(ref.code) != to_new:
                continue
            targets: list[str] = []
            other_code = ""
            for section in ref.sections:
                found = self.counterparts(ref.code, section)
                if not found:
                    targets = []
                    break
                other_code = found[0][0]
                targets += [s for c, s, _ in found if c == other_code and s not in targets]
            if not targets:  # kept as written, its code's name included
                out += [gap(text[last : ref.start]), text[ref.start : ref.end]]
                last = ref.end
                left += 1
                continue
            code_names = self.names[other_code]
            label = "Section" if len(targets) == 1 else "Sections"
            listed = targets[0] if len(targets) == 1 else ", ".join(targets[:-1]) + " and " + targets[-1]
            long_name = code_names.title or (code_names.names[0] if code_names.names else "")
            code_text = f"of the {long_name}" if ref.long and long_name else code_names.abbreviations[0]
            out += [gap(text[last : ref.start]), f"{label} {listed} {code_text}"]
            last = ref.end
            done += 1
        out.append(gap(text[last:]))
        return "".join(out), done, left

    def _rename_codes(self, text: str, to_new: bool) -> str:
        """The codes' names outside section references ("(in short 'IPC')") moved to the other code."""
        for old, new in self.pairs:
            source, target = (old, new) if to_new else (new, old)
            have, want = self.names[source], self.names[target]
            if want.names or want.title:
                for name in sorted(have.names, key=len, reverse=True):
                    text = re.sub(
                        rf"(?<![\w]){_name_pattern(name)}{_YEAR}",
                        want.title or want.names[0],
                        text,
                        flags=re.IGNORECASE,
                    )
            for abbr in have.abbreviations:
                text = re.sub(rf"(?<![\w.]){_abbreviation_pattern(abbr)}(?![A-Za-z])", want.abbreviations[0], text)
        return text


def summary_text(summary) -> str:
    """The parts of a structured summary that name sections: statutes, issues, facts, reasoning."""
    statutes = [f"{ref.name} {ref.principle or ''}" for ref in summary.statutes]
    return "\n".join([*statutes, *summary.issues, summary.facts or "", summary.reasoning or ""])


# -- loading ---------------------------------------------------------------
def parse_table(text: str, source: str = "table") -> tuple[list[Row], list[Problem], dict[str, CodeNames]]:
    """The rows of one CSV table, the lines not loaded (with why), and the code names its
    `old_act_name`/`new_act_name` columns give. Raises ReadError when the header lacks a
    required column (nothing could be loaded)."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise ReadError(source, "empty", "the correspondence table is empty") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ReadError(
            source,
            "bad_header",
            f"the header lacks the column(s) {', '.join(missing)}; "
            f"a correspondence table starts with: {','.join(REQUIRED_COLUMNS)},subject,note",
        )
    col = {name: i for i, name in enumerate(header)}
    rows: list[Row] = []
    problems: list[Problem] = []
    names: dict[str, CodeNames] = {}
    seen: dict[tuple[str, str, str, str], int] = {}
    line = reader.line_num
    while True:
        start = line + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(source, start, f"not CSV: {exc}"))
            line = reader.line_num
            continue
        line = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            problems.append(Problem(source, start, f"{len(cells)} fields where the header has {len(header)}"))
            continue
        get = {name: cells[i].strip() for name, i in col.items()}
        old_act, new_act = get["old_act"], get["new_act"]
        old, new = normalise_section(get["old_section"]), normalise_section(get["new_section"])
        if not old_act or not new_act:
            problems.append(Problem(source, start, "old_act and new_act must both be named"))
            continue
        if not old and not new:
            problems.append(Problem(source, start, "neither old_section nor new_section is given"))
            continue
        bad = [s for s in (old, new) if s and not _SECTION.match(s)]
        if bad:
            problems.append(Problem(source, start, f"not a section number: {bad[0]!r} (e.g. 302, 304B, 103(1))"))
            continue
        key = (old_act, old, new_act, new)
        if key in seen:
            problems.append(
                Problem(source, start, f"repeats line {seen[key]} ({old_act} {old} -> {new_act} {new}); kept once")
            )
            continue
        seen[key] = start
        rows.append(Row(old_act, old, new_act, new, get.get("subject", ""), get.get("note", ""), start))
        for code, name_col in ((old_act, "old_act_name"), (new_act, "new_act_name")):
            if get.get(name_col):
                known = names.get(code, CodeNames((code,), (), ""))
                if get[name_col] not in known.names:
                    names[code] = CodeNames(
                        known.abbreviations, known.names + (get[name_col],), known.title or get[name_col]
                    )
    return rows, problems, names


def table_paths(paths: Iterable[str | Path]) -> list[Path]:
    """The .csv files named, or inside the folders named."""
    paths = list(paths)
    found = files_in(
        paths, "*.csv", recursive=False, missing="no such correspondence table (a .csv file or a folder of them)"
    )
    if not found:
        raise ReadError(", ".join(map(str, paths)), "empty", "no correspondence table (.csv) found")
    return found


def load_tables(paths: Iterable[str | Path]) -> Correspondence:
    """The tables at `paths` (files or folders of .csv) as one Correspondence; lines that
    could not be loaded are in its `problems`."""
    rows: list[Row] = []
    problems: list[Problem] = []
    names: dict[str, CodeNames] = {}
    for path in table_paths(paths):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ReadError(str(path), "unreadable", str(exc)) from exc
        got, bad, named = parse_table(text, path.name)
        rows += got
        problems += bad
        names.update(named)
    return Correspondence(rows, problems, names)


@dataclass
class StoreReport:
    """What `CorrespondenceStore.add` loaded: rows per code pair, and the lines it skipped."""

    pairs: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


class CorrespondenceStore:
    """The correspondence tables of one archive home: `<home>/statutes/correspondence.json`.
    Adding a table replaces the rows of the code pairs it holds and keeps the others."""

    def __init__(self, home: Path):
        self.path = Path(home) / "statutes" / STORE_FILE
        self._lock = threading.Lock()
        self._loaded: tuple[tuple, Correspondence | None] | None = None

    def add(self, paths: Iterable[str | Path]) -> StoreReport:
        loaded = load_tables(paths)
        if not loaded.rows:
            shown = "; ".join(map(str, loaded.problems[:5]))
            raise ReadError(
                ", ".join(map(str, paths)),
                "empty",
                f"no row of the table could be loaded{': ' + shown if shown else ''}",
            )
        payload = self._read() or {"version": STORE_VERSION, "rows": [], "names": {}}
        new_pairs = set(loaded.pairs)
        kept = [r for r in payload["rows"] if (r["old_act"], r["new_act"]) not in new_pairs]
        added = [
            {k: getattr(r, k) for k in ("old_act", "old_section", "new_act", "new_section", "subject", "note")}
            for r in loaded.rows
        ]
        payload["rows"] = kept + added
        for code, names in loaded.names.items():
            if code not in KNOWN_CODES:
                payload["names"][code] = {
                    "abbreviations": list(names.abbreviations),
                    "names": list(names.names),
                    "title": names.title,
                }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(payload, ensure_ascii=False))
        report = StoreReport(problems=loaded.problems)
        for row in loaded.rows:
            key = f"{row.old_act} -> {row.new_act}"
            report.pairs[key] = report.pairs.get(key, 0) + 1
        return report

    def _read(self) -> dict | None:
        try:
            payload = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None
        return payload if isinstance(payload, dict) and payload.get("version") == STORE_VERSION else None

    def load(self) -> Correspondence | None:
        """The archive's tables, or None when it has none; read again only when the file changed."""
        try:
            st = self.path.stat()
            stamp: tuple = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = ()
        with self._lock:
            if self._loaded is not None and self._loaded[0] == stamp:
                return self._loaded[1]
        payload = self._read() if stamp else None
        found = None
        if payload and payload.get("rows"):
            rows = [
                Row(
                    r["old_act"],
                    r["old_section"],
                    r["new_act"],
                    r["new_section"],
                    r.get("subject", ""),
                    r.get("note", ""),
                )
                for r in payload["rows"]
            ]
            names = {
                c: CodeNames(tuple(n.get("abbreviations", ())), tuple(n.get("names", ())), n.get("title", ""))
                for c, n in payload.get("names", {}).items()
            }
            found = Correspondence(rows, names=names)
        with self._lock:
            self._loaded = (stamp, found)
        return found
