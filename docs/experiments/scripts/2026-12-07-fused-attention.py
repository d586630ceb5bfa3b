"""MiniLM with ONNX Runtime's fused transformer operators, against the default int8 export.

    python docs/experiments/scripts/2026-12-07-fused-attention.py [WORKDIR]

Exports the packaged all-MiniLM-L6-v2 weights to float ONNX as `minilm-l6-int8.v1` does
(retrieval/onnx_minilm.py `_export_fp32`), fuses it with `onnxruntime.transformers.optimizer`
(Attention, EmbedLayerNormalization, SkipLayerNormalization, BiasGelu), quantises it two ways
(MatMul and Attention to int8, as QAttention; MatMul only) and compares each with the default
export, one window a run on one thread, as a search embeds its facts: the cosine of the
vectors over the AILA queries' windows and the first 60 judgments' first windows, and the
median time of the full windows (200 tokens or more), alternating the models. Needs torch,
transformers and onnx (the export's dependencies) and $AQGR_DATASETS.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _variants(workdir: Path) -> dict[str, Path]:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    from aqgr.retrieval.embedders import _minilm_dir
    from aqgr.retrieval.onnx_minilm import _export_fp32

    fp32, fused = workdir / "fp32.onnx", workdir / "fused.fp32.onnx"
    _export_fp32(_minilm_dir(), fp32)
    model = optimizer.optimize_model(
        str(fp32), model_type="bert", num_heads=12, hidden_size=384, opt_level=0, use_gpu=False
    )
    print("fused operators:", {k: v for k, v in model.get_fused_operator_statistics().items() if v})
    model.save_model_to_file(str(fused))
    out = {}
    for name, ops in (("fused, MatMul + Attention int8", ["MatMul", "Attention"]), ("fused, MatMul int8", ["MatMul"])):
        path = workdir / (name.replace(" ", "_").replace(",", "").replace("+", "and") + ".onnx")
        quantize_dynamic(
            str(fused),
            str(path),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=ops,
            extra_options={"DefaultTensorType": 1},
        )  # the fused graph's outputs have no inferred type
        out[name] = path
    return out


def _windows() -> list[str]:
    from aqgr.foundation.paths import shared_datasets
    from aqgr.retrieval.dense import split_windows

    data = shared_datasets() / "aila2019"
    texts = [line.split("||", 1)[1] for line in (data / "Query_doc.txt").read_text().splitlines() if "||" in line]
    windows = [w for text in texts for w in split_windows(text)]
    for path in sorted((data / "Object_casedocs").glob("*.txt"))[:60]:
        windows += split_windows(path.read_text(errors="replace"))[:3]
    return windows


def main(workdir: Path) -> None:
    import onnxruntime as ort

    from aqgr.retrieval.embedders import _tokenizer
    from aqgr.retrieval.onnx_minilm import Int8MiniLMEmbedder

    default = Int8MiniLMEmbedder(threads=1)

    def session(path: Path):
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    sessions = {"default (minilm-l6-int8.v1)": session(default.model_path())}
    sessions.update({name: session(path) for name, path in _variants(workdir).items()})
    windows = _windows()
    feeds = []
    for encoded in _tokenizer(default.model_dir, default.max_tokens).encode_batch([w.strip() for w in windows]):
        ids = np.array([encoded.ids], dtype=np.int64)
        feeds.append(
            {
                "input_ids": ids,
                "attention_mask": np.array([encoded.attention_mask], dtype=np.int64),
                "token_type_ids": np.zeros_like(ids),
            }
        )

    def vectors(s) -> np.ndarray:
        out = np.stack([s.run(None, feed)[0][0] for feed in feeds])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    base = vectors(sessions["default (minilm-l6-int8.v1)"])
    full = [feed for feed in feeds if feed["input_ids"].shape[1] >= 200][:40]
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(3):
        for feed in full:
            for name, s in sessions.items():
                t = time.perf_counter()
                s.run(None, feed)
                times[name].append(time.perf_counter() - t)
    reference = statistics.median(times["default (minilm-l6-int8.v1)"])
    print(f"{len(windows)} windows; {len(full)} full windows timed x3, one thread")
    for name, s in sessions.items():
        cos = (base * vectors(s)).sum(axis=1)
        median = statistics.median(times[name])
        print(
            f"  {name}: {median * 1000:.2f} ms a window (x{median / reference:.3f}); cosine to the default min {cos.min():.7f}, "
            f"median {np.median(cos):.7f}"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp))
