"""Batch runs over mixed archives: parallel workers, ids, resume after kill -9, retry, export/import.

Every test runs on SQLite and on PostgreSQL (the `database_url` fixture)."""

from __future__ import annotations

import json
import multiprocessing
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqgr import Archive
from aqgr.archive.store import Store
from aqgr.interfaces.cli import app
from aqgr.schemas.validation import validate_summary
from tests.aqgr.docgen import html_text, pdf_bytes, write_docx
from tests.aqgr.helpers import JUDGMENTS, write_judgments

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def many_judgments(folder: Path, n: int, *, paragraphs: int = 40) -> Path:
    """n distinct judgments (variants of the four samples, with filler), as .txt files."""
    folder.mkdir(parents=True, exist_ok=True)
    bases = list(JUDGMENTS.values())
    filler = "\n".join(
        f"{k}. The witness deposed about the events of that night and the conduct of the accused in the village, and the court considered it."
        for k in range(6, 6 + paragraphs)
    )
    for i in range(n):
        (folder / f"J{i:04d}.txt").write_text(
            bases[i % 4].replace("1997", str(1900 + i))
            + filler
            + f"\n{paragraphs + 7}. Ordered accordingly in matter {i}.\n",
            encoding="utf-8",
        )
    return folder


def _data(store: Store, engine: str = "extractive.v1") -> dict[str, dict]:
    out = {}
    for summary in store.summaries(engine):
        doc = summary.model_dump(mode="json")
        doc["provenance"].pop("created_at")
        out[summary.judgment_id] = doc
    return out


def test_mixed_formats_in_nested_folders(archive, tmp_path):
    root = tmp_path / "archive"
    (root / "sc" / "2001").mkdir(parents=True)
    (root / "hc").mkdir()
    (root / "sc" / "2001" / "A1.pdf").write_bytes(pdf_bytes(JUDGMENTS["A1"]))
    write_docx(root / "sc" / "A2.docx", JUDGMENTS["A2"])
    (root / "hc" / "A3.htm").write_text(html_text(JUDGMENTS["A3"]), encoding="utf-8")
    (root / "hc" / "A4.txt").write_text(JUDGMENTS["A4"], encoding="utf-8")
    (root / "hc" / "scan.jpg").write_bytes(b"\xff\xd8\xff")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.txt").write_text("ignored")
    report = archive.summarize([root])
    assert sorted(report.summarised) == ["A1", "A2", "A3", "A4"], report.failed
    assert [Path(p).name for p in report.skipped_unsupported] == ["scan.jpg"]
    assert archive.summary("A1").case_number and "dying declaration" in archive.text("A1")
    assert archive.summary("A2").parties.appellants


def test_ids_from_relative_paths_and_collisions(archive, tmp_path):
    root = tmp_path / "in"
    write_judgments(root / "a", {"X": JUDGMENTS["A1"]})
    write_judgments(root / "b", {"X": JUDGMENTS["A2"]})
    report = archive.summarize([root])
    assert report.summarised == ["X"] and [(f.reason, f.judgment_id) for f in report.failed] == [("duplicate_id", "X")]
    assert "--id-from relpath" in report.failed[0].message
    other = Archive(archive.home.parent / "other-home") if archive.settings.database_url is None else None
    if other is not None:
        report = other.summarize([root], id_from="relpath")
        assert sorted(report.summarised) == ["a/X", "b/X"] and not report.failed
        report = Archive(archive.home.parent / "third").summarize([root], id_from=r"regex:^(\w)/")
        assert sorted(report.summarised) == ["a", "b"]


def test_parallel_workers_store_the_same_summaries(database_url, home, tmp_path):
    folder = many_judgments(tmp_path / "in", 12, paragraphs=5)
    serial = Archive(tmp_path / "serial-home", database_url="sqlite:///" + str(tmp_path / "serial.db"))
    serial.summarize([folder])
    parallel = Archive(home)
    report = parallel.summarize([folder], workers=3)
    assert len(report.summarised) == 12 and not report.failed and report.workers == 3
    assert _data(parallel._store) == _data(serial._store)
    again = parallel.summarize([folder], workers=3)
    assert len(again.unchanged) == 12 and not again.summarised


def test_retry_failed_redoes_only_the_failures(archive, tmp_path):
    folder = write_judgments(tmp_path / "in")
    (folder / "broken.txt").write_bytes(b"\x00\x01" * 50)
    first = archive.summarize([folder])
    assert [f.reason for f in first.failed] == ["binary"]
    assert archive.status()["failures_by_reason"] == {"binary": 1}
    (folder / "broken.txt").write_text(JUDGMENTS["A2"].replace("Sunita", "Kavita"), encoding="utf-8")
    retry = archive.summarize([], retry_failed=True)
    assert retry.files == 1 and retry.summarised == ["broken"]
    assert archive.status()["failures"] == 0 and archive.status()["judgments"] == 5


def test_a_file_that_disappears_mid_run_is_recorded(archive, tmp_path):
    folder = write_judgments(tmp_path / "in")

    def progress(done, total, current):
        if done == 1:
            (folder / "A4.txt").unlink()

    report = archive.summarize([folder], progress=progress)
    assert sorted(report.summarised) == ["A1", "A2", "A3"]
    assert [(f.judgment_id, f.reason) for f in report.failed] == [("A4", "missing")]
    assert "no longer exists" in report.failed[0].message


def test_export_and_import_round_trip(archive, database_url, tmp_path):
    archive.summarize([write_judgments(tmp_path / "in")])
    jsonl, folder = tmp_path / "out" / "all.jsonl", tmp_path / "out" / "dir"
    assert archive.export_summaries(jsonl, format="jsonl") == 4
    assert archive.export_summaries(folder, format="json-dir") == 4
    assert sorted(p.name for p in folder.iterdir()) == ["A1.json", "A2.json", "A3.json", "A4.json"]
    assert json.loads((folder / "A1.json").read_text())["judgment_id"] == "A1"
    fresh = Archive(tmp_path / "fresh-home", database_url=f"sqlite:///{tmp_path / 'fresh.db'}")
    report = fresh.import_summaries([jsonl])
    assert sorted(report.imported) == ["A1", "A2", "A3", "A4"] and not report.invalid
    assert _data(fresh._store) == _data(archive._store)
    # invalid documents are reported, never stored
    bad = json.loads((folder / "A2.json").read_text())
    bad["judgment_id"], bad["parties"] = "BAD", "not an object"
    (folder / "BAD.json").write_text(json.dumps(bad))
    (folder / "notes.jsonl").write_text('{"judgment_id": "X"}\nnot json\n')
    report = archive.import_summaries([folder])
    assert sorted(report.replaced) == ["A1", "A2", "A3", "A4"]
    problems = {Path(i.where).name: i.problem for i in report.invalid}
    assert "parties" in problems["BAD.json"] and "not JSON" in problems["notes.jsonl:2"] and "notes.jsonl:1" in problems
    assert archive.summary("BAD") is None and archive.status()["judgments"] == 4


def test_cli_export_import_status_retry(database_url, home, tmp_path):
    folder = write_judgments(tmp_path / "in")
    (folder / "zero.pdf").write_bytes(b"")
    result = runner.invoke(app, ["summarize", str(folder), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert "4 summarised" in result.stderr and "failed by reason: empty 1" in result.stderr
    status = json.loads(runner.invoke(app, ["status"]).stdout)
    assert (
        status["judgments"] == 4
        and status["summaries"][0]["count"] == 4
        and status["failures_by_reason"] == {"empty": 1}
    )
    assert status["database"].split(":")[0] == database_url.split(":")[0]
    result = runner.invoke(app, ["export"])
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 4
    out = tmp_path / "dir"
    assert runner.invoke(app, ["export", "--format", "json-dir", "--out", str(out)]).exit_code == 0
    result = runner.invoke(
        app, ["import", str(out), "--home", str(tmp_path / "h2"), "--database-url", f"sqlite:///{tmp_path / 'h2.db'}"]
    )
    assert result.exit_code == 0 and "imported 4 summaries" in result.stderr, result.output
    assert runner.invoke(app, ["export", "--format", "yaml"]).exit_code == 2
    result = runner.invoke(app, ["summarize", "--retry-failed", "--json"])
    assert result.exit_code == 1 and json.loads(result.stdout)["files"] == 1


# -- kill -9 and resume -----------------------------------------------------------
def _count(url: str) -> tuple[int, int]:
    store = Store(url, create=False)
    try:
        return store.count_judgments(), sum(store.count_summaries().values())
    except Exception:  # tables not created yet
        return 0, 0
    finally:
        store.close()


def _wait_for_summaries(url: str, n: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until the database at `url` holds `n` summaries, polling one open Store every 20 ms (opening
    one per poll is slow on a busy machine); fails if `proc` ends first."""
    deadline, store = time.monotonic() + timeout, None
    try:
        while True:
            assert proc.poll() is None, f"finished before it could be stopped: {proc.stderr.read()[-2000:]!r}"
            assert time.monotonic() < deadline
            try:
                store = store or Store(url, create=False)
                if sum(store.count_summaries().values()) >= n:
                    return
            except Exception:  # the tables are not made yet
                if store is not None:
                    store.close()
                store = None
            time.sleep(0.02)
    finally:
        if store is not None:
            store.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_kill_9_midway_then_rerun_finishes_without_duplicates(database_url, home, tmp_path, workers):
    import psutil

    total = 200  # the kill lands long before the end, even on a loaded machine
    folder = many_judgments(tmp_path / "in", total)
    command = [
        sys.executable,
        "-c",
        "from aqgr.interfaces.cli import main; main()",
        "summarize",
        str(folder),
        "--home",
        str(home),
        "--workers",
        str(workers),
    ]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for_summaries(database_url, 25, proc)
    children = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    gone, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, "worker processes outlived their killed parent"
    judgments, summaries = _count(database_url)
    assert 25 <= summaries < total and judgments == summaries  # no judgment without its summary
    store = Store(database_url)
    for summary in store.summaries("extractive.v1"):
        validate_summary(summary)
    assert not store.failures()

    report = Archive(home).summarize([folder], workers=workers)
    assert len(report.unchanged) == summaries and len(report.summarised) == total - summaries and not report.failed
    assert _count(database_url) == (total, total)
    assert len(set(report.summarised) | set(report.unchanged)) == total


# -- concurrent writers ------------------------------------------------------------
def _writer(url: str, worker: int, ids: list[str], barrier) -> None:
    from aqgr.archive.store import JudgmentRow
    from aqgr.schemas.summary import Provenance, StructuredSummary
    from aqgr.summarizer.extractive.engine import summarize_text

    store = Store(url, create=False)
    made = []
    for judgment_id in ids:
        text = JUDGMENTS["A1"] + f"\nwritten by worker {worker}"
        provenance = Provenance(
            engine="extractive.v1", engine_version="1.0.0", source_sha256=f"{worker:064d}", model=None
        )
        made.append(
            (
                JudgmentRow(
                    id=judgment_id,
                    source_path=f"/w{worker}/{judgment_id}.txt",
                    sha256=f"{worker:064d}",
                    n_chars=len(text),
                    text=text,
                ),
                StructuredSummary.from_slots(judgment_id, summarize_text(text), provenance),
            )
        )
    barrier.wait()
    for row, summary in made:
        store.save(row, summary)


def test_concurrent_writer_processes_neither_lose_nor_duplicate(database_url, home):
    home.mkdir(parents=True, exist_ok=True)
    Store(database_url)  # create the tables once, as a batch's parent does
    ids = [f"C{i}" for i in range(40)]
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(4)
    procs = [
        context.Process(target=_writer, args=(database_url, w, ids[w * 5 :] + ids[: w * 5], barrier)) for w in range(4)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    store = Store(database_url)
    assert store.count_judgments() == 40 and store.count_summaries() == {("extractive.v1", "1.0"): 40}
    for judgment_id in ids:  # each judgment and its summary come from the same writer (one transaction)
        row, summary = store.judgment(judgment_id), store.summary_row(judgment_id, "extractive.v1")
        assert row.sha256 == summary.source_sha256


def test_thread_parallelism_for_io_bound_engines(archive, tmp_path, monkeypatch):
    """Provider engines declare parallelism = 'thread': N threads share the engine and the store."""
    import threading

    from aqgr.summarizer.extractive.engine import ExtractiveSummarizer

    seen: set[str] = set()
    real = ExtractiveSummarizer.summarize

    def tracking(self, judgment):
        seen.add(threading.current_thread().name)
        return real(self, judgment)

    monkeypatch.setattr(ExtractiveSummarizer, "parallelism", "thread", raising=False)
    monkeypatch.setattr(ExtractiveSummarizer, "summarize", tracking)
    report = archive.summarize([many_judgments(tmp_path / "in", 8, paragraphs=3)], workers=3)
    assert len(report.summarised) == 8 and not report.failed
    assert seen and all(name.startswith("aqgr-batch") for name in seen)


def test_ctrl_c_stops_cleanly_and_the_rerun_resumes(home, tmp_path, monkeypatch):
    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    total = 240  # ~9 s of work at full speed: the Ctrl-C lands long before the end, even on a loaded machine
    folder = many_judgments(tmp_path / "in", total)
    url = f"sqlite:///{home / 'aqgr.db'}"
    command = [
        sys.executable,
        "-c",
        "from aqgr.interfaces.cli import main; main()",
        "summarize",
        str(folder),
        "--home",
        str(home),
        "--workers",
        "2",
    ]
    # Ctrl-C as a terminal's foreground job gets it: a suite started in the background (`cmd &`
    # in a script, nohup) hands its children SIGINT ignored, and an ignored Ctrl-C stops nothing
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _wait_for_summaries(url, 10, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "run the same command again" in err
    judgments, summaries = _count(url)
    assert judgments == summaries < total
    report = Archive(home).summarize([folder])
    assert len(report.unchanged) == summaries and len(report.summarised) == total - summaries
