# usage: python docs/experiments/scripts/2026-12-07-onnx-ops.py [TOKENS]
"""One-off measurement: where one facts window's time goes inside `minilm-l6-int8.v1`.

Runs the exported int8 model (exported on first use, as the embedder does) on one text of TOKENS
word pieces (default 230, a ~1,000-character window) on one ONNX Runtime thread, as a window
beside another runs in a search, 30 times with ONNX Runtime's profiler on, and prints each
operator type's time per run. Only the session options the embedder uses are set: the numbers
are the embedder's, not a tuned variant's."""

import collections
import json
import sys
import tempfile

import numpy as np
import onnxruntime as ort

from aqgr.retrieval.onnx_minilm import Int8MiniLMEmbedder

tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 230
options = ort.SessionOptions()
options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
options.add_session_config_entry("session.intra_op.allow_spinning", "0")
options.enable_profiling = True
options.profile_file_prefix = str(__import__("pathlib").Path(tempfile.mkdtemp()) / "ops")  # not in the working folder
session = ort.InferenceSession(str(Int8MiniLMEmbedder().model_path()), options, providers=["CPUExecutionProvider"])
ids = np.random.RandomState(0).randint(1000, 20000, size=(1, tokens)).astype(np.int64)
ids[0, 0], ids[0, -1] = 101, 102  # [CLS] ... [SEP]
feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
runs = 30
for _ in range(runs):
    session.run(None, feed)
events = json.load(open(session.end_profiling()))
took, count = collections.Counter(), collections.Counter()
for e in events:
    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
        took[e["args"]["op_name"]] += e["dur"]
        count[e["args"]["op_name"]] += 1
total = sum(took.values())
for op, us in took.most_common(12):
    print(f"{op:28s} {us / runs / 1000:6.2f} ms a run  {100 * us / total:5.1f}%  {count[op] // runs} nodes")
print(f"{'all operators':28s} {total / runs / 1000:6.2f} ms a run")
