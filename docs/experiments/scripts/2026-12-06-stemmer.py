# Usage: python docs/experiments/scripts/2026-12-06-stemmer.py words [REPEATS]
#        python docs/experiments/scripts/2026-12-06-stemmer.py first-search HOME nltk|snowball
"""One-off measurements for words.v2 (retrieval/text.py): the Snowball 2.2 English stemmer in C
(PyStemmer) in place of nltk's.

`words`: the words of letters in the AILA judgments, statutes and queries (as words.v1 reads them,
stopwords and one-letter words left out); which of them the two stemmers stem differently; the
seconds to import each stemmer in a fresh process and to stem every word once, medians of REPEATS.

`first-search HOME`: the seconds to open an archive built by bench_pipeline (hashing.v1) and run
its first search (the first AILA query), in this process. With `snowball` the index's tokenizer
name (words.v1, for an index built before words.v2) is served by words.v2's stemmer: an index is
not rebuilt for a timing, and the two differ in 5 of 61,489 AILA words. The 2026-12-06 report ran
it from a cold page cache (`sync; echo 3 > /proc/sys/vm/drop_caches` before each run), nltk and
snowball interleaved. It reads private names: an analysis, not an API."""

import statistics
import subprocess
import sys
import time
from pathlib import Path


def aila_words() -> list[str]:
    from aqgr.foundation.paths import shared_datasets
    from aqgr.retrieval.text import STOPWORDS, tokenizers

    root = shared_datasets() / "aila2019"
    files = sorted((root / "Object_casedocs").glob("*.txt")) + sorted((root / "Object_statutes").glob("*.txt"))
    split = tokenizers.create("words.v1").words
    words = set()
    for path in files + [root / "Query_doc.txt"]:
        words.update(
            w
            for w in split(path.read_text(encoding="utf-8", errors="replace"))
            if w.isalpha() and len(w) > 1 and w not in STOPWORDS
        )
    return sorted(words)


IMPORTS = {
    "nltk": "from nltk.stem.snowball import EnglishStemmer; EnglishStemmer().stem('murdered')",
    "snowball": "import Stemmer; Stemmer.Stemmer('english').stemWord('murdered')",
}


def words(repeats: int) -> None:
    from aqgr.retrieval.text import _nltk_stemmer, _snowball_stemmer

    found = aila_words()
    stemmers = {"nltk": _nltk_stemmer(), "snowball": _snowball_stemmer()}
    stems = {name: [stem(w) for w in found] for name, stem in stemmers.items()}
    parted = [(w, a, b) for w, a, b in zip(found, stems["nltk"], stems["snowball"]) if a != b]
    print(f"{len(found)} words; stemmed differently: {len(parted)}")
    for word, a, b in parted:
        print(f"  {word}: nltk {a!r}, snowball {b!r}")
    for name, stem in stemmers.items():
        seconds = []
        for _ in range(repeats):
            t = time.perf_counter()
            for w in found:
                stem(w)
            seconds.append(time.perf_counter() - t)
        code = f"import time; t = time.perf_counter(); {IMPORTS[name]}; print(time.perf_counter() - t)"
        imports = [
            float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(repeats)
        ]
        print(
            f"{name}: import {statistics.median(imports):.3f} s, stem every word {statistics.median(seconds):.3f} s (medians of {repeats})"
        )


def first_search(home: Path, stemmer: str) -> None:
    from aqgr.archive.home import Archive
    from aqgr.eval.datasets import read_queries
    from aqgr.foundation.paths import shared_datasets
    from aqgr.retrieval.index import IndexSpec
    from aqgr.retrieval.text import WordTokenizer, _snowball_stemmer, tokenizers

    if stemmer == "snowball":
        tokenizers.get("words.v1")  # populated, then served by words.v2's stemmer
        tokenizers._factories["words.v1"] = lambda: WordTokenizer("words.v1", _snowball_stemmer)
    facts = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[0]
    archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
    t = time.perf_counter()
    archive._searcher()
    opened = time.perf_counter() - t
    t = time.perf_counter()
    archive.search(facts)
    first = time.perf_counter() - t
    print(
        f"{stemmer}: open {opened:.2f} first search after open {first:.2f} total {opened + first:.2f} "
        f"nltk imported {'nltk' in sys.modules}"
    )


if __name__ == "__main__":
    if sys.argv[1] == "words":
        words(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    else:
        first_search(Path(sys.argv[2]), sys.argv[3])
