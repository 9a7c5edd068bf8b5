"""The interpreter made to compute what the H200 computes, where Triton 3.6's does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: TRITON_INTERPRET is read when triton is imported, and the patch
# is the sandboxed runner's, not this process's.
_PROBE = """
import torch, triton, triton.language as tl
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(x_ptr, y_ptr, out_ptr, PROPAGATE: tl.constexpr):
    i = tl.arange(0, 4)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    if PROPAGATE:
        hi = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
        lo = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    else:
        hi = tl.maximum(x, y)
        lo = tl.minimum(x, y)
    tl.store(out_ptr + i, hi)
    tl.store(out_ptr + 4 + i, lo)

nan = float("nan")
x = torch.tensor([nan, 1.0, nan, -float("inf")])
y = torch.tensor([2.0, nan, nan, 3.0])
for propagate in (False, True):
    out = torch.empty(8)
    k[(1,)](x, y, out, PROPAGATE=propagate)
    print(propagate, out.tolist())
"""


def _probe(install: bool) -> dict[str, str]:
    code = _PROBE.format(install="interpreter.install()" if install else "")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    return dict(line.split(" ", 1) for line in out.strip().splitlines())


def test_max_and_min_drop_nan_as_the_gpu_does() -> None:
    seen = _probe(install=True)
    # PTX max.f32/min.f32: NaN only when both are NaN.
    assert seen["False"] == "[2.0, 1.0, nan, 3.0, 2.0, 1.0, nan, -inf]"
    # PropagateNan.ALL keeps NaN, on the GPU and here.
    assert seen["True"] == "[nan, nan, nan, 3.0, nan, nan, nan, -inf]"


def test_the_interpreter_alone_differs() -> None:
    # What the patch is for: without it, the CPU keeps the NaN the GPU drops.
    assert _probe(install=False)["False"] == "[nan, nan, nan, 3.0, nan, nan, nan, -inf]"


_FP8_PROBE = """
import torch, triton, triton.language as tl
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(x_ptr, q_ptr, back_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    q = tl.load(x_ptr + i, mask=i < n).to(tl.float8e4nv)
    tl.store(q_ptr + i, q, mask=i < n)
    tl.store(back_ptr + i, q.to(tl.float32), mask=i < n)

g = torch.Generator().manual_seed(0)
# Values that round up to a power of two, ties, the saturating top, NaN, zeros, a subnormal.
x = torch.cat([torch.tensor([31.6, 124.4, 17.0, 18.0, 500.0, -1e6, float("nan"), 0.0, -0.0,
               3e-3]), torch.randn(1000, generator=g) * 100])
q = torch.empty(x.numel(), dtype=torch.float8_e4m3fn)
back = torch.empty(x.numel())
k[(1,)](x, q, back, x.numel(), BLOCK=2048)
want = x.clamp(-448, 448).to(torch.float8_e4m3fn).float()
same = lambda a: bool(((a == want) | (a.isnan() & want.isnan())).all())
print("q", same(q.float()), "back", same(back), q[:10].float().tolist())
"""


def _fp8_probe(install: bool) -> str:
    code = _FP8_PROBE.format(install="interpreter.install()" if install else "")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_fp8_casts_round_and_saturate_as_the_gpu_does() -> None:
    # cvt.rn.satfinite: nearest even (17 -> 16, 18 -> 18), saturated at 448, NaN kept.
    assert _fp8_probe(install=True) == (
        "q True back True [32.0, 128.0, 16.0, 18.0, 448.0, -448.0, nan, 0.0, -0.0, 0.00390625]"
    )


def test_the_interpreter_alone_rounds_fp8_wrongly() -> None:
    assert _fp8_probe(install=False).startswith("q False")


_BF16_PROBE = """
import torch, triton, triton.language as tl
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(a_ptr, b_ptr, c_ptr, h_ptr, N: tl.constexpr):
    i = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + i).to(tl.bfloat16)
    tl.store(h_ptr + i, a.to(tl.float32))
    tl.store(c_ptr + i, tl.dot(a, tl.load(b_ptr + i).to(tl.bfloat16)))

g = torch.Generator().manual_seed(0)
a, b = torch.randn(32, 32, generator=g), torch.randn(32, 32, generator=g)
c, h = torch.empty(32, 32), torch.empty(32, 32)
k[(1,)](a, b, c, h, N=32)
want = a.bfloat16().float() @ b.bfloat16().float()
print(bool((h == a.bfloat16().float()).all()), float((c - want).abs().max()) < 1e-4)
"""


def test_bf16_rounds_to_nearest_even_and_dots_multiply_values() -> None:
    """cvt.rn.bf16.f32 and a tensor-core dot of bf16 values (exact products, fp32 sums): what
    kernels that split fp32 into bf16 pieces rely on. Without the patch both are wrong."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    for install, want in (("interpreter.install()", "True True"), ("", "False False")):
        out = subprocess.run(
            [sys.executable, "-c", _BF16_PROBE.format(install=install)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert out == want, (install, out)


# ---- fp32 tl.dot: TF32 on the tensor cores unless input_precision="ieee" ----------------------

_TF32_PROBE = """
import numpy as np, torch, triton, triton.language as tl
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(a_ptr, b_ptr, c_ptr, N: tl.constexpr, P: tl.constexpr):
    i = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + i)
    b = tl.load(b_ptr + i)
    if P == 0:
        c = tl.dot(a, b)
    elif P == 1:
        c = tl.dot(a, b, input_precision="ieee")
    elif P == 2:
        c = tl.dot(a, b, allow_tf32=False)
    else:
        c = tl.dot(a, b, input_precision="tf32x3")
    tl.store(c_ptr + i, c)

g = torch.Generator().manual_seed(0)
a, b = torch.randn(32, 32, generator=g), torch.randn(32, 32, generator=g)
exact = a.double() @ b.double()
tf32 = torch.from_numpy(interpreter._tf32(a.numpy())).double() @ torch.from_numpy(
    interpreter._tf32(b.numpy())).double()
for p, name in enumerate(["default", "ieee", "no_tf32", "tf32x3"]):
    c = torch.empty(32, 32)
    k[(1,)](a, b, c, N=32, P=p)
    print(name, f"{{float((c.double() - exact).abs().max()):.1e}}",
          f"{{float((c.double() - tf32).abs().max()):.1e}}")
"""


def _tf32_probe(install: bool) -> dict[str, tuple[float, float]]:
    code = _TF32_PROBE.format(install="interpreter.install()" if install else "")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    rows = (line.split() for line in out.strip().splitlines())
    return {name: (float(exact), float(tf32)) for name, exact, tf32 in rows}


def test_fp32_dot_is_tf32_unless_ieee() -> None:
    """Unit normals, K = 32: TF32 operands err by ~1e-2 on a score, fp32 by ~3e-6."""
    seen = _tf32_probe(install=True)
    to_exact, to_tf32 = seen["default"]
    assert to_exact > 3e-3 and to_tf32 < 1e-5, seen  # the TF32 operands' product, in fp32
    assert seen["ieee"][0] < 1e-5 and seen["no_tf32"][0] < 1e-5, seen
    assert seen["tf32x3"][0] < 2e-5, seen  # the split keeps near-fp32 accuracy


def test_the_interpreter_alone_dots_fp32_exactly() -> None:
    # What the patch is for: without it the default precision is exact fp32 on CPU.
    assert _tf32_probe(install=False)["default"][0] < 1e-5


def test_tf32_rounding_modes() -> None:
    import numpy as np

    from kernelgen.verify.interpreter import _tf32, _tf32_rna

    ulp = 2.0**-10  # of TF32 at 1.0
    x = np.array([1 + 0.75 * ulp, 1 + 0.5 * ulp, -(1 + 0.5 * ulp), 1 + 1.5 * ulp], np.float32)
    assert _tf32(x).tolist() == [1.0, 1.0, -1.0, 1 + ulp]  # toward zero
    assert _tf32_rna(x).tolist() == [1 + ulp, 1 + ulp, -(1 + ulp), 1 + 2 * ulp]  # ties away
    special = np.array([np.nan, np.inf, -np.inf, 0.0], np.float32)
    for f in (_tf32, _tf32_rna):
        got = f(special)
        assert np.isnan(got[0]) and got[1:].tolist() == [np.inf, -np.inf, 0.0]


# ---- whole candidates: the judge's verdict on CPU ---------------------------------------------

CANDIDATES = Path(__file__).parent / "candidates" / "interpreter"


def _verdict(op: str, name: str):  # noqa: ANN202
    from kernelgen.verify import verify_candidate

    return verify_candidate(op, CANDIDATES / name, device="cpu", seed=11)


def test_tf32_router_gemm_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    v = _verdict("router_gemm", "router_gemm_tf32.py")
    assert not v.accepted and v.category == "incorrect", (v.category, v.reason)


def test_ieee_router_gemm_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    v = _verdict("router_gemm", "router_gemm_ieee.py")
    assert v.accepted and v.cases_run > 0, (v.category, v.reason)


@pytest.mark.slow
def test_tf32x3_router_gemm_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    v = _verdict("router_gemm", "router_gemm_tf32x3.py")
    assert v.accepted and v.cases_run > 0, (v.category, v.reason)
