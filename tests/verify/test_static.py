"""Static rules: each rule rejects a small realistic cheat and accepts its honest twin."""

from __future__ import annotations

import importlib
import textwrap
import types
from pathlib import Path

import pytest

from kernelgen.verify import allowlist as allow
from kernelgen.verify.static import RULES, Violation, check_source

ROOT = Path(__file__).resolve().parents[2]
# Every operator's seed (an imported KernelBench problem has none: torch eager is its baseline).
OPS = sorted(
    p.stem for p in (ROOT / "references").glob("*.py") if (ROOT / "seeds" / p.name).is_file()
)

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


# A config lookup as the seeds write it: the one shape of function a cache may wrap.
CONFIG_LOOKUP = """
DEFAULT_CONFIG = {"num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]
"""
LOOKUP_IMPORTS = "import functools\nimport math"
REMEMBER = 'def _remember(d, y):\n    d["last"] = y\n'
# A kernel with a constexpr parameter X; USE is replaced by an expression on it or on x.
CONST_KERNEL = """
@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, X: tl.constexpr = 0, BLOCK: tl.constexpr = 16):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
    s = USE
    tl.store(y_ptr + cols, x, mask=cols < n_cols)
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
        candidate("_SEEN = {}", body="put = _SEEN.setdefault"),
        candidate("_SEEN = {}", body="get = _SEEN.get"),
    ),
    (
        "module-state",
        candidate("_SEEN = {}", body='_SEEN["a"].append(y)'),
        candidate("_SEEN = {}", body="seen = [y]\nseen.append(x)"),
    ),
    # Module state under another name: an alias, an element, what a function or a cache hands
    # out, a parameter it was passed to. Changing a copy is fine.
    (
        "module-state",
        candidate("_STATE = dict(calls=0)", body='state = _STATE\nstate["calls"] += 1'),
        candidate("_STATE = dict(calls=0)", body='state = dict(_STATE)\nstate["calls"] += 1'),
    ),
    (
        "module-state",
        candidate("_STATE = {'last': {}}", body='seen = _STATE["last"]\nseen[n_rows] = y'),
        candidate("_STATE = {'last': {}}", body='seen = {**_STATE["last"]}\nseen[n_rows] = y'),
    ),
    (
        "module-state",
        candidate("_BUF = {}", tail="def _get():\n    return _BUF\n", body='_get()["k"] = y'),
        candidate(tail="def _dims(x):\n    return list(x.shape)\n", body="d = _dims(x)\nd[-1] = 1"),
    ),
    (
        "module-state",
        candidate(
            "import functools",
            tail="@functools.cache\ndef _slot(n: int):\n    r = [None]\n    return r\n",
            body="s = _slot(n_rows)\ns[0] = y",
        ),
        None,
    ),
    (
        "module-state",
        candidate(
            LOOKUP_IMPORTS, tail=CONFIG_LOOKUP, body='cfg = _config(n_rows)\ncfg["num_warps"] = 8'
        ),
        candidate(
            LOOKUP_IMPORTS,
            tail=CONFIG_LOOKUP,
            body='cfg = dict(_config(n_rows))\ncfg["num_warps"] = 8',
        ),
    ),
    (
        "module-state",
        candidate("_STATE = {}", tail=REMEMBER, body="_remember(_STATE, y)"),
        candidate("_STATE = {}", tail=REMEMBER, body="_remember(dict(_STATE), y)"),
    ),
    (
        "module-state",
        candidate("_STATE = {'a': []}", body="for v in _STATE.values():\n    v.append(y)"),
        candidate("_STATE = {'a': []}", body="for v in _STATE.values():\n    n = len(v)"),
    ),
    ("module-state", candidate("_STATE = {}", body='f = lambda: _STATE\nf()["k"] = 1'), None),
    ("module-state", candidate("_P = ({}, {})", body='a, b = _P\na["k"] = y'), None),
    (
        "module-state",
        candidate("_L = []", body="s = _L\ns += [y]"),
        candidate("_C = {'n': 1}", body="n = _C['n']\nn += 1"),
    ),
    (
        "module-state",
        candidate(
            "import functools\n_STATE = {}",
            body="functools.reduce(lambda a, d: d.update(k=y), [_STATE], 0)",
        ),
        None,
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
    # A host TMA descriptor is data the launcher builds, not a way out; the rest of
    # triton.tools (disassemblers, the compile driver's helpers) is not a candidate's.
    (
        "forbidden-import",
        candidate("from triton.tools.disasm import get_sass"),
        candidate(
            "from triton.tools.tensor_descriptor import TensorDescriptor",
            body="d = TensorDescriptor.from_tensor(x, [1, 16])",
        ),
    ),
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
        candidate(body="f = isinstance(x, torch.Tensor)"),
    ),
    (
        "forbidden-builtin",
        candidate(body='f = hasattr(x, "exp")'),
        candidate(body="f = len(x.shape)"),
    ),
    ("forbidden-builtin", candidate(body='T = type("T", (), {})'), None),
    # type(type(x)) is the metaclass: three arguments away from a tensor subclass.
    ("forbidden-builtin", candidate(body="t = type(type(x))"), candidate(body="t = x.dtype")),
    # getattr aliased, passed as a value, or folded over a chain of names.
    ("forbidden-builtin", candidate(body="g = getattr"), candidate(body="g = len")),
    (
        "forbidden-builtin",
        candidate(body='f = list(map(getattr, [x], ["exp"]))'),
        candidate(body="f = list(map(int, x.shape))"),
    ),
    (
        "forbidden-builtin",
        candidate("import functools", body='f = functools.reduce(getattr, ["exp"], x)'),
        candidate(
            "import functools\nimport operator",
            body="n = functools.reduce(operator.mul, x.shape, 1)",
        ),
    ),
    # A parameter named like a builtin is that parameter; elsewhere the name is the builtin.
    (
        "forbidden-builtin",
        candidate(
            tail='def _a(getattr):\n    return 1\n\n\ndef _b(x):\n    return getattr(x, "exp")\n'
        ),
        candidate(tail="def _a(input):\n    return input\n"),
    ),
    ("forbidden-builtin", candidate(body="open = len"), candidate(body="size = len")),
    ("forbidden-builtin", candidate(body="print(x.shape)"), candidate(body="s = str(x.shape)")),
    (
        "forbidden-builtin",
        candidate(body="it = iter(x.shape)\nn = next(it)"),
        candidate(body="n = x.shape[0]"),
    ),
    ("forbidden-builtin", candidate(body="d = vars(x)"), None),
    (
        "forbidden-builtin",
        candidate(kernel=KERNEL.replace("row = ", "print(x_ptr)\n    row = ")),
        None,
    ),
    ("forbidden-builtin", candidate(body='f = open("/proc/self/mem")'), None),
    (
        "forbidden-builtin",
        candidate("import operator", body='f = operator.methodcaller("exp")'),
        candidate("import operator", body="f = operator.mul(n_rows, n_cols)"),
    ),
    ("dunder", candidate(body="cls = x.__class__"), candidate(body="name = softmax.__name__")),
    ("dunder", candidate(body="b = __builtins__"), candidate(body="b = __name__")),
    ("dunder", candidate(body="g = softmax.__globals__"), candidate(body="d = softmax.__doc__")),
    (
        "dunder",
        candidate(body="s = ().__class__.__base__.__subclasses__()"),
        candidate(body="s = (1, 2).index(2)"),
    ),
    ("dunder", candidate(body="s = torch.__dict__.get"), None),
    # From a generator (or a traceback, a coroutine, a closure cell) the stack is one step away.
    (
        "frame",
        candidate(body="g = (i for i in range(3))\nf = g.gi_frame.f_back"),
        candidate(body="g = sum(i for i in range(3))"),
    ),
    (
        "frame",
        candidate(tail="def _peek(f):\n    return f.f_globals\n"),
        candidate(tail="def _peek(f):\n    return f.shape\n"),
    ),
    (
        "frame",
        candidate("import typing", body="f = typing.sys._getframe(1)"),
        candidate("import typing", body="n: typing.Optional[int] = None"),
    ),
    ("monkeypatch", candidate(body="torch.softmax = softmax"), candidate(body="sm = softmax")),
    ("monkeypatch", candidate("tl.exp = tl.exp2"), candidate("EXP = tl.exp2")),
    ("monkeypatch", candidate(body="x.data = y"), candidate(body="x = y")),
    ("monkeypatch", candidate(body="del torch.cuda"), candidate(body="del n_cols")),
    ("monkeypatch", candidate(body="_softmax_kernel.run = None"), None),
    ("monkeypatch", candidate(body="tl.core.__all__[0] = None"), None),
    ("monkeypatch", candidate(body='_softmax_kernel.values["EVEN"] = None'), None),
    ("import-alias", candidate(body="t = torch\ny = t.exp(x)"), candidate(body="t = x\ny = t")),
    ("import-alias", candidate(body="tl = x\ny = tl.softmax(-1)"), candidate(body="z = x")),
    ("import-alias", candidate(tail="def helper(torch):\n    return torch"), None),
    ("import-alias", candidate("from math import exp as tl"), candidate("from math import exp")),
    (
        "import-alias",
        candidate("from math import ceil as open"),
        candidate("from math import ceil"),
    ),
    ("import-alias", candidate(body="m = tl.math"), candidate(body="m = tl.math.exp")),
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
        candidate(body="t = x.device.type"),
    ),
    (
        "launcher-arithmetic",
        candidate(tail="def _prep(x):\n    return x.sigmoid()"),
        candidate(tail="def _prep(x):\n    return x.unsqueeze(0)"),
    ),
    # One program on both devices: a launcher that asks where it runs can take a path on the GPU
    # that the CPU verdict never sees. A device may only name where to allocate; the SM count and
    # the architecture (answered with the H200's figures under the interpreter) may steer.
    (
        "device-branch",
        candidate(body="if not x.is_cuda:\n    n_rows = n_rows // 2"),
        candidate(body="y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)"),
    ),
    (
        "device-branch",
        candidate(body='if x.device.type == "cuda":\n    n_cols = n_cols // 2'),
        candidate(body="dev = x.device\ny = torch.zeros((n_rows, n_cols), device=dev)"),
    ),
    (
        "device-branch",
        candidate(body="if torch.cuda.is_available():\n    n_rows = 1"),
        candidate(body="y = x.new_empty((n_rows, n_cols))"),
    ),
    (
        "device-branch",
        candidate(body="gpu = x.is_cuda\nn_rows = n_rows if gpu else 1"),
        candidate(body="z = (torch.zeros if n_rows > 4 else torch.empty)(8, device=x.device)"),
    ),
    (
        "device-branch",
        candidate(body='n_rows = {"cuda": 1, "cpu": n_rows}[x.device.type]'),
        candidate(
            body="major, minor = torch.cuda.get_device_capability(x.device)\n"
            "n_cols = n_cols if major >= 9 else n_cols"
        ),
    ),
    (
        "device-branch",
        candidate(
            body="n_rows = max(1, n_rows // torch.cuda.device_count())",
        ),
        candidate(
            body="sms = torch.cuda.get_device_properties(x.device).multi_processor_count\n"
            "n_rows = min(n_rows, 4 * sms)"
        ),
    ),
    (
        "device-branch",
        candidate(body='if "H200" in torch.cuda.get_device_properties(x.device).name:\n    pass'),
        candidate(body="with torch.cuda.device(x.device):\n    pass"),
    ),
    (
        "device-branch",
        candidate(
            body="n_rows = _rows(n_rows, x.device)",
            tail='def _rows(n, dev):\n    return 1 if dev.type == "cuda" else n\n',
        ),
        candidate(
            body="y = _alloc((n_rows, n_cols), x.device)",
            tail="def _alloc(shape, dev):\n    return torch.empty(shape, device=dev)\n",
        ),
    ),
    (
        "device-branch",
        candidate(
            kernel=CONST_KERNEL.replace("USE", "X"),
            body="_softmax_kernel[(n_rows,)](y, x, n_cols, X=x.is_cuda)",
        ),
        candidate(
            kernel=CONST_KERNEL.replace("USE", "X"),
            body="_softmax_kernel[(n_rows,)](y, x, n_cols, X=x.dtype == torch.float32)",
        ),
    ),
    (
        "device-branch",
        candidate(
            kernel=KERNEL.replace(
                "@triton.jit",
                '@triton.heuristics({"G": lambda a: a["x_ptr"].is_cuda})\n@triton.jit',
            )
        ),
        candidate(
            kernel=KERNEL.replace(
                "@triton.jit",
                '@triton.heuristics({"G": lambda a: a["n_cols"] % 16 == 0})\n@triton.jit',
            )
        ),
    ),
    (
        "device-branch",
        candidate(body='where = f"{x.device}"\nn_rows = 1 if where == "cpu" else n_rows'),
        candidate(
            body='if x.dtype == torch.float64:\n    raise TypeError(f"{x.dtype} on {x.device}")'
        ),
    ),
    ("device-branch", candidate(body='f = x.type\nif "cuda" in f():\n    n_rows = 1'), None),
    ("device-branch", candidate(body="box = {}\nbox['gpu'] = x.is_cuda"), None),
    # Modules reached through other modules' attributes: a listed root is not enough.
    (
        "unlisted-name",
        candidate(body='e = tl.core.builtins.getattr(x, "exp")'),
        candidate(body="dt = tl.float16"),
    ),
    ("unlisted-name", candidate(body="c = tl.core"), candidate(body="c = tl.constexpr")),
    ("unlisted-name", candidate(body="w = tl.math.wraps"), candidate(body="w = tl.math.rsqrt")),
    (
        "unlisted-name",
        candidate(body='triton.tools.disasm.subprocess.run(["id"])'),
        candidate(body="n = triton.cdiv(n_rows, 4)"),
    ),
    ("escape-hatch", candidate(body='triton.runtime.driver.os.system("id")'), None),
    ("launcher-torch", candidate(body='torch.os.system("id")'), None),
    (
        "unlisted-name",
        candidate("import itertools", body="c = itertools.count()"),
        candidate("import itertools", body="c = list(itertools.product((1, 2), (3,)))"),
    ),
    ("unlisted-name", candidate(body="n = n_colz"), candidate(body="n = n_cols")),
    (
        "unlisted-name",
        candidate(kernel=KERNEL.replace("row = ", 'tl.device_print("x", x_ptr)\n    row = ')),
        candidate(kernel=KERNEL.replace("row = ", "tl.static_assert(BLOCK > 0)\n    row = ")),
    ),
    ("unlisted-name", candidate(body="a = tl.inline_asm_elementwise"), None),
    (
        "forbidden-import",
        candidate("from typing import sys"),
        candidate("from typing import Optional"),
    ),
    (
        "forbidden-import",
        candidate("from triton.language import core"),
        candidate("from triton.language import constexpr"),
    ),
    ("forbidden-import", candidate("import triton.language.core"), None),
    (
        "forbidden-import",
        candidate("from operator import setitem"),
        candidate("from operator import mul"),
    ),
    (
        "forbidden-import",
        candidate("from functools import partial"),
        candidate("from functools import lru_cache"),
    ),
    # A default is one object shared by every call: a counter, a cache.
    (
        "default",
        candidate("import itertools", tail="def _next(x, _n=itertools.count()):\n    return _n\n"),
        candidate("import itertools", tail="def _next(x, _n=3):\n    return _n\n"),
    ),
    (
        "default",
        candidate(tail="def _helper(x, cache={}):\n    return cache\n"),
        candidate(tail="def _helper(x, cache=None):\n    return cache\n"),
    ),
    (
        "default",
        candidate(tail="def _h(x, dt=torch.float32):\n    return dt\n"),
        candidate(tail="def _h(x, eps=-1e-6, dims=(1, 2), *, name='y'):\n    return eps\n"),
    ),
    ("default", candidate(body="f = lambda a, c=[]: c"), candidate(body="f = lambda a, c=(): c")),
    (
        "generator",
        candidate(
            tail="def _calls():\n    n = 0\n    while True:\n        n += 1\n        yield n\n"
        ),
        candidate(tail="def _calls():\n    return sum(n for n in range(3))\n"),
    ),
    ("generator", candidate(tail="async def _h(x):\n    return x\n"), None),
    (
        "decorator",
        candidate(tail="def _deco(f):\n    return f\n\n\n@_deco\ndef _h(x):\n    return x\n"),
        candidate(tail="@triton.jit\ndef _h(x):\n    return x\n"),
    ),
    (
        "decorator",
        candidate("import functools", tail="@functools.wraps(softmax)\ndef _h(x):\n    return x\n"),
        candidate(LOOKUP_IMPORTS, tail=CONFIG_LOOKUP),
    ),
    (
        "decorator",
        candidate(kernel=KERNEL.replace("@triton.jit\n", "@triton.jit\n@_deco\n")),
        candidate(kernel=KERNEL.replace("@triton.jit\n", AUTOTUNED)),
    ),
    # Applied by a call, jit makes a kernel of code read as launcher code.
    ("decorator", candidate(body="k = triton.jit(softmax)"), None),
    (
        "decorator",
        candidate("import functools", body="f = functools.lru_cache(maxsize=None)(softmax)"),
        None,
    ),
    # A cached launcher returns the same output object on every call.
    (
        "cache",
        candidate("import functools").replace("def softmax(", "@functools.lru_cache\ndef softmax("),
        candidate(LOOKUP_IMPORTS, tail=CONFIG_LOOKUP),
    ),
    (
        "cache",
        candidate(
            "import functools",
            tail="@functools.lru_cache(maxsize=8)\ndef _out(n: int):\n    return torch.empty(n)\n",
        ),
        None,
    ),
    (
        "cache",
        candidate("import functools", tail="@functools.cache\ndef _slot(x):\n    return x\n"),
        candidate("import functools", tail="@functools.cache\ndef _slot(n: int):\n    return n\n"),
    ),
    (
        "cache",
        candidate(
            "import functools", tail="@functools.cache\ndef _slot(n: int):\n    return [None]\n"
        ),
        candidate(
            "import functools", tail="@functools.cache\ndef _slot(n: int):\n    return (n,)\n"
        ),
    ),
    (
        "cache",
        candidate(
            "import functools",
            tail=HELPER + "\n\n@functools.cache\ndef _go(n: int):\n    return _launch\n",
        ),
        None,
    ),
    (
        "attribute",
        candidate(body="src = _softmax_kernel.fn"),
        candidate(body="k = _softmax_kernel"),
    ),
    (
        "attribute",
        candidate(body='s = "{0.fn}".format(_softmax_kernel)'),
        candidate(body='s = "x".join(["a", "b"])'),
    ),
    (
        "launcher-arithmetic",
        candidate(body="n = x.untyped_storage"),
        candidate(body="n = torch.cuda.get_device_properties(x.device).multi_processor_count"),
    ),
    ("attribute", candidate(body="x = x._base"), None),
    # Inside a kernel: tl names, the kernel's own names, kernels and constants; nothing else.
    (
        "kernel-name",
        candidate(
            kernel=KERNEL.replace("tl.program_id(0)", "_pid()"), tail="def _pid():\n    return 0\n"
        ),
        candidate(
            kernel=KERNEL.replace("tl.program_id(0)", "_pid()"),
            tail="@triton.jit\ndef _pid():\n    return tl.program_id(0)\n",
        ),
    ),
    (
        "kernel-name",
        candidate(
            kernel=KERNEL.replace("tl.arange(0, BLOCK)", "tl.arange(0, triton.cdiv(BLOCK, 1))")
        ),
        candidate(kernel=KERNEL.replace("tl.arange(0, BLOCK)", "tl.arange(0, tl.cdiv(BLOCK, 1))")),
    ),
    (
        "kernel-name",
        candidate(kernel=KERNEL.replace("num = tl.exp(x", "num = abs(x")),
        candidate(kernel=KERNEL.replace("num = tl.exp(x", "num = tl.abs(x")),
    ),
    ("kernel-name", candidate(kernel=KERNEL.replace("row = ", "f = softmax\n    row = ")), None),
    (
        "kernel-name",
        candidate("H = softmax", kernel=KERNEL.replace("row = ", "H(x_ptr)\n    row = ")),
        candidate("H = 3", kernel=KERNEL.replace("row = ", "h = H + 1\n    row = ")),
    ),
    # Under the interpreter a constexpr argument can be the real torch tensor.
    (
        "kernel-attribute",
        candidate(kernel=CONST_KERNEL.replace("USE", "X.sum()")),
        candidate(kernel=CONST_KERNEL.replace("USE", "tl.sum(x, axis=0)")),
    ),
    (
        "kernel-attribute",
        candidate(kernel=CONST_KERNEL.replace("USE", "X.copy_(x)")),
        candidate(kernel=CONST_KERNEL.replace("USE", "x.to(tl.float32).reshape([BLOCK])")),
    ),
    (
        "kernel-attribute",
        candidate(kernel=CONST_KERNEL.replace("USE", "X.type(x)")),
        candidate(kernel=CONST_KERNEL.replace("USE", "x.dtype.is_fp32() or y_ptr.type.element_ty")),
    ),
    (
        "kernel-attribute",
        candidate(kernel=CONST_KERNEL.replace("s = USE", "X[0] = 1.0")),
        candidate(kernel=CONST_KERNEL.replace("s = USE", "s = x[None, :]")),
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
    # Constants of math's functions are allowed at module level; torch or a file read is not.
    (
        "top-level-code",
        candidate("import math\nSEED = tl.constexpr(math.log2(torch.randn(1).item()))"),
        candidate(
            "import math\nLOG2E = tl.constexpr(math.log2(math.e))\n"
            "INV_SQRT2 = tl.constexpr(1 / math.sqrt(2))"
        ),
    ),
    (
        "top-level-code",
        candidate('import math\nN = math.log2(len(open("/proc/self/environ").read()))'),
        candidate("from math import pi, sqrt\nC = sqrt(2.0 / pi) * 0.5"),
    ),
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


@pytest.mark.parametrize("op", OPS)
def test_seeds_pass(op: str) -> None:
    assert check_source((ROOT / "seeds" / f"{op}.py").read_text(), op) == []


HONEST = sorted((Path(__file__).parent / "candidates").glob("*.py"))


@pytest.mark.parametrize("path", HONEST, ids=[p.stem for p in HONEST])
def test_honest_candidates_pass(path: Path) -> None:
    op = max((op for op in OPS if path.stem.startswith(op)), key=len)
    assert check_source(path.read_text(), op) == []


# What a production-style honest candidate uses: many autotune configs, heuristics, a grid
# lambda, a persistent grid from the SM count, tl.static_range, libdevice, tl.math, a cached
# config lookup, typing, argument checks that raise.
REALISTIC = '''\
"""Softmax: an autotuned blocked kernel for short rows, a persistent online one for long rows."""

from __future__ import annotations

import functools
import math
from typing import Optional

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

TUNE_SPACE = {"num_warps": [4, 8, 16]}
DEFAULT_CONFIG = {"num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}
CONFIGS = [
    triton.Config({"BLOCK": b, "ROWS": r}, num_warps=w, num_stages=s)
    for b in (256, 512, 1024, 2048)
    for r in (1, 2, 4)
    for w in (4, 8)
    for s in (2, 3)
]
LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)


@triton.jit
def _exp(x):
    return tl.math.exp2(x * LOG2E)


@triton.autotune(configs=CONFIGS, key=["n_cols"], restore_value=["y_ptr"])
@triton.heuristics({"EVEN": lambda args: args["n_cols"] % 16 == 0})
@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_rows, n_cols, stride_xm, stride_ym,
    BLOCK: tl.constexpr, ROWS: tl.constexpr, EVEN: tl.constexpr,
):
    for r in tl.static_range(ROWS):
        row = (tl.program_id(0) * ROWS + r).to(tl.int64)
        cols = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK), 16), 16)
        mask = (cols < n_cols) & (row < n_rows)
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        num = _exp(x - tl.max(x, axis=0))
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_persistent_kernel(y_ptr, x_ptr, n_rows, n_cols, stride_xm, stride_ym,
                               BLOCK: tl.constexpr):
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < n_cols, other=-float("inf"))
            m_new = tl.maximum(m, x.to(tl.float32))
            s = s * libdevice.exp(m - m_new) + tl.exp(x.to(tl.float32) - m_new)
            m = m_new
        m_row = tl.max(m, axis=0)
        total = tl.sum(s * tl.exp(m - m_row), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < n_cols, other=0.0)
            y = tl.exp(x.to(tl.float32) - m_row) / total
            tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty),
                     mask=cols < n_cols)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]
    return TUNED[min(TUNED, key=lambda k: sum(abs(math.log2(int(a)) - w)
                                              for a, w in zip(k.split("x"), want)))]


def _sm_count(device: torch.device) -> int:
    # The interpreter answers with the H200's 132: the CPU run launches the H200's grid.
    return torch.cuda.get_device_properties(device).multi_processor_count


def softmax(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise TypeError(f"unsupported dtype {x.dtype}")
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y.view(x.shape)
    if n_cols <= 2048:
        grid = lambda meta: (triton.cdiv(n_rows, meta["ROWS"]),)
        _softmax_kernel[grid](y, x2, n_rows, n_cols, x2.stride(0), y.stride(0))
    else:
        block = min(triton.next_power_of_2(n_cols), 4096)
        grid = (max(1, min(n_rows, 4 * _sm_count(x.device))),)
        _softmax_persistent_kernel[grid](
            y, x2, n_rows, n_cols, x2.stride(0), y.stride(0), BLOCK=block,
            **_config(n_rows, n_cols),
        )
    return y.view(x.shape)
'''


def test_realistic_honest_candidate_passes() -> None:
    assert check_source(REALISTIC, "softmax") == []


def test_listed_triton_names_exist_and_are_not_modules() -> None:
    """The triton lists are written out by hand: each entry must name a real object of the
    installed triton, and none may be a module (a module is a way out to everything it imports)."""
    for path in sorted(p for p in allow.PATHS if p.startswith("triton.")):
        parts = path.split(".")
        # The longest importable prefix, then attributes.
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
                break
            except ImportError:
                continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        assert not isinstance(obj, types.ModuleType), path
    for module in allow.MODULES:
        assert isinstance(importlib.import_module(module), types.ModuleType), module
    assert allow.KERNEL_BUILTINS <= allow.BUILTINS
    assert not allow.BUILTINS & allow.FORBIDDEN_BUILTINS


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


STATIC = Path(__file__).parent / "candidates" / "static"


@pytest.mark.parametrize(
    ("name", "line", "rule"),
    [("softmax_gpu_shortcut.py", "    if not x.is_cuda:", "device-branch"),
     ("softmax_one_program.py", None, None)],
)  # fmt: skip
def test_whole_candidates(name: str, line: str | None, rule: str | None) -> None:
    source = (STATIC / name).read_text()
    found = check_source(source, "softmax")
    if rule is None:
        assert found == []
        return
    assert [(v.rule, v.line) for v in found] == [(rule, source.splitlines().index(line) + 1)]


def test_device_branch_says_which_value_and_why() -> None:
    source = candidate(body="gpu = x.is_cuda\nif gpu:\n    n_rows = 1")
    line = source.splitlines().index("    gpu = x.is_cuda") + 1
    [found] = check_source(source, "softmax")
    assert (found.rule, found.line) == ("device-branch", line + 1)
    assert found.reason.startswith(
        f"`gpu` tested by `if` (it holds `x.is_cuda`, line {line}): the launcher branches on the "
        "device it runs on: the CPU verdict would judge another program"
    )


def test_syntax_error_propagates() -> None:
    with pytest.raises(SyntaxError):
        check_source("def softmax(x:\n", "softmax")
