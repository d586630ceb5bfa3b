"""How a citing judgment treats a judgment it cites: followed, approved, distinguished,
doubted, overruled, or only referred to.

An engine reads the sentence around one mention (the "v." of a title or a reporter
citation, as the linker found it: retrieval/citations/links.py) and answers a
`Treatment`: the label, the sentence quoted, and the sentence's character offsets in the
text it was given. The store (store.py) keeps it with the link.

`phrases.v1`, offline, is built for precision: a false "overruled" flag on a good
precedent is worse than no flag. A label is given only when

* a phrase Indian judgments use for that treatment is in the sentence ("was overruled
  in", "overruling the decision in", "held to be per incuriam", "does not lay down the
  correct law", "requires reconsideration", "dissent from the view taken in", "is
  clearly distinguishable", "quoted with approval", "followed in", ...);
* the phrase points at this mention: a passive phrase ("X was overruled by Y") at the
  nearest case named before it, an active one ("Y overruled X", "distinguishing X") at
  the first case named after it, with nothing between them but names, citations and
  words of reference ("the decision of this Court in"); Y, the case that did the
  overruling, is only referred to;
* nothing negates or suspends it: "not overruled", "we are unable to agree that X was
  overruled", "whether X requires reconsideration", "binding till it is overruled", a
  party's contention ("counsel submitted that X is per incuriam"), a question.

Anything else, and a sentence in another language or garbled, is "referred": no guess.
The labels' order (`SEVERITY`) decides between several mentions of one pair.

`llm.v1` (treatment_llm.py), used when a model provider is configured, asks the model for
the label and the quote and keeps `phrases.v1`'s answer wherever the model's is not valid.
Where both engines answer and disagree, severity wins (`reconciled`): the more severe label
stands, whichever engine gave it, and the other engine's reading is kept beside it
(`Treatment.dissent`, "llm.v1: referred"), stored with the link and shown with it. A missed
overruling is the dangerous error: a model's "referred" never hides `phrases.v1`'s "overruled".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import NamedTuple, Protocol

from aqgr.foundation.registry import Registry
from aqgr.retrieval.citations.normalize import citations

LABELS = ("overruled", "doubted", "distinguished", "approved", "followed", "referred")
SEVERITY = {label: n for n, label in enumerate(LABELS)}  # lower is more severe
WARN = frozenset({"overruled", "doubted"})  # treatments a search hit is flagged for
REFERRED = "referred"
SENTENCE_LIMIT = 1000  # characters of a sentence kept on each side of the mention

treatment_engines: Registry["TreatmentEngine"] = Registry(
    "treatment engine", ("aqgr.retrieval.citations.treatment", "aqgr.retrieval.citations.treatment_llm")
)


@dataclass(frozen=True)
class Treatment:
    """What a citing judgment does with a cited one at one mention."""

    label: str  # one of LABELS
    sentence: str  # the citing sentence, quoted (whitespace as in the text)
    start: int  # its offsets in the text the engine was given
    end: int
    cue: str = ""  # the words that decided the label ("" for referred)
    dissent: str = ""  # another engine's differing reading of this mention, "engine: label" ("" when none)


class TreatmentEngine(Protocol):
    name: str  # the registered name ("phrases.v1", "llm.v1")
    version: str  # what made the treatments, recorded by the citation store: another one rebuilds it

    def classify(self, text: str, start: int, end: int, cited: str = "") -> Treatment:
        """The treatment at the mention text[start:end] (a title's "v." or a citation) of the
        case `cited` (its name as the citing judgment writes it; "" when not known)."""


def more_severe(a: Treatment | None, b: Treatment | None) -> Treatment | None:
    """The more severe of two treatments, of two as severe the one earlier in the text (so
    that the answer does not depend on the order mentions are read in); None counts as nothing."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b, key=lambda t: (SEVERITY[t.label], t.start, t.end))


def reconciled(first: Treatment, first_by: str, second: Treatment, second_by: str) -> Treatment:
    """Two engines' readings of one mention: the more severe label stands (of two alike, `second`,
    the model's, with its cue); where the labels differ, the other's reading is its `dissent`
    ("engine: label")."""
    if first.label == second.label:
        return second
    if SEVERITY[first.label] < SEVERITY[second.label]:
        return replace(first, dissent=f"{second_by}: {second.label}")
    return replace(second, dissent=f"{first_by}: {first.label}")


# ---------------------------------------------------------------- sentences

# Words after which a full stop does not end a sentence (abbreviations of legal writing).
_ABBREVIATIONS = frozenset(
    """v vs no nos ltd co corpn ors anr j jj cj s ss sec secs art arts para paras dr mr mrs ms
smt sri shri cl r rr ie eg viz vol p pp supp cr crl cri sc scc air scr pvt bros govt dist distt hon ble honble st mt
ch vide etc al illus expl sub cf ld lr lj mad bom cal all ker pat raj guj ori del kar admn deptt u n m""".split()
)
_END = re.compile(r"[.?!;](?=[\"'\u201d\u2019)\]]*\s+[\"'\u201c\u2018(\[]*[A-Z0-9])")


def sentence_span(text: str, start: int, end: int, limit: int = SENTENCE_LIMIT) -> tuple[int, int]:
    """(s, e): the sentence of `text` that holds text[start:end], at most `limit`
    characters on either side of it."""

    def ends_here(m: re.Match) -> bool:
        if text[m.start()] != ".":
            return True
        word = re.search(r"([A-Za-z./]+)$", text[max(0, m.start() - 16) : m.start()])
        word = word.group(1).lower() if word else ""
        return not (word.strip(".") in _ABBREVIATIONS or len(word.strip(".")) == 1 or "." in word.strip("."))

    s = max(0, start - limit)
    for m in _END.finditer(text, s, start):
        if m.end() <= start and ends_here(m):
            s = m.end()
    e = min(len(text), end + limit)
    for m in _END.finditer(text, end, e):
        if ends_here(m):
            e = m.end()
            break
    while s < start and text[s].isspace():
        s += 1
    return s, e


# ---------------------------------------------------------------- garbled or other language

_COMMON = frozenset(
    "the of in and to a is was that by this be it with as on for not has have which are were court".split()
)


def readable(sentence: str) -> bool:
    """Is this English prose the phrases can be read in? False for another language or
    script, and for text garbled by a bad conversion (few common words, odd characters)."""
    letters = [c for c in sentence if c.isalpha()]
    if not letters:
        return False
    if sum(1 for c in letters if not c.isascii()) > 0.1 * len(letters) or sentence.count("\ufffd") > 2:
        return False
    words = re.findall(r"[A-Za-z]+", sentence)
    if len(words) < 4:
        return False
    common = sum(1 for w in words if w.lower() in _COMMON)
    vowelless = sum(1 for w in words if len(w) > 3 and not re.search(r"[aeiouyAEIOUY]", w))
    return common >= max(2, 0.08 * len(words)) and vowelless <= 0.2 * len(words)


# ---------------------------------------------------------------- the cases a sentence names

_MARKER = re.compile(r"\s(?:v|vs|versus|v/s)\.?\s", re.I)
_CASE_WORD = re.compile(r"\b[A-Z][\w.&'-]*(?:'s)?\s+case\b|\(supra\)", re.I)
UNIT_GAP = 150  # a citation this close after a title belongs to it


class _Unit(NamedTuple):
    start: int
    end: int


def case_units(sentence: str) -> list[_Unit]:
    """The cases a sentence names: each title ("v.") with the citations that follow it,
    and each citation standing alone, in text order (anchors' spans)."""
    marks = [(m.start(), m.end()) for m in _MARKER.finditer(sentence)]
    cites = [(c.start, c.end) for c in citations(sentence, every_form=True)]
    anchors = sorted(marks + cites)
    units: list[list[int]] = []
    last_mark_end = None
    for a, b in anchors:
        is_mark = (a, b) in marks
        if (
            units
            and not is_mark
            and last_mark_end is not None
            and a - units[-1][1] < UNIT_GAP
            and not _MARKER.search(sentence, units[-1][1], a)
            and not _breaks(sentence[units[-1][1] : a])
        ):
            units[-1][1] = max(units[-1][1], b)
            continue
        if (
            units
            and not is_mark
            and last_mark_end is None
            and a - units[-1][1] < 12
            and not _breaks(sentence[units[-1][1] : a])
        ):
            units[-1][1] = max(units[-1][1], b)  # "(1985) 1 SCC 56 = 1985 (2) SCR 1": one case
            continue
        units.append([a, b])
        last_mark_end = b if is_mark else None
    return [_Unit(a, b) for a, b in units]


def _breaks(gap: str) -> bool:
    """Does the text between two anchors hold more than a case name and citations (a
    lowercase word other than the glue of names: "of", "and", "others", "supra")?"""
    gap = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", gap)
    return any(w not in _NAME_GLUE for w in re.findall(r"\b[a-z][a-z]+\b", gap))


_NAME_GLUE = frozenset("of and the others another anr ors etc supra vs through thr alias ex parte".split())


# ---------------------------------------------------------------- the phrases

_BE = r"(?:is|was|were|are|be|been|being|stands?|stood|got),?"
_ADV = (
    r"(?:,?\s*(?:clearly|quite|easily|rightly|also|thus|therefore|accordingly|expressly|impliedly|specifically|"
    r"consistently|subsequently|later|since|already|of course|in effect|squarely|now|again|further|indirectly|"
    r"completely|entirely|directly|not only|so|duly|plainly|obviously|referred to and|considered and|noticed and|"
    r"explained and|examined and|discussed and),?\s+)*"
)
_REF = (
    r"(?:(?:the|a|an|this|that|its|their|said|aforesaid|above|earlier|previous|prior|former|latter|decision|"
    r"decisions|judgment|judgments|case|cases|view|views|ratio|dictum|observations?|principles?|law|rule|tests?|"
    r"order|orders|opinion|of|in|by|court|bench|rendered|taken|expressed|laid|down|reported|delivered)\s+)*"
)


class _Cue(NamedTuple):
    label: str
    pattern: re.Pattern
    points: str  # "before": a passive phrase, its case named before it; "after": an active one


def _cue(label: str, points: str, pattern: str) -> _Cue:
    return _Cue(label, re.compile(pattern, re.I), points)


CUES: tuple[_Cue, ...] = (
    # overruled (incl. "not good law", "per incuriam")
    _cue(
        "overruled",
        "before",
        rf"\b(?:{_BE}|has|have|had|must|should|would|to)\s+{_ADV}(?:be\s+|been\s+)?{_ADV}"
        rf"(?:(?:held|treated|regarded|taken|declared|considered|deemed|decided|rendered)\s+(?:to\s+(?:be|have\s+been)\s+|as\s+(?:having\s+been\s+)?)?)?"
        rf"(?:over-?ruled|per\s+incuriam|no\s+longer\s+good\s+law|not\s+(?:a\s+)?good\s+law|bad\s+law)\b",
    ),
    _cue("overruled", "before", rf"\bstands?\s+{_ADV}over-?ruled\b"),
    _cue("overruled", "before", r"\brendered\s+per\s+incuriam\b|\bdecisions?\s+per\s+incuriam\b"),
    _cue(
        "overruled",
        "before",
        r"\b(?:does|do|did)\s+not\s+lay\s+down\s+(?:the\s+)?(?:correct|good|right)\s+(?:law|position)\b",
    ),
    _cue(
        "overruled",
        "before",
        r"\b(?:(?:must|should|would|is|was|were|are|has|have|had)\s+(?:be\s+|been\s+)?(?:(?:held|treated|regarded|declared|considered|taken)\s+)?(?:to\s+(?:be|have\s+been)\s+|as\s+)?)?"
        r"not\s+(?:been\s+)?correctly\s+decided\b|\bno\s+longer\s+holds?\s+the\s+field\b",
    ),
    _cue(
        "overruled",
        "after",
        r"(?<!prospective )(?<!prospectively )\b(?:over-?rul(?:ed|ing|es?))\b(?!\s+(?:the|a|that|this)\s+(?:plea|objection|contention|submission|argument)s?)",
    ),
    _cue(
        "overruled",
        "after",
        r"\b(?:held|declared|holding|declaring)\s+(?:that\s+)?(?:the\s+)?(?=.{0,160}?per\s+incuriam)",
    ),
    # doubted / not followed / reconsideration
    _cue("doubted", "before", rf"\b{_BE}\s+{_ADV}(?:doubted|disapproved|not\s+approved|not\s+followed|questioned)\b"),
    _cue(
        "doubted",
        "before",
        r"\b(?:requires?|required|needs?|may\s+require|would\s+require|calls?\s+for|merits?)\s+(?:a\s+)?"
        r"(?:re-?consideration|to\s+be\s+re-?considered|re-?examination|a\s+second\s+look)\b",
    ),
    _cue(
        "doubted",
        "before",
        rf"\b{_BE}\s+{_ADV}(?:irreconcilable|inconsistent|in\s+conflict)\s+with\b|\b(?:does|do)\s+not\s+appear\s+to\s+be\s+consistent\s+with\b",
    ),
    _cue("doubted", "before", r"\bcorrectness\s+of\s+which\s+was\s+(?:taken\s+up|doubted|questioned)\b"),
    _cue(
        "doubted",
        "after",
        r"\b(?:doubt(?:ed|ing)|disapprov(?:ed|ing))\s+(?:of\s+)?(?:the\s+correctness\s+of\s+)?(?=\S)",
    ),
    _cue("doubted", "after", r"\bdoubts?\s+(?:about|as\s+to|regarding|on|over)\s+the\s+correctness\s+of\b"),
    _cue("doubted", "after", r"\bdissent(?:ed|ing|s)?\s+from\b"),
    _cue(
        "doubted",
        "after",
        r"\b(?:unable|difficult|not\s+able|cannot|can\s+not|do\s+not|did\s+not|are\s+not\s+able)\s+to\s+agree\s+with\b",
    ),
    _cue("doubted", "after", r"\b(?:decline[sd]?|refuse[sd]?)\s+to\s+follow\b|\bnot\s+(?:approve|approving)\b"),
    _cue("doubted", "after", r"\b(?:for|require|requires|requiring)\s+(?:the\s+)?re-?consideration\s+of\b"),
    # distinguished
    _cue(
        "distinguished", "before", rf"\b{_BE}\s+{_ADV}(?:distinguish(?:ed|able)|of\s+no\s+(?:assistance|avail|help))\b"
    ),
    _cue(
        "distinguished",
        "before",
        r"\b(?:has|have|had)\s+no\s+(?:application|bearing)\b|\b(?:does|do|did)\s+not\s+(?:help|assist)\b",
    ),
    _cue("distinguished", "after", r"\bdistinguish(?:ed|ing|es)\b(?!\s+features?)"),
    # approved
    _cue("approved", "before", rf"\b{_BE}\s+{_ADV}(?:approved|affirmed|reaffirmed|endorsed)\b(?!\s+scheme)"),
    _cue(
        "approved",
        "before",
        rf"\b{_BE}\s+{_ADV}(?:quoted|cited|referred\s+to|noted|noticed|extracted|reproduced|accepted)\s+with\s+approval\b",
    ),
    _cue("approved", "after", r"\b(?:approv(?:ed|ing)|re-?affirm(?:ed|ing))\s+(?:of\s+)?(?=\S)(?!(?:by|in|scheme)\b)"),
    _cue("approved", "after", r"\bwith\s+approval,?\s+(?:the\s+following\s+\w+\s+from\b)?"),
    # followed / applied / relied on
    _cue(
        "followed",
        "before",
        rf"\b{_BE}\s+{_ADV}(?:followed|applied|relied\s+(?:up)?on)\b(?!\s+by\s+(?:the\s+)?(?:learned|counsel|appellant|respondent))",
    ),
    _cue(
        "followed",
        "after",
        r"(?<!the )(?<!as )\b(?:follow(?:ed|ing)|relying\s+(?:up)?on|relied\s+(?:up)?on|applying|applied)\b(?!\s*:)(?!\s+(?:by|in)\b)",
    ),
    _cue(
        "followed",
        "after",
        r"\b(?:squarely|fully|clearly)\s+(?:covered|governed)\s+by\b|\b(?:concluded|settled)\s+by\b|\bagree\s+with\b",
    ),
)

# Words that may stand between a phrase and the case it points at (besides names,
# citations and bracketed text): words of reference, never a new subject or verb.
_ALLOWED = frozenset(
    """the a an of in by this that which who whose its it their said aforesaid above earlier previous
prior former latter decision decisions judgment judgments case cases view views ratio dictum observation observations
principle principles law rule test tests order orders opinion passed rendered delivered taken expressed laid down
reported cited court courts bench benches division full constitution larger smaller learned judge judges two three
five seven nine single high supreme apex has have had been is was were be being are also thus therefore
accordingly rightly clearly expressly impliedly subsequently later since already course indeed effect and other
another others ors anr etc supra re ex parte v vs versus smt shri sri mr ms mrs dr mis m s and its own well known
celebrated landmark recent very same similar taking mentioned my brother brothers""".split()
)
_NEGATORS = re.compile(
    r"\b(?:not|never|no|neither|nor|cannot|hardly|whether|if|till|until|unless|lest|nothing|"
    r"without|unable|question|argument|contention|submission|plea|misapplied|incorrectly|wrongly|"
    r"erroneously|n't)\b",
    re.I,
)
_NOT_NEGATING = re.compile(r"\bnot\s+only\b|\bno\s+doubt\b|\bno\s+hesitation\b", re.I)
_CONTENTION = re.compile(
    r"\b(?:counsel|Mr\.|Mrs\.|Ms\.|Shri|Sri|Dr\.|he|she|they|appellants?|respondents?|petitioners?|assessees?)\s+"
    r"(?:(?:has|had|have|also|further|then|heavily|strongly|vehemently|next|however|would|had\s+also)\s+)*"
    r"(?:relied|relies|relying|placed\s+reliance|contended|contends|submitted|submits|urged|urges|argued|argues|"
    r"asserted|asserts|cited|canvassed|invited|drew|pointed)\b"
    r"|\b(?:Mr|Mrs|Ms|Dr|Shri|Sri)\.?\s+(?:[A-Z][\w.]*\s+){1,4}(?:(?:has|had|also|further|then|heavily|strongly)\s+)*"
    r"(?:relied|relies|placed\s+reliance|contended|contends|submitted|submits|urged|urges|argued|argues|cited|canvassed)\b"
    r"|\b(?:contention|submission|argument|plea|stand|grievance)\s+(?:\S+\s+){0,12}?(?:is|was|being)\s+that\b"
    r"|\bit\s+(?:was|is|has\s+been)\s+(?:also\s+|further\s+)?(?:contended|submitted|urged|argued|canvassed)\b"
    r"|\b(?:reliance|heavy\s+reliance)\s+(?:was|is|has\s+been)\s+(?:also\s+)?placed\b"
    r"|\baccording\s+to\s+(?:the\s+)?(?:learned\s+)?(?:counsel|appellants?|respondents?|petitioners?|assessees?|state)\b"
    r"|\b(?:contended|submitted|urged|argued)\s+that\b",
    re.I,
)
_LIST_WORDS = frozenset("and of the dated no nos others ors anr another etc as well v vs versus smt".split())
GAP_LIMIT = 220  # characters between a phrase and its case, brackets left out


def _plain_gap(gap: str) -> str:
    """The gap without bracketed text (citations, "(supra)")."""
    previous = None
    while previous != gap:
        previous = gap
        gap = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", gap)
    return gap


def _gap_ok(gap: str) -> bool:
    """May this text stand between a phrase and the case it points at?"""
    gap = _plain_gap(gap)
    if len(gap) > GAP_LIMIT or re.search(r"[;:]", gap):
        return False
    for word in re.findall(r"[^\W_]+(?:'s)?", gap):
        plain = word.removesuffix("'s")
        if plain[:1].isupper() or any(c.isdigit() for c in plain) or plain.lower() in _ALLOWED:
            continue
        return False
    return True


_ANAPHORA = re.compile(
    r"^\s*(?:(?:the\s+)?(?:aforesaid|said|above|same)(?:\s+(?:decision|judgment|view|case|ratio)s?)?|it|them|"
    r"that\s+(?:decision|view|judgment|case))\b",
    re.I,
)
_ACTIVE_OBJECT_STOP = re.compile(r"^\s*(?:,\s*)?(?:and|but|or|by|in|is|was|are|were)\b", re.I)
_PASSIVE_BEFORE = re.compile(rf"\b(?:{_BE}|not),?\s+{_ADV}$", re.I)
_REJECTS = re.compile(
    r"\b(?:cannot\s+be\s+accepted|is\s+not\s+correct|not\s+tenable|untenable|misconceived|without\s+(?:any\s+)?(?:merit|substance)|"
    r"no\s+merit|not\s+impressed|misapplied|preposterous|rejected)\b",
    re.I,
)


def _negated(window: str) -> bool:
    window = _NOT_NEGATING.sub(" ", window)
    return bool(_NEGATORS.search(window))


@treatment_engines.register("phrases.v1")
class PhraseTreatments:
    """The offline engine (see the module)."""

    name = version = "phrases.v1"
    portable = True  # made again by name in a worker process (retrieval/citations/passes.py), with the same findings

    def classify(self, text: str, start: int, end: int, cited: str = "") -> Treatment:
        s, e = sentence_span(text, start, end)
        sentence = text[s:e]
        found = self.label(sentence, start - s, end - s)
        return Treatment(found[0], sentence, s, e, found[1])

    def label(self, sentence: str, start: int, end: int) -> tuple[str, str]:
        """(label, cue) for the mention sentence[start:end]."""
        if not readable(sentence) or sentence.rstrip(" \"'\u201d)").endswith("?"):
            return REFERRED, ""
        units = case_units(sentence)
        mine = next((i for i, u in enumerate(units) if u.start <= start < u.end or u.start < end <= u.end), None)
        if mine is None:
            units.append(_Unit(start, end))
            units.sort()
            mine = units.index(_Unit(start, end))
        best: tuple[str, str] | None = None
        for cue in CUES:
            for m in cue.pattern.finditer(sentence):
                if best is not None and SEVERITY[cue.label] >= SEVERITY[best[0]]:
                    break
                target = self._target(sentence, units, m, cue.points)
                if target is None:
                    continue
                targets = self._listed(sentence, units, target, m) if cue.points == "before" else {target}
                if mine not in targets or self._suspended(sentence, units[mine], m, cue):
                    continue
                best = (cue.label, " ".join(m.group().split()))
                break
        return best or (REFERRED, "")

    @staticmethod
    def _target(sentence: str, units: list[_Unit], m: re.Match, points: str) -> int | None:
        """The case unit the phrase at m points at, or None."""
        if points == "before":
            before = [i for i, u in enumerate(units) if u.end <= m.start()]
            if not before:
                return None
            i = before[-1]
            gap = re.sub(r"\b(?:has|have|had)\s+(?:not\s+only\s+)?$", "", sentence[units[i].end : m.start()])
            if re.search(r"'s\b", _plain_gap(gap)):
                return None  # "X ... also Bolam's test has been approved": another subject
            if re.search(r"\b(?:and|but)\W*$", _plain_gap(gap)):
                return None  # "considered in X and were overruled": the subject is the earlier verb's
            if "," in _plain_gap(gap) and re.match(r"^\W*In\s", sentence):
                return None  # "In X, the Y was approved": X is where it happened
            return i if _gap_ok(gap) else None

        if m.group().split()[0].lower().endswith("ed") and _PASSIVE_BEFORE.search(
            sentence[max(0, m.start() - 80) : m.start()]
        ):
            return None  # "X was overruled": passive, it points back, not on
        after = [i for i, u in enumerate(units) if u.start >= m.end()]
        if not after:
            return None
        i = after[0]
        gap = sentence[m.end() : units[i].start]
        if _ANAPHORA.match(gap):  # "considered X and distinguished it": the case named just before
            before = [k for k, u in enumerate(units) if u.end <= m.start()]
            if (
                before
                and re.fullmatch(
                    r"\W*(?:\([^()]*\)\W*)*(?:and|,)\s*(?:has\s+|had\s+|then\s+|also\s+)*",
                    sentence[units[before[-1]].end : m.start()],
                )
                and re.match(r"^\s*(?:it|them|the\s+same)\b", gap)
            ):
                return before[-1]
            return None
        if _ACTIVE_OBJECT_STOP.match(gap):
            return None  # "overruled by Y", "distinguished and ...", "overruled the aforesaid decision in Y": Y is not the object
        if re.search(r"'s\b", gap[:-40] if len(gap) > 40 else ""):
            return None  # another case's name ("the tests laid down in X's case") stands before it
        return i if _gap_ok(gap) else None

    @staticmethod
    def _listed(sentence: str, units: list[_Unit], i: int, m: re.Match) -> set[int]:
        """The cases listed with unit i before a passive phrase ("A, B and C were overruled",
        "A and other cases ... do not lay down good law"): i and those before it joined by
        names, citations, commas and a final "and"."""
        found = {i}
        tail = sentence[units[i].end : m.start()]
        joined = re.match(r"^\W*(?:\([^()]*\)\W*)*and\s+other\b", tail) is not None
        j = i
        while j > 0:
            glue = _plain_gap(sentence[units[j - 1].end : units[j].start])
            if not joined and not re.search(r"\band\b|&|\bas\s+well\s+as\b", glue):
                break
            joined = True
            words = [w for w in re.findall(r"[^\W_]+", glue) if not (w[:1].isupper() or any(c.isdigit() for c in w))]
            if len(glue) > 160 or re.search(r"[;:]", glue) or any(w.lower() not in _LIST_WORDS for w in words):
                break
            j -= 1
            found.add(j)
        return found

    @staticmethod
    def _suspended(sentence: str, unit: _Unit, m: re.Match, cue: _Cue) -> bool:
        """Is the phrase negated, hypothetical, or a party's contention?"""
        points = cue.points
        if _CONTENTION.search(sentence, 0, max(m.start(), unit.start)):
            return True
        if cue.label == "overruled":
            # overruling, the costliest flag: a negation anywhere before it in the sentence, or a
            # rejection anywhere in it, suspends it
            prefix = re.sub(
                r"\b(?:which|who)\b[^,;]*,", " ", sentence[: m.start()]
            )  # "..., which is not certified, ..."
            if _negated(prefix) or _REJECTS.search(sentence):
                return True
        if points == "before":
            window = sentence[max(0, unit.start - 90) : m.start()]
        else:
            window = sentence[max(0, m.start() - 120) : m.start()]
        cue = m.group()
        if re.search(r"\bnot\b|\bno\b|cannot|can\s+not|unable|difficult|incorrectly", cue, re.I):
            return _negated(window)  # "not followed" is the phrase itself; "cannot be said ... not followed" is not
        return _negated(window + " " + cue)


def create(name: str = "phrases.v1") -> TreatmentEngine:
    return treatment_engines.create(name)
