"""minilm-l6-int8.v1: the packaged MiniLM exported to ONNX in int8 (one real export per run, ~10 CPU-s)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from aqgr.foundation.errors import WriteError

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("sentence_transformers")

from aqgr.retrieval.dense import onnx_minilm  # noqa: E402
from aqgr.retrieval.dense.embedders import embedders  # noqa: E402

SENTENCES = [
    "The husband and his parents tortured the young bride for dowry until she took her own life.",
    "The company evaded excise duty on goods cleared from its factory.",
    "A tenant refused to vacate the shop after the lease expired.",
    "Whether the High Court was right in acquitting the accused of murder under Section 302.",
    "Compensation for land acquired under the Land Acquisition Act at the market value on the date of notification.",
    " ".join(
        ["The assessing officer examined the books of account and recorded the returns filed by the assessee."] * 10
    ),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The cache folder holding one real export, and the embedder that made it."""
    cache = tmp_path_factory.mktemp("models")
    embedder = onnx_minilm.Int8MiniLMEmbedder(cache_dir=cache)
    embedder.model_path()
    return cache, embedder


def _no_export(model_dir, out):
    raise AssertionError("exported again")


def test_vectors_close_to_minilm_v1_normalised_deterministic(exported):
    _, int8 = exported
    assert int8.name == "minilm-l6-int8.v1" and int8.dim == 384
    vectors = int8.embed(SENTENCES)
    reference = embedders.create("minilm-l6.v1").embed(SENTENCES)
    assert vectors.dtype == np.float32 and vectors.shape == (len(SENTENCES), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    # Measured on 256 AILA summary windows: min 0.988, mean 0.994 (int8 rounding).
    assert (np.sum(vectors * reference, axis=1) > 0.98).all()
    # Meaning survives: each sentence is nearest its own float vector.
    assert (np.argmax(vectors @ reference.T, axis=1) == np.arange(len(SENTENCES))).all()
    assert np.array_equal(int8.embed(SENTENCES), vectors)
    # A text's vector does not depend on the texts embedded with it.
    np.testing.assert_allclose(int8.embed(SENTENCES[2:3])[0], vectors[2], atol=1e-6)
    np.testing.assert_allclose(int8.embed(SENTENCES[::-1])[::-1], vectors, atol=1e-6)
    assert int8.embed([]).shape == (0, 384)


def test_beside_other_calls_one_thread_and_the_same_vectors(exported, monkeypatch):
    """A window embedded beside another call of a search (aqgr/foundation/parallel.py) runs on one
    thread, and its vector is the one any thread count gives, to the bit."""
    _, int8 = exported
    alone = int8.embed(SENTENCES)
    threads = []
    real = onnx_minilm._session
    monkeypatch.setattr(onnx_minilm, "_session", lambda model, count: (threads.append(count), real(model, count))[1])
    monkeypatch.setattr(onnx_minilm, "beside_others", lambda: True)
    assert np.array_equal(int8.embed(SENTENCES), alone) and threads == [1]
    monkeypatch.setattr(onnx_minilm, "beside_others", lambda: False)
    assert np.array_equal(int8.embed(SENTENCES), alone) and threads == [1, 0]


def test_export_made_once_and_reused(exported, monkeypatch):
    cache, first = exported
    record = json.loads((first.model_path().parent / onnx_minilm.RECORD_FILE).read_text())
    assert record["export_key"] == first.export_key and record["size"] == first.model_path().stat().st_size
    monkeypatch.setattr(onnx_minilm, "export_int8", _no_export)
    again = onnx_minilm.Int8MiniLMEmbedder(cache_dir=cache)
    assert again.model_path() == first.model_path()
    np.testing.assert_array_equal(again.embed(SENTENCES[:2]), first.embed(SENTENCES[:2]))
    assert [p.name for p in (cache / "minilm-l6-int8.v1").iterdir()] == [first.export_key[:32]]  # no staging left


@pytest.mark.parametrize("damage", ["truncated", "flipped", "no-record", "bad-record"])
def test_damaged_export_is_rebuilt_not_trusted(exported, tmp_path, monkeypatch, damage):
    cache, good = exported
    good_file = good.model_path()
    copy = tmp_path / "models"
    shutil.copytree(cache, copy)
    model = onnx_minilm.Int8MiniLMEmbedder(cache_dir=copy).model_path()
    record = model.parent / onnx_minilm.RECORD_FILE
    data = bytearray(model.read_bytes())
    if damage == "truncated":
        model.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":  # same size, one byte changed
        data[len(data) // 2] ^= 0xFF
        model.write_bytes(bytes(data))
    elif damage == "no-record":
        record.unlink()
    else:
        record.write_text("{not json")
    calls = []

    def export_copy(model_dir, out):  # stands in for the real export: copies the good file
        calls.append(out)
        shutil.copyfile(good_file, out)

    monkeypatch.setattr(onnx_minilm, "export_int8", export_copy)
    rebuilt = onnx_minilm.Int8MiniLMEmbedder(cache_dir=copy)
    assert rebuilt.model_path() == model and len(calls) == 1
    assert model.read_bytes() == good_file.read_bytes()
    np.testing.assert_array_equal(rebuilt.embed(SENTENCES[:2]), good.embed(SENTENCES[:2]))
    onnx_minilm.Int8MiniLMEmbedder(cache_dir=copy).model_path()
    assert len(calls) == 1  # whole again: a new embedder checks it and trusts it


def test_fingerprint_follows_weights_and_recipe_without_exporting(tmp_path, monkeypatch):
    monkeypatch.setattr(onnx_minilm, "export_int8", _no_export)
    embedder = onnx_minilm.Int8MiniLMEmbedder(cache_dir=tmp_path / "empty")
    before, key = embedder.fingerprint, embedder.export_key
    assert before.startswith("sha256:") and before != embedders.create("minilm-l6.v1").fingerprint
    assert embedders.create("minilm-l6-int8.v1").fingerprint == before
    monkeypatch.setitem(onnx_minilm.EXPORT_RECIPE, "quantise", "something else")
    assert embedder.fingerprint != before and embedder.export_key != key
    monkeypatch.undo()
    one_at_a_time = onnx_minilm.Int8MiniLMEmbedder(cache_dir=tmp_path / "empty")
    one_at_a_time.batch_size = 8  # vectors would differ: a new fingerprint, the same exported file
    assert one_at_a_time.fingerprint != before and one_at_a_time.export_key == key
    assert not (tmp_path / "empty").exists()


def test_unwritable_model_cache_says_where(tmp_path, monkeypatch):
    monkeypatch.setattr(onnx_minilm, "export_int8", _no_export)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(onnx_minilm.ENV_MODEL_CACHE, str(blocker / "models"))
    assert onnx_minilm.model_cache_dir() == blocker / "models"
    with pytest.raises(WriteError, match="a-file"):
        onnx_minilm.Int8MiniLMEmbedder().model_path()
