"""A runner's first judged call, made before it holds a candidate, on a kernel of kernelgen's own:
what every process pays once leaves the candidate's first call (where it read as 5-7 s of the
candidate's own time on the H200) for the warm start that the runner pool hides. Most of it is
torch importing dynamo, sympy and its higher-order ops the first time an aten op runs under a
Python dispatch mode (the guard's); the rest is Triton's driver, cache key and launcher path,
and the first digest's kernels (scripts/first_call.py profiles it; KERNELGEN_RUNNER_WARMUP=0
turns it off, to measure without)."""

from __future__ import annotations

from types import ModuleType

import torch
import triton
import triton.language as tl


@triton.jit
def _fill(out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, value, mask=offs < n)


def run(guard: ModuleType, tensors: ModuleType, device: str) -> None:
    """A guarded allocation (on CUDA: a guarded launch, with a flood before it and a digest after
    it, as a judged call has); its record is dropped (the launch recorder has no candidate yet)."""
    guard.flood_free_memory(device, "nan")
    with guard.guarded("nan", False):
        # An aten op through the dispatch mode is what makes torch import the most: the
        # allocation goes inside, as a launcher's does.
        out = torch.empty(256, dtype=torch.float32, device=device)
        if device == "cuda":
            _fill[(1,)](out, out.numel(), 1.0, BLOCK=256)
            torch.cuda.synchronize()
    if device != "cuda":
        return
    tensors.storage_digest(out)
    if float(out.sum()) != 256.0:
        raise RuntimeError("the runner's warm-up kernel computed a wrong result")
