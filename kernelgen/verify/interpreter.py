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
from fp8 are made the GPU's too (see `_gpu_fp8_casts`).
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


def _gpu_nan_semantics() -> None:
    import numpy as np
    from triton.runtime.interpreter import InterpreterBuilder

    # maxnumf/minnumf: the ops of PropagateNan.NONE; maximumf/minimumf (ALL) keep np's NaN.
    InterpreterBuilder.create_maxnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmax)
    InterpreterBuilder.create_minnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmin)


# The GPU's float8 formats, as torch names them, with their largest finite value: Hopper's
# cvt.rn.satfinite rounds to nearest even and saturates there (NaN stays NaN).
_FP8 = {"fp8e4nv": ("float8_e4m3fn", 448.0), "fp8e5": ("float8_e5m2", 57344.0)}
_WIDE = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}


def _gpu_fp8_casts() -> None:
    """Triton 3.6's interpreter rounds to fp8 by the first dropped bit alone and never carries
    into the exponent: 31.6 becomes e4m3 16, not 32 (45109 of 510000 casts of N(0, 100) values
    off on CPU, every one that rounds up to a power of two). Casts between an fp8 format and a
    wider float go through torch's, which rounds to nearest even, after a clamp to the largest
    finite: what the H200 computes."""
    import torch
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle, _get_np_dtype, _ir

    base = InterpreterBuilder.create_fp_to_fp

    def torch_view(data, name: str) -> torch.Tensor:
        t = torch.from_numpy(data.copy())  # numpy keeps 16-bit and fp8 floats as unsigned ints
        if name in _FP8:
            return t.view(getattr(torch, _FP8[name][0]))
        return t.view(torch.int16).view(torch.bfloat16) if name == "bf16" else t

    def fp_to_fp(self, src, dst_type, rounding_mode):  # noqa: ANN001 - the interpreter's types
        src_name, dst_name = src.dtype.scalar.name, dst_type.scalar.name
        rtne = rounding_mode in (None, _ir.ROUNDING_MODE.RTNE)
        if (
            not rtne
            or not ({src_name, dst_name} & _FP8.keys())
            or not ({src_name, dst_name} <= _FP8.keys() | _WIDE.keys())
        ):
            return base(self, src, dst_type, rounding_mode)
        x = torch_view(src.data, src_name)
        if dst_name in _FP8:
            name, top = _FP8[dst_name]
            y = x.float().clamp(-top, top).to(getattr(torch, name)).view(torch.uint8)
        else:
            y = x.to(getattr(torch, _WIDE[dst_name]))
            y = y.view(torch.int16) if dst_name == "bf16" else y
        return TensorHandle(y.numpy().view(_get_np_dtype(dst_type)), dst_type.scalar)

    InterpreterBuilder.create_fp_to_fp = fp_to_fp
