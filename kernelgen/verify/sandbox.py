"""Run untrusted code in a fresh process: hard timeout, memory cap, nothing it does reaches us.

The child is a new interpreter (not a fork: CUDA state and our imports stay out of it) in its own
session, so a timeout kills whatever threads or processes the candidate started. It reads a nonce
on stdin and writes its result, with the nonce, to a file we name: a result without the nonce, or
no result at all, is a crash. Segfaults, aborts, os._exit and illegal memory accesses all end as
a dead child and a category here, never as an exception in the caller.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from kernelgen.paths import bytecode_cache, triton_cache
from kernelgen.records import Category

# The memory cap of a sandboxed process (the judge's runners, the benchmark) unless a caller asks
# for another.
DEFAULT_MEMORY_MB = 8192
_POLL_S = 0.05


class Outcome(BaseModel):
    """What came back: the child's result text, or why there is none."""

    result: str | None = None
    category: Category | None = None
    reason: str | None = None
    seconds: float
    stderr_tail: str = ""


def _limit_memory(cap_bytes: int) -> None:
    # Address space, not RSS: the only limit the kernel enforces on allocation itself. CUDA maps
    # the whole device address space, so callers cap only CPU runs this way.
    resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))


_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """The child runs in its own session, out of reach of a kill aimed at the caller's group:
    ask the kernel to kill it when the caller dies (kill -9 included), or the timeout watchdog
    dies with the caller and a hanging candidate lives on."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the watchdog is the only guard
        return
    if os.getppid() != parent:  # the caller died before the request took effect
        os._exit(1)


def _child_setup(parent: int, cap_bytes: int | None) -> None:
    _die_with(parent)
    if cap_bytes is not None:
        _limit_memory(cap_bytes)


def _rss_bytes(pid: int) -> int:
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def _describe_exit(code: int, stderr: str) -> str:
    if code < 0:
        name = signal.Signals(-code).name
        what = {"SIGSEGV": "segmentation fault", "SIGABRT": "abort", "SIGKILL": "killed"}
        return f"process died of {name} ({what.get(name, 'signal')})"
    last = next((ln for ln in reversed(stderr.strip().splitlines()) if ln.strip()), "")
    return f"process exited with code {code} without a result" + (f": {last}" if last else "")


def _out_of_memory(stderr: str) -> str | None:
    """The reason for a process that died of memory, with the line that says whose memory
    (host or GPU, how much was asked): a judge on a loaded machine must be told apart from a
    candidate that allocates too much. None when the stderr says nothing of memory."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    said = next(
        (ln for ln in reversed(lines) if "MemoryError" in ln or "out of memory" in ln.lower()),
        None,
    )
    return None if said is None else f"ran out of memory: {said[:300]}"


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        data = path.read_bytes()[-limit:]
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def sandbox_env(device: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a sandboxed process: the interpreter on CPU; on CUDA, Triton's cache
    shared by every sandbox (what the judge's runners compiled, the benchmark loads)."""
    env = {**os.environ, **(extra or {})}
    env["PYTHONUNBUFFERED"] = "1"
    if "PYTHONDONTWRITEBYTECODE" not in env:
        env.setdefault("PYTHONPYCACHEPREFIX", str(bytecode_cache()))
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env.setdefault("CUDA_VISIBLE_DEVICES", "")
    else:
        env.pop("TRITON_INTERPRET", None)
        env.setdefault("TRITON_CACHE_DIR", str(triton_cache()))
    return env


def run_isolated(
    target: str,
    request: str,
    *,
    timeout_s: float,
    memory_mb: int,
    device: str,
    env: dict[str, str] | None = None,
) -> Outcome:
    """Run `target` ("package.module:function", called with the request text, returning the
    result text) in a fresh process and return its outcome."""
    nonce = secrets.token_hex(16)
    env = sandbox_env(device, env)
    env["KERNELGEN_MEMORY_MB"] = str(memory_mb)
    cap = memory_mb * 1024 * 1024
    with tempfile.TemporaryDirectory(prefix="kernelgen-") as tmp:
        folder = Path(tmp)
        (folder / "request.json").write_text(request)
        result_path = folder / "result.json"
        start = time.monotonic()
        with open(folder / "stdout", "wb") as out, open(folder / "stderr", "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "kernelgen.verify.child", target, str(folder)],
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                env=env,
                cwd=os.getcwd(),
                start_new_session=True,
                preexec_fn=functools.partial(
                    _child_setup, os.getpid(), cap if device == "cpu" else None
                ),
            )
            assert proc.stdin is not None
            proc.stdin.write(nonce.encode() + b"\n")
            proc.stdin.close()
            category: Category | None = None
            reason: str | None = None
            while proc.poll() is None:
                elapsed = time.monotonic() - start
                if elapsed > timeout_s:
                    category, reason = "timeout", f"no result after {timeout_s:.0f} s (killed)"
                elif _rss_bytes(proc.pid) > cap:
                    category, reason = "oom", f"resident memory above the {memory_mb} MiB cap"
                if category:
                    break
                time.sleep(_POLL_S)
            # Whatever the candidate started in the child's session goes down with it.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            code = proc.wait()
        seconds = time.monotonic() - start
        stderr = _tail(folder / "stderr")
        if category:
            return Outcome(category=category, reason=reason, seconds=seconds, stderr_tail=stderr)
        try:
            message = json.loads(result_path.read_text())
        except (OSError, ValueError):
            message = None
        if not isinstance(message, dict) or message.get("nonce") != nonce:
            if oom := _out_of_memory(stderr):
                return Outcome(category="oom", reason=oom, seconds=seconds, stderr_tail=stderr)
            return Outcome(
                category="crash",
                reason=_describe_exit(code, stderr),
                seconds=seconds,
                stderr_tail=stderr,
            )
        return Outcome(result=message["result"], seconds=seconds, stderr_tail=stderr)
