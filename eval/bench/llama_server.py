"""llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`) on 127.0.0.1, started and
stopped by a test or a benchmark (`pip install 'llama-cpp-python[server]'`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`python -m llama_cpp.server` serving one GGUF file on a free port of 127.0.0.1 (`with` stops it)."""

    def __init__(self, model: Path, n_ctx: int = 8192, n_threads: int | None = None, alias: str = "smollm2"):
        from aqgr.llm.llamacpp import default_threads

        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = open(os.devnull, "wb")
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--model_alias",
            alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            str(n_threads or default_threads()),
        ]
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

    def __enter__(self) -> "LlamaServer":
        return self.wait()

    def __exit__(self, *exc) -> None:
        self.stop()
