"""The sandbox survives whatever runs in it: hang, segfault, abort, os._exit, memory blow-up,
exceptions, leftover processes and threads, and a forged result."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kernelgen.verify.sandbox import run_isolated

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def _targets_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", f"{HERE}{os.pathsep}{path}" if path else str(HERE))


def _run(target: str, request: str = "x", timeout_s: float = 20, memory_mb: int = 2048):
    return run_isolated(
        f"sandbox_targets:{target}", request, timeout_s=timeout_s, memory_mb=memory_mb, device="cpu"
    )


def test_result_comes_back() -> None:
    out = _run("ok", "hello")
    assert out.result == "HELLO" and out.category is None


@pytest.mark.parametrize(
    ("target", "category", "words"),
    [
        ("segfault", "crash", "SIGSEGV"),
        ("abort", "crash", "SIGABRT"),
        ("exit_quietly", "crash", "without a result"),
        ("raises", "crash", "boom"),
        ("forge_result", "crash", "without a result"),
        # whose memory ran out, and how much was asked, is in the reason
        ("gpu_out_of_memory", "oom", "CUDA out of memory. Tried to allocate 20.00 GiB"),
    ],
)
def test_death_is_a_category(target: str, category: str, words: str) -> None:
    out = _run(target)
    assert out.result is None
    assert out.category == category
    assert words in (out.reason or "")


def test_hang_is_killed_at_the_timeout() -> None:
    start = time.monotonic()
    out = _run("hang", timeout_s=2)
    assert out.category == "timeout"
    assert time.monotonic() - start < 10


def test_memory_cap() -> None:
    out = _run("eat_memory", memory_mb=512)
    assert out.category in ("oom", "crash")
    assert out.result is None


def test_leftover_processes_are_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    out = _run("leave_children", str(pid_file), timeout_s=5)
    assert out.category == "timeout"
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # A killed child stays a zombie until reaped by init; treat a zombie as dead.
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z":
            return
        time.sleep(0.1)
    pytest.fail(f"grandchild {pid} outlived the sandbox")


def _dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z"


def test_child_dies_with_a_killed_caller(tmp_path: Path) -> None:
    """kill -9 of the caller takes its watchdog along; the child must not outlive it."""
    import signal
    import subprocess
    import sys

    pid_file = tmp_path / "pid"
    caller = subprocess.Popen([
        sys.executable, "-c",
        "import sys; from kernelgen.verify.sandbox import run_isolated; "
        "run_isolated('sandbox_targets:hang_with_pid', sys.argv[1], timeout_s=600, "
        "memory_mb=2048, device='cpu')",
        str(pid_file),
    ])  # fmt: skip
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the sandboxed child never started"
        time.sleep(0.05)
    child = int(pid_file.read_text())
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    deadline = time.monotonic() + 10
    while not _dead(child):
        assert time.monotonic() < deadline, f"child {child} outlived its killed caller"
        time.sleep(0.1)


def test_a_triton_compile_error_names_its_innermost_error_and_line() -> None:
    """A chain of CompilationErrors (the kernel's call site, then the jit function it called)
    prints "at L:C:" first and the error last: the verdict's one line keeps both ends, so the
    agent reads what failed and where, not "at 10:12:" alone."""
    import ast

    from triton.compiler.errors import CompilationError

    from kernelgen.verify.runner import _message

    callee = "def _kth(key):\n    u = key\n    shift: tl.constexpr = 27 if step < 6 else 0\n"
    inner = CompilationError(callee, ast.parse(callee).body[0].body[1], "ValueError('no')")
    kernel = "def k(x):\n    y = x\n    t = _kth(y)\n"
    outer = CompilationError(kernel, ast.parse(kernel).body[0].body[1], None)
    outer.__cause__ = inner
    msg = _message(outer)
    assert msg.startswith("at 3:4:")
    assert "`shift: tl.constexpr = 27 if step < 6 else 0`" in msg and "ValueError('no')" in msg
    assert _message(ValueError("first line\nsecond")) == "first line"
