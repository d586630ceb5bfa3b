"""Important subjects: the judgment's most salient legal phrases, as written in it.

Candidates are runs of one to three words with no punctuation or digits between them
(so each is a substring of the whitespace-normalised text), not starting or ending with
a stopword. A candidate scores its frequency, weighted up for length and for legal
vocabulary; names of people and places (always capitalised, no legal word) are dropped.
Deterministic and model-free.
"""

from __future__ import annotations

import re
from collections import Counter

_TOKEN = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*|[^\sA-Za-z]+")

STOPWORDS = frozenset(
    """
    a about above after again against all also although am an and any are as at be because been before being
    below between both but by can could did do does doing down during each either even ever every few for from
    further had has have having he her here hers herself him himself his how however i if in into is it its itself
    just least less may me might more most much must my myself neither no nor not now of off on once one only or
    other others otherwise our ours ourselves out over own per same shall she should since so some such than that
    the their theirs them themselves then there thereafter therefore these they this those though through thus to
    too under until up upon us very via was we were what when whenever where whereas whether which while who whom
    whose why will with within without would yet you your yours
    said aforesaid learned hon'ble ble sri shri smt mr mrs ms dr m s v vs versus viz ie eg etc cf ibid ante supra
    para paras paragraph page pages p pp no nos ors anr another thereof therein herein hereinafter hereby thereby
    court courts appellant appellants respondent respondents petitioner petitioners judgment judgments order orders
    case cases matter matters high supreme bench justice judge judges counsel advocate senior present instant
    above-mentioned made make makes making two three four five first second third also well therefore accordingly
    held hold holds observed stated submitted contended urged argued view opinion question questions issue issues
    fact facts facie find found filed passed dated day days year years time times way part section sections article
    articles sub clause rule rules act acts code learned-counsel inter alia mean means meaning regard respect reason
    reasons result given give gave state india indian union government shall-be
    """.split()
)
LEGAL = frozenset(
    """
    acquittal acquisition adverse affidavit agreement alimony appeal arbitration arbitrator arrest assessment
    bail bailable bequest breach bribery burden cheque circumstantial citizenship civil cognizable commission
    compensation confession constitution constitutional contempt contract conviction copyright corruption
    cruelty culpable custody customs damages death decree deed defamation delay deportation detention discharge
    dismissal dispute divorce dowry due easement election electricity employment encroachment equality estoppel
    eviction evidence excise exemption extradition fundamental gift guarantee habeas homicide immunity
    income indemnity industrial inheritance injunction insolvency insurance intention interest investigation
    jurisdiction labour land landlord lease legitimate liability licence license limitation maintenance
    mala malice mandamus marriage medical mens minority mortgage motor murder natural negligence notice
    offence offences penal penalty pension possession preventive privilege probation promotion property
    prosecution provident punishment quash rape reasonable recovery redemption rent reservation res retrenchment
    revenue review right rights robbery sale sentence service settlement specific statutory succession suicide
    tax taxation tenancy tenant termination testimony theft title tort transfer trespass trust unlawful
    vicarious wages warrant will witness witnesses writ wrongful bona fide fides mens rea procedure criminal
    constitutional
    """.split()
)
_LEGAL_HEADS = frozenset(
    {"act", "code", "constitution", "rules", "regulations", "ordinance", "doctrine", "principle", "jurisdiction"}
)
_WEIGHT = {1: 1.0, 2: 2.5, 3: 3.0}


def _runs(text: str) -> list[list[str]]:
    """Runs of words with only whitespace between them."""
    runs: list[list[str]] = []
    current: list[str] = []
    for match in _TOKEN.finditer(text):
        word = match.group(0)
        if word[0].isalpha():
            current.append(word)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def _is_legal(words: tuple[str, ...]) -> bool:
    return any(w in LEGAL or w.rstrip("s") in LEGAL for w in words) or words[-1] in _LEGAL_HEADS


def subjects(text: str, *, cap: int, exclude_words: set[str] = frozenset(), min_count: int = 2) -> list[str]:
    """Up to `cap` key phrases of `text`, best first, each as it is written in the text."""
    seen: Counter[tuple[str, ...]] = Counter()  # surface n-grams, as written
    for run in _runs(text):
        lowered = [w.lower() for w in run]
        usable = [w not in STOPWORDS and len(w) >= 3 for w in lowered]
        for n in (1, 2, 3):
            for i in range(len(run) - n + 1):
                if usable[i] and usable[i + n - 1]:
                    seen[tuple(run[i : i + n])] += 1
    counts: Counter[tuple[str, ...]] = Counter()
    surfaces: dict[tuple[str, ...], Counter[str]] = {}
    lowercase_seen: Counter[tuple[str, ...]] = Counter()
    for surface, count in seen.items():
        key = tuple(w.lower() for w in surface)
        counts[key] += count
        surfaces.setdefault(key, Counter())[" ".join(surface)] += count
        if any(w[0].islower() for w in surface):
            lowercase_seen[key] += count
    scored: list[tuple[float, tuple[str, ...]]] = []
    for key, count in counts.items():
        if count < min_count or all(w in exclude_words for w in key):
            continue
        legal = _is_legal(key)
        if not legal and (not lowercase_seen[key] or (len(key) == 1 and lowercase_seen[key] * 2 < count)):
            continue  # a name: always capitalised and no legal word in it
        scored.append((count * _WEIGHT[len(key)] * (1.6 if legal else 1.0), key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    chosen: list[tuple[str, ...]] = []
    for _, key in scored:
        joined = " " + " ".join(w.rstrip("s") for w in key) + " "
        if any(
            joined in other or other in joined
            for other in (" " + " ".join(w.rstrip("s") for w in c) + " " for c in chosen)
        ):
            continue
        chosen.append(key)
        if len(chosen) >= cap:
            break
    return [max(surfaces[key].items(), key=lambda item: (item[1], item[0] == item[0].lower()))[0] for key in chosen]
