"""What a batch is given that is not a judgment file is said, once, never silently dropped or stored:
missing paths, dangling links, FIFOs, links out of the folder, a 1-byte file; and the other small doors
(a statute of random bytes, a non-ASCII API key, k below 1)."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from aqgr import Archive
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, JUDGMENTS, indexed_archive, write_judgments

runner = CliRunner()


def _summarize(home, *paths):
    result = runner.invoke(app, ["summarize", *map(str, paths), "--home", str(home), "--json"])
    assert "Traceback" not in result.output, result.output
    return result, json.loads(result.stdout[: result.stdout.rindex("}") + 1])


def test_links_fifos_and_tiny_files_in_a_folder_are_reported_and_not_stored(home, tmp_path):
    folder = write_judgments(tmp_path / "in", {"A1": JUDGMENTS["A1"]})
    outside = write_judgments(tmp_path / "elsewhere", {"SECRET": JUDGMENTS["A2"]}) / "SECRET.txt"
    (folder / "leak.txt").symlink_to(outside)
    (folder / "dangling.txt").symlink_to(tmp_path / "gone.txt")
    os.mkfifo(folder / "pipe.txt")
    (folder / "tiny.txt").write_bytes(b"x")
    inside = folder / "alias.txt"
    inside.symlink_to(
        folder / "A1.txt"
    )  # a link within the folder is read: the file A1 under a second name, one judgment (docs/renames.md)

    result, report = _summarize(home, folder)
    reasons = {os.path.basename(f["path"]): f["reason"] for f in report["failed"]}
    assert reasons == {
        "leak.txt": "outside_folder",
        "dangling.txt": "broken_link",
        "pipe.txt": "not_a_file",
        "tiny.txt": "too_short",
    }
    assert report["summarised"] == ["A1"] and report["unchanged"] == ["A1"] and report["skipped_unsupported"] == []
    flat = " ".join(result.stderr.split())
    assert "outside the folder" in flat and "FIFO" in flat and "too little to be a judgment" in flat
    archive = Archive(home)
    assert archive.status()["judgments"] == 1
    assert all(archive.summary(i) is None for i in ("leak", "tiny", "dangling", "pipe"))

    result, report = _summarize(home, outside)  # named on the command line: the user's choice, read
    assert report["summarised"] == ["SECRET"]


def test_a_missing_path_is_one_failure_not_also_skipped(home, tmp_path):
    result, report = _summarize(home, tmp_path / "does-not-exist.txt")
    assert [f["reason"] for f in report["failed"]] == ["missing"] and report["skipped_unsupported"] == []
    assert result.exit_code == 1
    assert "0 skipped" in " ".join(result.stderr.split())


def test_a_statute_of_random_bytes_is_refused(home, tmp_path):
    folder = tmp_path / "statutes"
    folder.mkdir()
    (folder / "S1.txt").write_bytes(bytes(range(256)) * 8)
    result = runner.invoke(app, ["statutes", str(folder), "--home", str(home)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "binary" in result.stderr


def test_an_api_key_that_http_cannot_carry_is_refused_at_start(home):
    for key in ("clé-secrète", "key\n", " padded "):
        result = runner.invoke(app, ["serve", "--home", str(home), "--api-key", key])
        assert result.exit_code == 2 and "printable ASCII" in " ".join(result.stderr.split()), result.output


def test_k_below_one_is_refused_not_a_silent_cut(home, tmp_path):
    archive = indexed_archive(home, tmp_path / "in")
    full = archive.search(DYING_DECLARATION_FACTS, k=10)
    for k in (-1, 0):
        with pytest.raises(ValueError, match="k must be at least 1"):
            archive.search(DYING_DECLARATION_FACTS, k=k)
    with pytest.raises(TypeError, match="whole number"):
        archive.search(DYING_DECLARATION_FACTS, k=2.5)
    assert len(archive.search(DYING_DECLARATION_FACTS, k=len(full.hits)).hits) == len(full.hits)
