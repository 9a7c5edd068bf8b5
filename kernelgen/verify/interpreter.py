"""Make Triton's CPU interpreter judge honest kernels written for a GPU, without lowering the bar.

An honest candidate may ask `torch.cuda.get_device_properties(...)` for the SM count to size a
persistent grid. Under the interpreter it answers with the H200's figures, the device the kernels
are written for. (Autotuned kernels, which the interpreter cannot time, are handled for both
devices in `configs.py`.) Installed in the sandboxed process only, under TRITON_INTERPRET=1.

And where the interpreter computes what the GPU does not, it is made to compute what the GPU
does, so that a CPU acceptance predicts the H200's: `tl.maximum`/`tl.minimum` without
`propagate_nan` are PTX `max.f32`/`min.f32` on the GPU, which return the other operand when
one is NaN; Triton 3.6's interpreter gives NaN (np.maximum). An online softmax whose running
max came from `tl.maximum` lost its NaN rows on the H200 and kept them on CPU. Its casts to and
from fp8, its fp32 -> bf16 rounding and its dots of bf16 and fp8 operands are made the GPU's too
(`_gpu_fp8_casts`, `_gpu_bf16_dots`): kernels that split fp32 into bf16 pieces for the tensor
cores (router_gemm's) can then be judged on CPU. An fp32 dot at the default precision is TF32
on the tensor cores, and exact fp32 only in the interpreter: its operands are cut to TF32 here
(`_tf32`), so a kernel whose fp32 dot is too coarse fails on CPU as it would on the H200.
libdevice functions, empty stubs in Triton 3.6's interpreter, are computed (libdevice.py's
table); one the table lacks raises `Lacking`, which the judge reports as a case not run on CPU.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

H200 = SimpleNamespace(
    name="NVIDIA H200 (interpreter stand-in)",
    major=9,
    minor=0,
    multi_processor_count=132,
    total_memory=143_771 * 2**20,
    L2_cache_size=60 * 2**20,
    max_threads_per_multi_processor=2048,
    max_threads_per_block=1024,
    warp_size=32,
    shared_memory_per_block=48 * 1024,
    shared_memory_per_block_optin=227 * 1024,
    shared_memory_per_multiprocessor=228 * 1024,
    regs_per_multiprocessor=65536,
)


def active() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def install() -> None:
    if not active():
        return
    import torch

    torch.cuda.get_device_properties = lambda device=None: H200  # type: ignore[assignment]
    torch.cuda.get_device_capability = lambda device=None: (9, 0)  # type: ignore[assignment]
    torch.cuda.get_device_name = lambda device=None: H200.name  # type: ignore[assignment]
    _gpu_nan_semantics()
    _gpu_fp8_casts()
    _gpu_bf16_dots()
    _libdevice()


def _gpu_nan_semantics() -> None:
    import numpy as np
    from triton.runtime.interpreter import InterpreterBuilder

    # maxnumf/minnumf: the ops of PropagateNan.NONE; maximumf/minimumf (ALL) keep np's NaN.
    InterpreterBuilder.create_maxnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmax)
    InterpreterBuilder.create_minnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmin)


# The GPU's float8 formats: mantissa bits, exponent bias, largest finite. Hopper's
# cvt.rn.satfinite rounds to nearest even and saturates there (NaN stays NaN).
_FP8 = {"fp8e4nv": (3, 7, 448.0), "fp8e5": (2, 15, 57344.0)}
_WIDE = {"fp32", "fp16", "bf16", "fp64"}


def _gpu_fp8_casts() -> None:
    """Triton 3.6's interpreter rounds to fp8 by the first dropped bit alone and never carries
    into the exponent: 31.6 becomes e4m3 16, not 32 (45109 of 510000 casts of N(0, 100) values
    off on CPU, every one that rounds up to a power of two). Casts between an fp8 format and a
    wider float are computed here instead, as the H200 does them. In numpy: torch work inside a
    launch is what the run-time guard is there to see."""
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle, _get_np_dtype, _ir

    base = InterpreterBuilder.create_fp_to_fp

    def fp_to_fp(self, src, dst_type, rounding_mode):  # noqa: ANN001 - the interpreter's types
        src_name, dst_name = src.dtype.scalar.name, dst_type.scalar.name
        names = {src_name, dst_name}
        rtne = rounding_mode in (None, _ir.ROUNDING_MODE.RTNE)
        if not rtne or not names & _FP8.keys() or not names <= _FP8.keys() | _WIDE:
            return base(self, src, dst_type, rounding_mode)
        wide = (
            _fp8_decode(src.data, *_FP8[src_name])
            if src_name in _FP8
            else _wide(src.data, src_name)
        )
        if dst_name in _FP8:
            data = _fp8_encode(wide, *_FP8[dst_name])
        else:
            data = _narrow(wide, dst_name)
        return TensorHandle(data.view(_get_np_dtype(dst_type)), dst_type.scalar)

    InterpreterBuilder.create_fp_to_fp = fp_to_fp


def _wide(data, name: str):  # noqa: ANN001, ANN202 - numpy arrays
    """float64 values of the interpreter's storage (bf16 is kept as its 16 bits)."""
    import numpy as np

    if name == "bf16":
        return (data.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return data.astype(np.float64)


def _narrow(wide, name: str):  # noqa: ANN001, ANN202
    """fp8 values (exact in every wider format) stored as the interpreter keeps `name`."""
    import numpy as np

    if name == "bf16":
        return (wide.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return wide.astype({"fp32": np.float32, "fp16": np.float16, "fp64": np.float64}[name])


def _fp8_encode(wide, mbits: int, bias: int, top: float):  # noqa: ANN001, ANN202
    """Round to nearest even, saturate at `top`, NaN kept; the fp8 bit patterns as uint8."""
    import numpy as np

    nan = np.isnan(wide)
    neg = np.signbit(wide)
    a = np.clip(np.abs(np.where(nan, 0.0, wide)), 0.0, top)
    lowest = 2.0 ** (1 - bias)  # the smallest normal; below it a fixed spacing
    _, e = np.frexp(np.maximum(a, lowest))  # a = f * 2^e with f in [0.5, 1)
    quantum = np.ldexp(1.0, e - 1 - mbits)
    v = np.minimum(np.rint(a / quantum) * quantum, top)  # rint: ties to even
    normal = v >= lowest
    _, e = np.frexp(np.where(normal, v, 1.0))
    exp_bits = np.where(normal, e - 1 + bias, 0)
    frac = np.where(normal, v / np.ldexp(1.0, e - 1) - 1.0, v / lowest)
    man_bits = np.rint(frac * 2**mbits).astype(np.int64)
    bits = (exp_bits.astype(np.int64) << mbits) | man_bits
    bits = np.where(nan, 0x7F, bits) | np.where(neg, 0x80, 0)
    return bits.astype(np.uint8)


def _fp8_decode(data, mbits: int, bias: int, top: float):  # noqa: ANN001, ANN202
    """float64 values of fp8 bit patterns (uint8); NaN for the NaN patterns, inf for e5m2's."""
    import numpy as np

    b = data.astype(np.int64)
    exp_bits = (b >> mbits) & ((1 << (7 - mbits)) - 1)
    man = (b & ((1 << mbits) - 1)).astype(np.float64) / 2**mbits
    v = np.where(exp_bits == 0, man * 2.0 ** (1 - bias), (1 + man) * np.ldexp(1.0, exp_bits - bias))
    magnitude = b & 0x7F
    if mbits == 3:  # e4m3fn: no inf, one NaN pattern
        v = np.where(magnitude == 0x7F, np.nan, v)
    else:  # e5m2: IEEE-like
        v = np.where(magnitude == 0x7C, np.inf, np.where(magnitude > 0x7C, np.nan, v))
    return np.where(b & 0x80, -v, v)


def _gpu_bf16_dots() -> None:
    """Triton 3.6's interpreter multiplies the bit patterns of bf16 (and fp8-as-fp16 after its
    lossy cast) in tl.dot, rounds fp32 -> bf16 by truncation, and casts ints to bf16 by
    reinterpreting them (-1 becomes NaN). The GPU's dot multiplies the exact values and sums in
    fp32; its conversions to bf16 round to nearest even."""
    import numpy as np
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle, _get_np_dtype, _ir

    base_dot = InterpreterBuilder.create_dot
    base_cast = InterpreterBuilder.cast_impl

    def exact(h):  # noqa: ANN001, ANN202
        name = h.dtype.scalar.name
        if name in _FP8:
            return _fp8_decode(h.data, *_FP8[name]).astype(np.float32)
        return _wide(h.data, name).astype(np.float32) if name == "bf16" else h.data

    def dot(self, a, b, d, input_precision, max_num_imprecise_acc):  # noqa: ANN001
        names = {a.dtype.scalar.name, b.dtype.scalar.name}
        if names == {"fp32"} and input_precision != _ir.INPUT_PRECISION.IEEE:
            three = input_precision == _ir.INPUT_PRECISION.TF32x3
            out = _tf32_dot(a.data, b.data, three) + d.data
            return TensorHandle(out.astype(d.data.dtype), d.dtype.scalar)
        if not names & ({"bf16"} | _FP8.keys()):
            return base_dot(self, a, b, d, input_precision, max_num_imprecise_acc)
        out = np.matmul(exact(a), exact(b), dtype=np.float32).astype(d.data.dtype) + d.data
        return TensorHandle(out, d.dtype.scalar)

    def cast(self, src, dst_type):  # noqa: ANN001
        s, d = src.dtype.scalar.name, dst_type.scalar.name
        if s == d or "bf16" not in (s, d) or (s == "bf16" and d == "fp32"):
            return base_cast(self, src, dst_type)
        if s == "bf16":  # to an int or another float: from the value
            data = _wide(src.data, "bf16").astype(_get_np_dtype(dst_type))
            return TensorHandle(data, dst_type.scalar)
        bits = src.data.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        quiet = ((bits >> 16) | 0x40).astype(np.uint16)
        data = np.where(np.isnan(src.data.astype(np.float32)), quiet, rounded)
        return TensorHandle(data, dst_type.scalar)

    InterpreterBuilder.create_dot = dot
    InterpreterBuilder.cast_impl = cast


def _tf32(x):  # noqa: ANN001, ANN202 - fp32 numpy arrays
    """fp32 as a TF32 tensor-core operand: the 13 low mantissa bits dropped (toward zero).
    Triton 3.6 feeds a "tf32" dot its fp32 operands unconverted (the one cvt.rna.tf32.f32 in
    libtriton is tf32x3's split), and the tensor cores read only the top 19 bits. PTX
    cvt.rna.tf32.f32 would round to nearest, ties away from zero (`_tf32_rna`); neither is
    round-to-nearest-even. Truncation errs by up to 2^-10 relative, twice rounding's bound: if
    the H200 rounds after all, the CPU is the stricter of the two. NaN stays NaN."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    cut = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isnan(x), x, cut)


def _tf32_rna(x):  # noqa: ANN001, ANN202
    """cvt.rna.tf32.f32: to nearest, ties away from zero (half an ulp added to the magnitude's
    bits, then cut); infinities and NaN unchanged."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    up = ((x.view(np.uint32) + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isfinite(x), up, x)


def _tf32_dot(a, b, three: bool):  # noqa: ANN001, ANN202
    """An fp32 tl.dot on the tensor cores, products summed in fp32. tf32x3 is Triton's split
    (F32DotTC): big = rna(x), small = x - big, then small*big + big*small (NaN there dropped,
    as its lowering does, so an infinity survives) + big*big, each a TF32 dot."""
    import numpy as np

    def mm(x, y):  # noqa: ANN001, ANN202
        return np.matmul(_tf32(x), _tf32(y), dtype=np.float32)

    if not three:
        return mm(a, b)
    with np.errstate(invalid="ignore", over="ignore"):
        a_big, b_big = _tf32_rna(a), _tf32_rna(b)
        a_small, b_small = a - a_big, b - b_big
        low = mm(a_small, b_big) + mm(a_big, b_small)
        low = np.where(np.isnan(low), np.float32(0), low)
        return mm(a_big, b_big) + low


def _libdevice() -> None:
    """`triton.language.extra.libdevice` (the only libdevice a candidate may import) bound as
    the CUDA backend binds it at compile time (its module map), to CUDA's libdevice functions
    run with the interpreter's semantic; their extern calls are computed from libdevice.py's
    table by the symbol's libdevice name. A stub CUDA lacks fails as it does on the GPU."""
    import ast
    import functools
    import inspect

    import numpy as np
    import triton.language.extra.libdevice as stub
    from triton.language.extra.cuda import libdevice as cuda
    from triton.runtime.interpreter import (
        InterpreterBuilder,
        TensorHandle,
        _get_np_dtype,
        interpreter_semantic,
    )

    from kernelgen.verify.libdevice import TABLE, Lacking

    names: dict[str, str] = {}  # "__nv_expf" -> "exp", read from CUDA's own table
    for node in ast.parse(inspect.getsource(cuda)).body:
        if isinstance(node, ast.FunctionDef):
            for c in ast.walk(node):
                if isinstance(c, ast.Constant) and str(c.value).startswith("__nv_"):
                    names[c.value] = node.name

    def extern(self, lib_name, lib_path, symbol, args, ret_type, is_pure):  # noqa: ANN001
        name = names.get(symbol, symbol)
        fn = TABLE.get(name)
        if fn is None:
            raise Lacking(f"libdevice.{name}")
        scalar = ret_type.scalar
        data = np.asarray(fn(*[a.data for a in args])).astype(_get_np_dtype(scalar))
        return TensorHandle(data, scalar)

    def bound(fn):  # noqa: ANN001, ANN202
        @functools.wraps(fn, updated=())
        def call(*args, _semantic=None, **kwargs):  # noqa: ANN001, ANN202
            return fn(*args, _semantic=_semantic or interpreter_semantic, **kwargs)

        return call

    def absent(name: str):  # noqa: ANN202
        def call(*args, **kwargs):  # noqa: ANN001, ANN202
            raise AttributeError(f"libdevice.{name} is not in Triton's CUDA libdevice")

        return call

    InterpreterBuilder.create_extern_elementwise = extern
    for name, member in vars(stub).copy().items():
        if inspect.isfunction(member) and member.__module__ == stub.__name__:
            real = getattr(cuda, name, None)
            setattr(stub, name, bound(real) if real is not None else absent(name))
