"""Build a citation benchmark from an archive: queries, qrels, exclusions and stats.

The method of the shared `aila2019-citebench` (see its README), for any archive:
in-archive citations (retrieval.citations.links) make the relevant sets; the citing
judgment's facts (its paragraphs before its first citation, citation sentences removed,
masked like AILA) make the query; links to judgments cited by more than
`popularity_cap` archive judgments are dropped; queries with too few words of facts are
dropped; the citing judgment is recorded so that it is excluded from its own ranking.

With statutes (`statutes=`, `--statutes DIR`): the statutes each citing judgment quotes
word for word (retrieval/quotes.py) are its query's relevant statutes (qrels_statutes.txt,
read by `--protocol aila-statutes`), as AILA counted the statutes a query judgment cited;
sentences of the facts that quote a statute are dropped, since they would give the answer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aqgr.eval.citebench.mask import mask
from aqgr.foundation.errors import DatasetError
from aqgr.retrieval.citations.judgments import Judgment, read_archive
from aqgr.retrieval.citations.links import Link, find_links
from aqgr.retrieval.citations.normalize import citations

FORMAT_VERSION = "citebench.v1"
STATUTE_QRELS = "qrels_statutes.txt"  # eval/datasets.py QRELS_FILES["statutes"] looks for it


@dataclass(frozen=True, kw_only=True)
class CitebenchSettings:
    """Defaults are the shared benchmark's: a link counts when the cited judgment is cited
    by at most 2 archive judgments (the most-cited ones are long and reward weak length
    normalisation); facts under 50 words make no usable query; facts are cut to whole
    sentences within 600 words, the length of an AILA query."""

    popularity_cap: int = 2
    min_words: int = 50
    # AILA 2019's own queries: median 529 words, 90th percentile 809; whole sentences kept.
    max_words: int = 600
    query_prefix: str = "PQ_"


@dataclass
class Benchmark:
    queries: dict[str, str]  # qid -> masked facts
    qrels: dict[str, list[str]]  # qid -> cited judgment ids
    citing: dict[str, str]  # qid -> citing judgment id
    links: list[Link]  # every mention found (before the cap)
    stats: dict = field(default_factory=dict)
    statute_qrels: dict[str, list[str]] | None = None  # qid -> statutes the citing judgment quotes


_CASE_NAME = re.compile(r"[A-Z][\w.'&@-]*\s+(?:v|vs|versus|v/s)\.?\s+(?:[A-Z(\[]|the\s)", re.I)
_ABBREV = frozenset(
    """v vs mr mrs ms dr smt shri sri no nos s ss sec secs art arts cl j jj ltd co pvt
st etc viz ors anr u cr crl cri hon ld sub para paras p pp vol ed rs ch""".split()
)
_PARA_NO = re.compile(r"^\s*\(?\d{1,3}\s*[.)]\s*")


def build_benchmark(
    docs_dir: Path,
    doc_ids,
    settings: CitebenchSettings = CitebenchSettings(),
    progress: Callable[[str, int, int], None] | None = None,
    statutes: Mapping[str, str] | None = None,
) -> Benchmark:
    """`statutes` (id -> text) adds statute qrels: the statutes each citing judgment quotes."""
    from aqgr.retrieval.quotes import QuoteFinder

    judgments = read_archive(docs_dir, doc_ids)
    finder = QuoteFinder(statutes) if statutes else None
    # any shingle of a statute marks a sentence as quoting it
    sentence_finder = QuoteFinder(statutes, min_shingles=1) if statutes else None
    links = find_links(judgments)
    pairs: dict[str, set[str]] = defaultdict(set)
    for link in links:
        pairs[link.citing].add(link.cited)
    cited_by: dict[str, set[str]] = defaultdict(set)
    for citing, cited in pairs.items():
        for doc in cited:
            cited_by[doc].add(citing)
    capped = {c: {d for d in cited if len(cited_by[d]) <= settings.popularity_cap} for c, cited in pairs.items()}
    capped = {c: cited for c, cited in capped.items() if cited}
    by_citing: dict[str, list[Link]] = defaultdict(list)
    for link in links:
        by_citing[link.citing].append(link)
    queries, qrels, citing_of, short = {}, {}, {}, 0
    for n, doc_id in enumerate(sorted(capped, key=_natural_key), start=1):
        facts = query_facts(
            judgments[doc_id],
            by_citing[doc_id],
            settings.max_words,
            drop=(lambda sentence: bool(sentence_finder.quoted(sentence))) if sentence_finder else None,
        )
        if progress:
            progress("facts", n, len(capped))
        if len(facts.split()) < settings.min_words:
            short += 1
            continue
        qid = settings.query_prefix + doc_id
        queries[qid] = facts
        qrels[qid] = sorted(capped[doc_id], key=_natural_key)
        citing_of[qid] = doc_id
    statute_qrels = None
    if finder is not None:
        statute_qrels = {}
        for qid, doc_id in citing_of.items():
            quoted = finder.quoted("\n".join(judgments[doc_id].paragraphs))
            if quoted:
                statute_qrels[qid] = sorted(quoted, key=_natural_key)
    n_links = sum(len(v) for v in qrels.values())
    stats = {
        "format": FORMAT_VERSION,
        "settings": asdict(settings),
        "judgments": len(judgments),
        "judgments_with_date": sum(1 for j in judgments.values() if j.date),
        "mentions_found": len(links),
        "links_before_cap": sum(len(v) for v in pairs.values()),
        "links_by_title": len({(l.citing, l.cited) for l in links if l.how == "title"}),
        "links_by_reporter_citation": len({(l.citing, l.cited) for l in links if l.how == "citation"}),
        "citing_judgments_before_cap": len(pairs),
        "cited_judgments_before_cap": len(cited_by),
        "links_after_cap": sum(len(v) for v in capped.values()),
        "citing_judgments_after_cap": len(capped),
        "dropped_facts_too_short": short,
        "queries": len(queries),
        "links": n_links,
        "mean_relevant_per_query": round(n_links / len(queries), 3) if queries else 0.0,
        "mean_query_words": round(sum(len(q.split()) for q in queries.values()) / len(queries), 1) if queries else 0.0,
    }
    if statute_qrels is not None:
        stats["statutes"] = len(statutes)
        stats["statute_queries"] = len(statute_qrels)
        stats["statute_links"] = sum(len(v) for v in statute_qrels.values())
    return Benchmark(queries, qrels, citing_of, links, stats, statute_qrels)


def query_facts(
    judgment: Judgment, links: list[Link], max_words: int | None = None, drop: Callable[[str], bool] | None = None
) -> str:
    """The paragraphs before the first citation (an in-archive link or any reporter
    citation), with sentences naming a case ("X v. Y") removed (and those `drop` says),
    masked, cut to whole sentences within `max_words`."""
    first = min([l.paragraph for l in links], default=len(judgment.paragraphs))
    for p, paragraph in enumerate(judgment.paragraphs[:first]):
        if citations(paragraph):
            first = p
            break
    kept = []
    for paragraph in judgment.paragraphs[:first]:
        text = _PARA_NO.sub("", paragraph)
        kept += [s for s in sentences(text) if not _CASE_NAME.search(s) and not citations(s) and not (drop and drop(s))]
    facts = " ".join(mask(" ".join(kept), (judgment.appellant, judgment.respondent)).split())
    return facts if max_words is None else clip_words(facts, max_words)


def clip_words(text: str, max_words: int) -> str:
    """Whole sentences up to `max_words` words (the first sentence cut if it alone is longer)."""
    if len(text.split()) <= max_words:
        return text
    out, n = [], 0
    for sentence in sentences(text):
        k = len(sentence.split())
        if n + k > max_words:
            break
        out.append(sentence)
        n += k
    return " ".join(out) if out else " ".join(text.split()[:max_words])


def sentences(text: str) -> list[str]:
    """Split at ". " before a capital, except after abbreviations and initials."""
    out, start = [], 0
    for m in re.finditer(r"[.?!][\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])", text):
        word = re.search(r"([A-Za-z]+)\.?[\"')\]]*$", text[start : m.start() + 1])
        if word and (word.group(1).lower() in _ABBREV or len(word.group(1)) == 1):
            continue
        out.append(text[start : m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    return out + ([tail] if tail else [])


def write_benchmark(bench: Benchmark, out_dir: Path, source: str, command: str | None = None) -> Path:
    """Write queries.txt, qrels.txt, citing.tsv, links.tsv, stats.json and README.md
    atomically (a temporary folder, then a rename); an earlier benchmark there is replaced,
    any other non-empty folder is refused."""
    out_dir = Path(out_dir).expanduser()
    if out_dir.exists() and (
        not out_dir.is_dir() or (any(out_dir.iterdir()) and not (out_dir / "stats.json").is_file())
    ):
        raise DatasetError(f"{out_dir} exists and is not a citation benchmark: give a new folder with --out")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        (tmp / "queries.txt").write_text("".join(f"{q}||{t}\n" for q, t in bench.queries.items()), encoding="utf-8")
        (tmp / "qrels.txt").write_text(
            "".join(f"{q} Q0 {d} 1\n" for q, docs in bench.qrels.items() for d in docs), encoding="utf-8"
        )
        (tmp / "citing.tsv").write_text(
            "query_id\tciting_judgment\n" + "".join(f"{q}\t{d}\n" for q, d in bench.citing.items()), encoding="utf-8"
        )
        (tmp / "links.tsv").write_text(
            "citing\tcited\thow\tparagraph\tevidence\n"
            + "".join(
                f"{l.citing}\t{l.cited}\t{l.how}\t{l.paragraph}\t{l.evidence}\n"
                for l in sorted(
                    bench.links, key=lambda l: (_natural_key(l.citing), l.paragraph, _natural_key(l.cited), l.how)
                )
            ),
            encoding="utf-8",
        )
        if bench.statute_qrels is not None:
            (tmp / STATUTE_QRELS).write_text(
                "".join(f"{q} Q0 {d} 1\n" for q, docs in bench.statute_qrels.items() for d in docs), encoding="utf-8"
            )
        stats = {**bench.stats, "source": source, **({"command": command} if command else {})}
        (tmp / "stats.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
        (tmp / "README.md").write_text(readme(stats), encoding="utf-8")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def readme(stats: dict) -> str:
    s = stats["settings"]
    return f"""# A citation benchmark built from {stats["source"]}

Built by `aqgr eval build-citation-benchmark` ({stats["format"]}): the archive's own
citations as relevance judgments, the way the FIRE 2019 AILA track built its queries.

| file | what |
| --- | --- |
| `queries.txt` | {stats["queries"]} queries `QID||facts`: a citing judgment's paragraphs before its first citation, sentences naming a case removed, masked (`P1`, `Act A1`, `Section S`) |
| `qrels.txt` | TREC qrels `QID Q0 doc 1`: the archive judgments it cites ({stats["links"]} links, {stats["mean_relevant_per_query"]} per query) |
| `citing.tsv` | `QID<TAB>doc`: the citing judgment. **Exclude it from that query's ranking**; it contains the query text |
| `links.tsv` | every citation found before the cap, with the matched text (for checking by hand) |
| `stats.json` | the counts below and the settings |

Links found: {stats["links_before_cap"]} ({stats["links_by_title"]} by case title, {stats["links_by_reporter_citation"]} by reporter citation; a link may be both).
Popularity cap {s["popularity_cap"]}: a link counts only when the cited judgment is cited by at most
{s["popularity_cap"]} archive judgments ({stats["links_after_cap"]} links left). Facts under {s["min_words"]} words: {stats["dropped_facts_too_short"]} queries dropped.

Use it with `python -m aqgr.eval --data <this folder> --docs <the archive>`.
{_statute_readme(stats)}"""


def _statute_readme(stats: dict) -> str:
    if "statute_queries" not in stats:
        return ""
    return f"""
Statutes ({stats["statutes"]}): `qrels_statutes.txt` lists, for {stats["statute_queries"]} queries, the statutes the citing
judgment quotes word for word ({stats["statute_links"]} links; sentences of the facts quoting a statute were dropped).
Use it with `python -m aqgr.eval --protocol aila-statutes --data <this folder> --docs <the folder holding Object_statutes/>`;
the citing judgment is then excluded from the case ranking that supplies questions and precedents.
"""


def _natural_key(name: str) -> tuple:
    m = re.match(r"^(.*?)(\d+)$", name)
    return (m.group(1), int(m.group(2)), name) if m else (name, -1, name)
