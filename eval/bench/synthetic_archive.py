"""Synthetic archives of any size made from real judgments, for the pipeline scale benchmark.

Judgment number i of a synthetic archive is a pure function of (the real corpus, seed, i),
so an archive is generated as a stream (never N texts in memory) and extended later from
where it stopped (10,000 -> 100,000 -> 1,000,000 without regenerating):

* header: a title "Appellant v Respondent" whose party names are made-up words (unique per
  i by construction, and no real word, so real mentions never match them), the court, a
  date (seeded, 1950-2019), a case number, "The Judgment was delivered by: <judge>, J.";
* body: the median number of body paragraphs of the real corpus, renumbered, taken as three
  runs from three random real judgments (the opening of one, the middle of a second, the
  end of a third; topped up from random paragraphs when one is short). Their own citation
  forms stay ("X v. State of Y (1994) 3 SCC 112", "1998 Indlaw SC 438 (supra)");
* citations among the synthetic judgments: 0-3 per judgment of earlier-dated synthetic
  ones, by title with an SCC citation ("In Kavori Dentusa v. Melaru Tisok (1987) 4 SCC
  1000123, this Court held ..."), sometimes repeated later as a bare "(supra)" citation, so
  the citation linker's title and reporter passes both have work;
* structured summary: recombined from the extractive.v1 summaries of the three real
  judgments (summarised once, cached: "base summaries"): facts from the first, arguments,
  issues, reasoning and new principles from the second, final order, statutes, precedents
  and subjects from the third; court, case number, parties, date and bench are the
  synthetic ones, and each synthetic citation is added to the precedents. Running the
  engine itself costs ~30 ms a judgment here (1e6: ~9 h on one core), too slow for the
  one-hour budget, and its cost is not what the scale benchmark measures.

Ids are "J0000000", "J0000001", ... (the benchmark has no relevance labels to leak).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

SEED = 0
FIRST_DAY = dt.date(1950, 1, 1)
DAYS = (dt.date(2019, 12, 31) - FIRST_DAY).days + 1
# Made-up party words: V given names x V surnames, one pair per judgment (4,194,304 titles).
V = 2048
MAX_JUDGMENTS = V * V
_SCRAMBLE = 1_000_003  # odd, so i -> i * _SCRAMBLE mod V*V is a bijection (V is a power of two)
CITES_PER_JUDGMENT = (0, 0, 0, 1, 1, 1, 2, 2, 3)  # drawn uniformly: mean 1.2
SUPRA_CHANCE = 0.3
_NUMBER = re.compile(r"^\s*\d+\s*[.)]\s*")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


@dataclass(frozen=True)
class Donor:
    """One real judgment: its body paragraphs and its extractive summary's slots (JSON)."""

    paragraphs: tuple[str, ...]
    slots: dict


class Corpus:
    """The real judgments a synthetic archive is recombined from, with what it measures of them."""

    def __init__(
        self,
        donors: Sequence[Donor],
        *,
        fingerprint: str,
        engine: str,
        engine_version: str,
        median_paragraphs: int,
        median_chars: int,
    ):
        if not donors:
            raise ValueError(
                "no usable judgment in the corpus (none read, or none the extractive engine could summarise)"
            )
        self.donors = tuple(donors)
        self.fingerprint = fingerprint
        self.engine, self.engine_version = engine, engine_version
        self.median_paragraphs = max(3, median_paragraphs)
        self.median_chars = median_chars
        self.opening = [i for i, d in enumerate(donors) if str(d.slots.get("facts") or "").strip()]
        self.middle = [
            i for i, d in enumerate(donors) if d.slots.get("issues") or str(d.slots.get("reasoning") or "").strip()
        ]
        self.ending = [i for i, d in enumerate(donors) if str(d.slots.get("final_judgment") or "").strip()]
        if not (self.opening and self.middle and self.ending):
            raise ValueError(
                "the corpus' summaries lack facts, issues/reasoning or a final order everywhere: it cannot make summaries"
            )

    @classmethod
    def load(
        cls,
        docs_dir: Path,
        cache_dir: Path,
        *,
        limit: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> "Corpus":
        """The `*.txt` judgments of `docs_dir` (the first `limit` in a seeded order), with their
        extractive.v1 summaries: made now, or read from `cache_dir` when made before."""
        from aqgr.retrieval.citations.judgments import parse_judgment
        from aqgr.summarizer.base import JudgmentText, summarizers

        engine = summarizers.create("extractive.v1")
        files = sorted(Path(docs_dir).glob("*.txt"))
        if not files:
            from aqgr.foundation.errors import DatasetError

            raise DatasetError(
                f"{docs_dir}: no .txt judgments to recombine; give the folder of real judgments (--corpus)"
            )
        random.Random(SEED).shuffle(files)
        files = files[:limit] if limit else files
        fingerprint = hashlib.sha256("\n".join(f"{f.name}:{f.stat().st_size}" for f in files).encode()).hexdigest()[:16]
        cache = Path(cache_dir) / f"base-summaries-{fingerprint}-{engine.name}-{engine.version}.jsonl"
        cached = {}
        if cache.is_file():
            for line in cache.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                cached[row["file"]] = row["slots"]
        donors, n_paragraphs, n_chars, made = [], [], [], []
        for n, path in enumerate(files, 1):
            text = path.read_text(encoding="utf-8", errors="replace")
            body = tuple(_NUMBER.sub("", p) for p in parse_judgment(path.stem, text).paragraphs)
            n_paragraphs.append(len(body))
            n_chars.append(len(text))
            slots = cached.get(path.name)
            if path.name not in cached:
                try:
                    slots = engine.summarize(JudgmentText(path.stem, text, str(path), "")).model_dump(mode="json")
                except Exception:  # noqa: BLE001 - a judgment the engine refuses is simply no donor
                    slots = None
                made.append({"file": path.name, "slots": slots})
            if slots is not None and body:
                donors.append(Donor(body, slots))
            if progress is not None and n % 100 == 0:
                progress(n, len(files))
        if made:
            cache.parent.mkdir(parents=True, exist_ok=True)
            with open(cache, "a", encoding="utf-8") as fh:
                fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in made)
        return cls(
            donors,
            fingerprint=fingerprint,
            engine=engine.name,
            engine_version=engine.version,
            median_paragraphs=int(statistics.median(n_paragraphs)),
            median_chars=int(statistics.median(n_chars)),
        )


def _words(seed: int) -> list[str]:
    """4 x V made-up capitalised words of three consonant-vowel syllables, seeded order."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words = ["".join(t).capitalize() for t in itertools.product(syllables, repeat=3)]
    random.Random(seed).shuffle(words)
    return words[: 4 * V]


def _hash(*parts) -> int:
    return int.from_bytes(hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest(), "little")


class Generator:
    """Synthetic judgment number i of `corpus` (see the module): `judgment(i)`."""

    def __init__(self, corpus: Corpus, seed: int = SEED):
        self.corpus, self.seed = corpus, seed
        words = _words(seed)
        self.given, self.surnames, self.others = words[:V], words[V : 2 * V], words[2 * V :]

    @staticmethod
    def doc_id(i: int) -> str:
        return f"J{i:07d}"

    def title(self, i: int) -> tuple[str, str]:
        """(appellant, respondent): the appellant is unique to i, for i < MAX_JUDGMENTS."""
        if not 0 <= i < MAX_JUDGMENTS:
            raise ValueError(f"synthetic judgments are numbered 0..{MAX_JUDGMENTS - 1}")
        k = (i * _SCRAMBLE) % MAX_JUDGMENTS
        h = _hash(self.seed, "respondent", i)
        return f"{self.given[k // V]} {self.surnames[k % V]}", f"{self.others[h % V]} {self.others[V + (h >> 20) % V]}"

    def date(self, i: int) -> dt.date:
        return FIRST_DAY + dt.timedelta(days=_hash(self.seed, "date", i) % DAYS)

    def citation(self, j: int) -> str:
        """The reporter citation of synthetic judgment j: an SCC form no real judgment has (page > 10^6)."""
        return f"({self.date(j).year}) {1 + j % 12} SCC {1_000_000 + j}"

    def _cited(self, i: int, rng: random.Random) -> list[int]:
        """Earlier synthetic judgments (lower number, not later date) that judgment i cites."""
        if i == 0:
            return []
        date, found = self.date(i), []
        for _ in range(rng.choice(CITES_PER_JUDGMENT)):
            for _try in range(8):
                j = rng.randrange(i)
                if j not in found and self.date(j) <= date:
                    found.append(j)
                    break
        return found

    def _body(self, rng: random.Random) -> tuple[list[str], tuple[dict, dict, dict]]:
        c = self.corpus
        n = c.median_paragraphs
        picks = (rng.choice(c.opening), rng.choice(c.middle), rng.choice(c.ending))
        sizes = (n // 3, n // 3, n - 2 * (n // 3))
        paragraphs: list[str] = []
        for where, (d, size) in enumerate(zip(picks, sizes)):
            ps = c.donors[d].paragraphs
            start = 0 if where == 0 else max(0, len(ps) // 2 - size // 2) if where == 1 else max(0, len(ps) - size)
            paragraphs += ps[start : start + size]
        while len(paragraphs) < n:  # a short judgment among the three: random paragraphs make up the count
            ps = c.donors[rng.randrange(len(c.donors))].paragraphs
            paragraphs.insert(rng.randrange(len(paragraphs) + 1), ps[rng.randrange(len(ps))])
        return paragraphs, tuple(c.donors[d].slots for d in picks)

    def judgment(self, i: int):
        """(JudgmentRow, StructuredSummary) of synthetic judgment i (not yet stored)."""
        from aqgr.archive.store import JudgmentRow
        from aqgr.schemas.summary import Provenance, StructuredSummary

        rng = random.Random(_hash(self.seed, "judgment", i))
        appellant, respondent = self.title(i)
        date = self.date(i)
        date_text = f"{date.day} {_MONTHS[date.month - 1]} {date.year}"
        case_number = f"Civil Appeal No. {1 + i % 9000} of {date.year}"
        judge = f"{self.others[rng.randrange(V)]} {self.others[V + rng.randrange(V)]}"
        paragraphs, (first, second, third) = self._body(rng)
        precedents = list(third.get("precedents") or [])
        for j in self._cited(i, rng):
            cited = " v. ".join(self.title(j))
            at = rng.randrange(1, len(paragraphs)) if len(paragraphs) > 1 else 0
            paragraphs[at] += f" In {cited} {self.citation(j)}, this Court held that the principle applies."
            if rng.random() < SUPRA_CHANCE and at + 1 < len(paragraphs):
                later = rng.randrange(at + 1, len(paragraphs))
                paragraphs[later] += f" The view taken in {self.citation(j)} (supra) was followed."
            precedents.append({"name": f"{cited} {self.citation(j)}", "principle": "", "application": ""})
        header = [
            f"{appellant} v {respondent}",
            "Supreme Court of India",
            "",
            date_text,
            case_number,
            f"The Judgment was delivered by: {judge}, J.",
        ]
        text = "\n".join(header + [f"{k}. {p}" for k, p in enumerate(paragraphs, 1)]) + "\n"
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        slots = {
            "court": "Supreme Court of India",
            "case_number": case_number,
            "judgment_kind": first.get("judgment_kind"),
            "parties": {"appellants": [appellant], "respondents": [respondent]},
            "date": date_text,
            "bench": [f"HON'BLE JUSTICE {judge.upper()}"],
            "facts": first["facts"],
            "arguments": second.get("arguments") or {},
            "issues": second.get("issues") or [],
            "reasoning": second.get("reasoning") or "",
            "new_principles": second.get("new_principles") or [],
            "disposed_in_favour_of": third.get("disposed_in_favour_of"),
            "final_judgment": third["final_judgment"],
            "statutes": third.get("statutes") or [],
            "precedents": precedents,
            "subjects": third.get("subjects") or [],
        }
        doc_id = self.doc_id(i)
        provenance = Provenance(engine=self.corpus.engine, engine_version=self.corpus.engine_version, source_sha256=sha)
        summary = StructuredSummary.model_validate({**slots, "judgment_id": doc_id, "provenance": provenance})
        row = JudgmentRow(id=doc_id, source_path=f"synthetic/{doc_id}.txt", sha256=sha, n_chars=len(text), text=text)
        return row, summary


def extend(
    store,
    generator: Generator,
    start: int,
    stop: int,
    *,
    batch: int = 500,
    validate_every: int = 100,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Store synthetic judgments start..stop-1 with their summaries, `batch` per transaction
    (`Store.save_many`); every `validate_every`-th summary is also checked against the exported
    JSON Schema (the check every stored summary passes in a batch; ~1 ms, checked on a sample
    so 1e6 fit the hour). Returns counts, seconds and the median synthetic length in characters."""
    from aqgr.schemas.validation import validate_summary

    started = time.perf_counter()
    pending, lengths, seconds = [], [], {"generate": 0.0, "store": 0.0}
    for i in range(start, stop):
        t = time.perf_counter()
        row, summary = generator.judgment(i)
        if validate_every and i % validate_every == 0:
            validate_summary(summary)
        pending.append((row, summary))
        if len(lengths) < 10_000:
            lengths.append(row.n_chars)
        seconds["generate"] += time.perf_counter() - t
        if len(pending) >= batch or i == stop - 1:
            t = time.perf_counter()
            store.save_many(pending)
            seconds["store"] += time.perf_counter() - t
            pending = []
            if progress is not None:
                progress(i + 1 - start, stop - start)
    wall = time.perf_counter() - started
    return {
        "stored": stop - start,
        "seconds": round(wall, 2),
        "per_s": round((stop - start) / wall, 1) if wall > 0 else None,
        "parts_s": {k: round(v, 2) for k, v in seconds.items()},
        "median_chars": int(statistics.median(lengths)) if lengths else None,
    }
