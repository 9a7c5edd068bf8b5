"""Static rules: each rule rejects a small realistic cheat and accepts its honest twin."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kernelgen.verify.static import RULES, Violation, check_source

ROOT = Path(__file__).resolve().parents[2]

KERNEL = """
@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, num / tl.sum(num, axis=0), mask=mask)
"""


LAUNCH = "    _softmax_kernel[(n_rows,)](y, x, n_cols, BLOCK=triton.next_power_of_2(n_cols))\n"
HELPER = """
def _launch(y, x, n_cols):
    _softmax_kernel[(y.shape[0],)](y, x, n_cols, BLOCK=triton.next_power_of_2(n_cols))
"""
AUTOTUNED = """\
@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (2, 4)], key=["n_cols"])
@triton.heuristics({"EVEN": lambda args: args["n_cols"] % 16 == 0})
@triton.jit
"""


def candidate(head: str = "", body: str = "", kernel: str = KERNEL, tail: str = "") -> str:
    """A tiny softmax candidate; `head` goes after the imports, `body` before the launch."""
    body = textwrap.indent(textwrap.dedent(body), "    ")
    return f"""\
import torch
import triton
import triton.language as tl
{textwrap.dedent(head)}
{kernel}

def softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
{body}
    _softmax_kernel[(n_rows,)](y, x, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y
{textwrap.dedent(tail)}"""


def rules(source: str) -> set[str]:
    return {v.rule for v in check_source(source, "softmax")}


# (rule, rejected source, near-identical accepted source or None where no honest twin exists)
CASES: list[tuple[str, str, str | None]] = [
    # A call counter or an output cache in module state: the kernel can change its behaviour
    # once it is being timed. Reading a module-level table is fine.
    (
        "module-state",
        candidate("_CALLS = [0]", body="_CALLS[0] += 1"),
        candidate("_CALLS = [0]", body="n = _CALLS[0]"),
    ),
    (
        "module-state",
        candidate("_SEEN = {}", body="_SEEN.update({n_rows: y})"),
        candidate("_SEEN = {}", body="m = _SEEN.get(n_rows)"),
    ),
    (
        "module-state",
        candidate(tail="def _helper(x, cache={}):\n    return cache\n"),
        candidate(tail="def _helper(x, cache=None):\n    return cache\n"),
    ),
    ("forbidden-import", candidate("import os"), candidate("import math")),
    ("forbidden-import", candidate("import numpy as np"), candidate("import itertools")),
    ("forbidden-import", candidate("from references.softmax import softmax as ref"), None),
    ("forbidden-import", candidate("from . import helpers"), None),
    ("forbidden-import", candidate("import ctypes"), candidate("import functools")),
    ("forbidden-import", candidate("import threading"), candidate("import operator")),
    (
        "forbidden-import",
        candidate("from triton import testing"),
        candidate("from triton import cdiv"),
    ),
    ("forbidden-import", candidate("import triton.runtime"), candidate("import triton.language")),
    ("forbidden-import", candidate("from torch import nn"), candidate("from torch import Tensor")),
    ("forbidden-import", candidate("from torch import exp"), candidate("from torch import empty")),
    ("forbidden-import", candidate("from math import *"), candidate("from math import ceil")),
    ("forbidden-import", candidate("import torch.nn.functional as F"), None),
    (
        "forbidden-import",
        candidate("from triton.runtime import driver"),
        candidate("from triton.language.extra import libdevice"),
    ),
    (
        "try",
        candidate(
            body="try:\n    n_cols = int(n_cols)\nexcept Exception:\n    return x.softmax(-1)"
        ),
        candidate(body="n_cols = int(n_cols)"),
    ),
    ("global", candidate("_CALLS = 0", body="global _CALLS\n_CALLS = 1"), candidate("_CALLS = 0")),
    (
        "global",
        candidate(body="def bump():\n    nonlocal n_rows\n    n_rows = 1\nbump()"),
        candidate(body="def bump():\n    return 1\nn_rows = n_rows * bump()"),
    ),
    ("class-def", candidate("class Out(torch.Tensor):\n    pass"), None),
    (
        "forbidden-builtin",
        candidate(body='n_cols = eval("n_cols")'),
        candidate(body='n_cols = int("3")'),
    ),
    (
        "forbidden-builtin",
        candidate(body='f = getattr(x, "exp")'),
        candidate(body='f = hasattr(x, "exp")'),
    ),
    ("forbidden-builtin", candidate(body='T = type("T", (), {})'), candidate(body="T = type(x)")),
    ("forbidden-builtin", candidate(body="t = type"), candidate(body="t = type(x)")),
    ("forbidden-builtin", candidate(body='f = open("/proc/self/mem")'), None),
    (
        "forbidden-builtin",
        candidate("import operator", body='f = operator.methodcaller("exp")'),
        candidate("import operator", body="f = operator.mul(n_rows, n_cols)"),
    ),
    ("dunder", candidate(body="cls = x.__class__"), candidate(body="name = softmax.__name__")),
    ("dunder", candidate(body="b = __builtins__"), candidate(body="b = __name__")),
    ("dunder", candidate(body="g = softmax.__globals__"), candidate(body="d = softmax.__doc__")),
    ("monkeypatch", candidate(body="torch.softmax = softmax"), candidate(body="sm = softmax")),
    ("monkeypatch", candidate("tl.exp = tl.exp2"), candidate("EXP = tl.exp2")),
    ("monkeypatch", candidate(body="x.data = y"), candidate(body="x = y")),
    ("monkeypatch", candidate(body="del torch.cuda"), candidate(body="del n_cols")),
    ("monkeypatch", candidate(body="_softmax_kernel.run = None"), None),
    ("monkeypatch", candidate(body="tl.core.__all__[0] = None"), None),
    ("import-alias", candidate(body="t = torch\ny = t.exp(x)"), candidate(body="t = x\ny = t")),
    ("import-alias", candidate(body="tl = x\ny = tl.softmax(-1)"), candidate(body="z = x")),
    ("import-alias", candidate(tail="def helper(torch):\n    return torch"), None),
    ("import-alias", candidate("from math import exp as tl"), candidate("from math import exp")),
    (
        "escape-hatch",
        candidate(body="torch.cuda.synchronize()"),
        candidate(body="ok = torch.cuda.is_available()"),
    ),
    (
        "escape-hatch",
        candidate(body="s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    pass"),
        candidate(body="with torch.cuda.device(x.device):\n    pass"),
    ),
    ("escape-hatch", candidate(body="g = torch.cuda.CUDAGraph()"), None),
    ("escape-hatch", candidate(tail="fast = torch.compile(softmax)"), None),
    ("escape-hatch", candidate(body="torch.manual_seed(0)"), None),
    ("escape-hatch", candidate(body="torch.set_default_dtype(torch.float64)"), None),
    ("escape-hatch", candidate(body="f = torch._C._nn"), None),
    ("escape-hatch", candidate(body="n = triton.runtime.driver.active"), None),
    ("escape-hatch", candidate(body="triton.testing.do_bench(lambda: None)"), None),
    ("escape-hatch", candidate(body="torch.backends.cuda.matmul.allow_tf32 = True"), None),
    (
        "launcher-torch",
        candidate(body="return torch.softmax(x, -1)"),
        candidate(body="y = torch.zeros_like(x)"),
    ),
    ("launcher-torch", candidate(body="return torch.nn.functional.softmax(x, -1)"), None),
    ("launcher-torch", candidate(body="f = torch.exp"), candidate(body="dt = torch.float32")),
    (
        "launcher-torch",
        candidate(body="y = torch.ones_like(x)"),
        candidate(body="y = torch.empty(3, device=x.device)"),
    ),
    (
        "launcher-torch",
        candidate(body="y = torch.Tensor.exp(x)"),
        candidate(body="x = torch.Tensor.contiguous(x)"),
    ),
    ("launcher-torch", candidate(body="n = torch.linalg.norm(x)"), None),
    ("launcher-torch", candidate("EXP = torch.exp"), candidate("DTYPE = torch.bfloat16")),
    ("launcher-arithmetic", candidate(body="x = x.exp()"), candidate(body="x = x.contiguous()")),
    (
        "launcher-arithmetic",
        candidate(body="x = x.to(torch.float32)"),
        candidate(body="x = x.reshape(n_rows, -1)"),
    ),
    (
        "launcher-arithmetic",
        candidate(body="x = x.float()"),
        candidate(body="x = x.view(n_rows, n_cols)"),
    ),
    ("launcher-arithmetic", candidate(body="y.copy_(x)"), candidate(body="s = y.stride(0)")),
    (
        "launcher-arithmetic",
        candidate(body="x = x.clone()"),
        candidate(body="x = x.transpose(0, 1)"),
    ),
    (
        "launcher-arithmetic",
        candidate(body="m = x.max()"),
        candidate(body="m = torch.finfo(x.dtype).max"),
    ),
    ("launcher-arithmetic", candidate(body="f = x.exp"), candidate(body="f = x.stride")),
    (
        "launcher-arithmetic",
        candidate(body="n = x.sum(-1).item()"),
        candidate(body="n = x.numel()"),
    ),
    (
        "launcher-arithmetic",
        candidate(body="x = x.type(torch.float16)"),
        candidate(body='c = x.device.type == "cuda"'),
    ),
    (
        "launcher-arithmetic",
        candidate(tail="def _prep(x):\n    return x.sigmoid()"),
        candidate(tail="def _prep(x):\n    return x.unsqueeze(0)"),
    ),
    (
        "kernel-torch",
        candidate(kernel=KERNEL.replace("num = tl.exp(", "num = torch.exp(")),
        candidate(kernel=KERNEL.replace("num = tl.exp(", "num = tl.math.exp(")),
    ),
    ("top-level-code", candidate(tail='print("loaded")'), candidate(tail='"""Trailing notes."""')),
    ("top-level-code", candidate(tail='if __name__ == "__main__":\n    pass'), None),
    (
        "top-level-code",
        candidate("for i in range(3):\n    pass"),
        candidate("SIZES = [i for i in range(3)]"),
    ),
    ("top-level-code", candidate("BUF = torch.empty(1024)"), candidate("CAP = 1024 * 4")),
    ("top-level-code", candidate("f = lambda x: x"), candidate("BLOCK = tl.constexpr(128)")),
    (
        "top-level-code",
        candidate("CONFIGS = [triton.Config({'BLOCK': b}) for b in sizes()]"),
        candidate("CONFIGS = [triton.Config({'BLOCK': b}, num_warps=4) for b in (64, 128)]"),
    ),
    ("no-entry", candidate().replace("def softmax(", "def softmax_impl("), None),
    ("no-entry", candidate(tail="softmax = _impl").replace("def softmax(", "def _impl("), None),
    (
        "no-kernel-launch",
        candidate().replace(LAUNCH, "    _softmax_kernel(y, x, n_cols, BLOCK=16)\n"),
        candidate(tail=HELPER).replace(LAUNCH, "    _launch(y, x, n_cols)\n"),
    ),
    (
        "no-kernel-launch",
        candidate(tail=HELPER).replace(LAUNCH, ""),
        candidate(tail=HELPER).replace(LAUNCH, "    launch = _launch\n    launch(y, x, n_cols)\n"),
    ),
    (
        "no-kernel-launch",
        candidate(kernel=KERNEL.replace("@triton.jit\n", "")),
        candidate("from triton import jit", kernel=KERNEL.replace("@triton.jit\n", "@jit\n")),
    ),
    (
        "no-kernel-launch",
        candidate(kernel=KERNEL.replace("@triton.jit\n", "@triton.autotune([], key=[])\n")),
        candidate(kernel=KERNEL.replace("@triton.jit\n", AUTOTUNED)),
    ),
]


@pytest.mark.parametrize(("rule", "bad", "good"), CASES)
def test_rule_rejects_the_cheat_and_accepts_its_twin(rule: str, bad: str, good: str | None) -> None:
    assert rule in rules(bad)
    if good is not None:
        assert check_source(good, "softmax") == []


def test_every_rule_has_a_case() -> None:
    assert {rule for rule, _, _ in CASES} == set(RULES)


@pytest.mark.parametrize("op", ["softmax", "rms_norm", "silu_and_mul"])
def test_seeds_pass(op: str) -> None:
    assert check_source((ROOT / "seeds" / f"{op}.py").read_text(), op) == []


def test_violation_says_where_what_and_why() -> None:
    source = candidate(body="x = x.exp()\nimport os")
    line = source.splitlines().index("    x = x.exp()") + 1
    found = check_source(source, "softmax")
    assert [(v.rule, v.line) for v in found] == [
        ("launcher-arithmetic", line),
        ("forbidden-import", line + 1),
    ]
    first = found[0]
    assert isinstance(first, Violation)
    assert first.reason == f"`.exp` outside a kernel: {RULES['launcher-arithmetic']}"
    assert "\n" not in first.reason


def test_syntax_error_propagates() -> None:
    with pytest.raises(SyntaxError):
        check_source("def softmax(x:\n", "softmax")
