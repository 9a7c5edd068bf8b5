"""Make Triton's CPU interpreter judge honest kernels written for a GPU, without lowering the bar.

An honest candidate may ask `torch.cuda.get_device_properties(...)` for the SM count to size a
persistent grid. Under the interpreter it answers with the H200's figures, the device the kernels
are written for. (Autotuned kernels, which the interpreter cannot time, are handled for both
devices in `configs.py`.) Installed in the sandboxed process only, under TRITON_INTERPRET=1.

And where the interpreter computes what the GPU does not, it is made to compute what the GPU
does, so that a CPU acceptance predicts the H200's: `tl.maximum`/`tl.minimum` without
`propagate_nan` are PTX `max.f32`/`min.f32` on the GPU, which return the other operand when
one is NaN; Triton 3.6's interpreter gives NaN (np.maximum). An online softmax whose running
max came from `tl.maximum` lost its NaN rows on the H200 and kept them on CPU.
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


def _gpu_nan_semantics() -> None:
    import numpy as np
    from triton.runtime.interpreter import InterpreterBuilder

    # maxnumf/minnumf: the ops of PropagateNan.NONE; maximumf/minimumf (ALL) keep np's NaN.
    InterpreterBuilder.create_maxnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmax)
    InterpreterBuilder.create_minnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmin)
