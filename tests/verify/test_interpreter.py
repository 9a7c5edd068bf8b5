"""The interpreter made to compute what the H200 computes, where Triton 3.6's does not."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: TRITON_INTERPRET is read when triton is imported, and the patch
# is the sandboxed runner's, not this process's.

def _run(code: str, interpret: bool = True) -> str:
    """A probe's standard output. Run from a file, not `-c`: on the GPU, @triton.jit reads its
    kernel's source back, which a `-c` program has none of. A failing probe shows its stderr."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "probe.py")
        path.write_text(code)
        done = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout

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
    out = _run(code)
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
    return _run(code).strip()


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
    for install, want in (("interpreter.install()", "True True"), ("", "False False")):
        out = _run(_BF16_PROBE.format(install=install)).strip()
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
    out = _run(code)
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


# ---- libdevice: computed where the table has it, "not run on CPU" where it does not ----------

_LIBDEVICE_PROBE = """
import math, torch, triton, triton.language as tl
from triton.language.extra import libdevice
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(x_ptr, o_ptr, F: tl.constexpr):
    i = tl.arange(0, 16)
    x = tl.load(x_ptr + i)
    if F == 0:
        y = libdevice.exp(x) + libdevice.tanh(x) * libdevice.erf(x)
    elif F == 1:
        y = libdevice.pow(tl.abs(x), 1.5) + libdevice.rsqrt(tl.abs(x) + 1.0)
    elif F == 2:
        y = libdevice.float2int_rn(x * 4.0).to(tl.float32) + libdevice.isnan(x).to(tl.float32)
    else:
        y = libdevice.j0(x)
    tl.store(o_ptr + i, y)

x = torch.linspace(-3, 3, 16)
want = [x.exp() + x.tanh() * torch.erf(x), x.abs() ** 1.5 + (x.abs() + 1).rsqrt(),
        torch.round(x * 4)]
for f in range(4):
    o = torch.empty(16)
    try:
        k[(1,)](x, o, F=f)
        print(f, float((o.double() - want[f].double()).abs().max()))
    except Exception as e:
        print(f, type(e.__cause__ or e).__name__, e.__cause__ or e)
"""


def _libdevice_probe(install: bool) -> list[str]:
    code = _LIBDEVICE_PROBE.format(install="interpreter.install()" if install else "")
    out = _run(code)
    return out.strip().splitlines()


def test_libdevice_computed_or_named_as_lacking() -> None:
    seen = _libdevice_probe(install=True)
    for line in seen[:3]:
        assert float(line.split()[1]) < 1e-5, seen
    assert seen[3] == "3 Lacking libdevice.j0", seen


def test_the_interpreter_alone_has_libdevice_stubs() -> None:
    # Triton 3.6's stubs return None: the first arithmetic on one fails.
    assert "NoneType" in _libdevice_probe(install=False)[0]


def test_libdevice_table_against_torch() -> None:
    """Values at the edges (specials, rounding ties, saturation, bit patterns) against torch's
    or C's answer."""
    import numpy as np

    from kernelgen.verify.libdevice import TABLE

    def f32(fn, *xs):  # noqa: ANN001, ANN202
        return np.asarray(TABLE[fn](*[np.asarray(x, np.float32) for x in xs])).astype(np.float32)

    x = torch.tensor([-float("inf"), -2.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, float("inf")])
    t = x.numpy()
    same = lambda a, b: np.array_equal(a, np.asarray(b, np.float32), equal_nan=True)  # noqa: E731
    assert same(f32("round", t), [-np.inf, -3, -1, -0.0, 0, 1, 2, 3, np.inf])  # away from zero
    assert same(f32("rint", t), torch.round(x).numpy())  # to even
    assert same(f32("saturatef", np.array([np.nan, -1, 0.25, 7])), [0, 0, 0.25, 1])
    for name, ref in (("exp", torch.exp), ("tanh", torch.tanh), ("erf", torch.erf),
                      ("lgamma", torch.lgamma), ("expm1", torch.expm1)):  # fmt: skip
        v = torch.randn(200, generator=torch.Generator().manual_seed(1)) * 3
        assert np.allclose(f32(name, v.numpy()), ref(v.double()).numpy(), rtol=3e-7), name
    p = torch.rand(200, generator=torch.Generator().manual_seed(2)) * 1.98 - 0.99
    assert np.allclose(f32("erfinv", p.numpy()), torch.erfinv(p.double()).numpy(), rtol=1e-6)
    # fast_expf: ex2.approx of x * log2(e) rounded to fp32, so off by |x| * 2^-24 relative.
    v = np.float32([0.0, 1.0, 10.0, -80.0])
    assert np.allclose(f32("fast_expf", v), np.exp(v.astype(np.float64)), rtol=80 * 2.0**-23)
    assert f32("fast_expf", np.float32([-100.0]))[0] == 0.0  # the subnormal result flushed
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    assert TABLE["float2int_rn"](np.float32([2.5, 3.5, 1e10, -1e10, np.nan])).tolist() == [
        2, 4, 2**31 - 1, -(2**31), 0]  # fmt: skip
    assert TABLE["clz"](i32(0, 1, -1, 256)).tolist() == [32, 31, 0, 23]
    assert TABLE["popc"](i32(0, 7, -1)).tolist() == [0, 3, 32]
    assert TABLE["ffs"](i32(0, 1, 8, -(2**31))).tolist() == [0, 1, 4, 32]
    assert TABLE["brev"](i32(1, 0)).tolist() == [-(2**31), 0]
    assert TABLE["mulhi"](i32(2**30, -(2**30)), i32(8, 8)).tolist() == [2, -2]
    assert TABLE["byte_perm"](i32(0x33221100), i32(0x77665544), i32(0x7531)).tolist() == [
        0x77553311]  # fmt: skip
    assert TABLE["double2float_rz"](np.float64([1 + 2.0**-30, -(1 + 2.0**-30)])).tolist() == [
        1.0, -1.0]  # fmt: skip
    assert TABLE["double2float_ru"](np.float64([1 + 2.0**-30])).tolist() == [1 + 2.0**-23]


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


@pytest.mark.slow  # ~30 s: the other libdevice verdicts below stop early or run nothing
def test_libdevice_silu_and_mul_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    v = _verdict("silu_and_mul", "silu_and_mul_libdevice.py")
    assert v.accepted and v.cases_run > 0, (v.category, v.reason)


def test_libdevice_used_wrongly_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    v = _verdict("silu_and_mul", "silu_and_mul_libdevice_exp2.py")
    assert not v.accepted and v.category == "incorrect", (v.category, v.reason)


def test_libdevice_the_interpreter_lacks_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    v = _verdict("silu_and_mul", "silu_and_mul_libdevice_div_rz.py")
    assert v.accepted and v.outcome == "accepted-partial", (v.category, v.reason)
    notes = {c.note for c in v.cases if c.status == "not_run"}
    assert "not run on CPU: the interpreter lacks libdevice.div_rz" in notes
    assert all(c.status == "not_run" for c in v.cases)


def test_a_lacking_claim_is_checked(tmp_path: Path) -> None:
    """The runner's word is the candidate's process's: the judge believes "the interpreter lacks
    libdevice.X" only on CPU, for an X the table lacks and the source names."""
    from types import SimpleNamespace

    from kernelgen.verify.protocol import Failed
    from kernelgen.verify.verdict import Judging

    src = tmp_path / "c.py"
    src.write_text("from triton.language.extra import libdevice\ny = libdevice.j0\n")

    def claim(name: str, device: str = "cpu") -> str | None:
        judging = SimpleNamespace(device=device, path=src)
        return Judging.lacking(judging, Failed(type="InterpreterLacks", message=name))  # type: ignore[arg-type]

    assert claim("libdevice.j0") == "not run on CPU: the interpreter lacks libdevice.j0"
    assert claim("libdevice.j0", device="cuda") is None
    assert claim("libdevice.y1") is None  # not in the source
    src.write_text(src.read_text() + "z = libdevice.exp\n")
    assert claim("libdevice.exp") is None  # the interpreter computes it


# ---- on the H200: the emulation against the hardware ------------------------------------------

_GPU_PROBE = """
import numpy as np, torch, triton, triton.language as tl
from triton.language.extra import libdevice
from kernelgen.verify import interpreter
from kernelgen.verify.libdevice import TABLE

@triton.jit
def dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    i = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(c_ptr + i, tl.dot(tl.load(a_ptr + i), tl.load(b_ptr + i)))

@triton.jit
def one(x_ptr, y_ptr, o_ptr, n, F: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n)
    y = tl.load(y_ptr + i, mask=i < n)
    if F == "exp":
        r = libdevice.exp(x)
    elif F == "tanh":
        r = libdevice.tanh(x)
    elif F == "erf":
        r = libdevice.erf(x)
    elif F == "pow":
        r = libdevice.pow(tl.abs(x), y)
    elif F == "fast_expf":
        r = libdevice.fast_expf(x)
    elif F == "fast_logf":
        r = libdevice.fast_logf(tl.abs(x))
    elif F == "erfinv":
        r = libdevice.erfinv(y / 4.0)
    elif F == "lgamma":
        r = libdevice.lgamma(tl.abs(x))
    else:
        r = libdevice.float2int_rn(x * 1e3).to(tl.float32)
    tl.store(o_ptr + i, r, mask=i < n)

g = torch.Generator().manual_seed(0)
a, b = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)
c = torch.empty(64, 64, device="cuda")
dot[(1,)](a.cuda(), b.cuda(), c, N=64)
c = c.cpu().double()
cut = torch.from_numpy(interpreter._tf32_dot(a.numpy(), b.numpy(), False)).double()
rna = torch.from_numpy(interpreter._tf32_rna(a.numpy())).double() @ torch.from_numpy(
    interpreter._tf32_rna(b.numpy())).double()
print("dot", float((c - cut).abs().max()), float((c - rna).abs().max()))
x = torch.randn(4096, generator=g) * 4
y = torch.rand(4096, generator=g) * 4 - 2
names = "exp tanh erf pow fast_expf fast_logf erfinv lgamma float2int_rn".split()
for f in names:
    o = torch.empty(4096, device="cuda")
    one[(1,)](x.cuda(), y.cuda(), o, 4096, F=f, BLOCK=4096)
    args = {"pow": (x.abs(), y), "erfinv": (y / 4,), "fast_logf": (x.abs(),),
            "lgamma": (x.abs(),), "float2int_rn": (x * 1e3,)}.get(f, (x,))
    want = np.asarray(TABLE[f](*[t.numpy() for t in args])).astype(np.float32)
    got = o.cpu().numpy().astype(np.float64)
    # fp32 ulps of the larger of |result| and 1: near a zero of the function, absolute
    scale = np.maximum(np.abs(want.astype(np.float64)), 1.0) * 2.0**-23
    ulps = np.abs(got - want) / scale
    print(f, float(ulps[np.isfinite(want)].max()))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_interpreter_emulation_matches_the_gpu() -> None:
    """What the H200 computes, against what the patched interpreter computes: a default-precision
    fp32 dot agrees with TF32 operands cut toward zero (accumulation order aside), farther from
    rounded ones; libdevice results are within a few fp32 ulps of the table's (of 1 where a
    result is smaller)."""
    out = _run(_GPU_PROBE, interpret=False)
    seen = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in out.splitlines()}
    to_cut, to_rna = seen.pop("dot")
    assert to_cut < 1e-4 < to_rna, (to_cut, to_rna)
    for name, (ulps,) in seen.items():
        assert ulps <= 4, (name, ulps)
