"""HOLE 2 (allowed modules re-export forbidden ones): `typing.sys` walks the stack into the judge.

`typing` is an allowed import and `typing.sys` is the `sys` module: `typing.sys._getframe()` reads
the caller's frames. The judge calls the candidate from `run_case`, whose locals hold the float64
ground truth of both inputs (`ref_a`, `ref_b`) while the candidate runs. This candidate finds them,
picks the one that belongs to its input (by identity), and launches a Triton kernel that copies
it into the output: a kernel launched, only allocations and views in the launcher, exact values.
Without a judge in its process (production, or a judge in another process) it writes zeros.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "static" (`typing.sys` is outside the closed whitelist of paths).
"""

import typing

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(y_ptr, r_ptr, n_cols, stride_rm, stride_rn, stride_ym, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        r = tl.load(r_ptr + row * stride_rm + cols * stride_rn, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride_ym + cols, r.to(y_ptr.dtype.element_ty), mask=mask)


def _ground_truth(x):
    frame = typing.sys._getframe(1)
    while frame is not None:
        names = frame.f_locals
        if "ref_a" in names and "args_a" in names:
            if "args_b" in names and names["args_b"][0] is x:
                return names.get("ref_b")
            return names["ref_a"]  # call A, and the replay on a fresh copy of A
        frame = frame.f_back
    return None


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    truth = _ground_truth(x)
    if truth is None:
        src = torch.zeros((n_rows, n_cols), dtype=torch.float32, device=x.device)
    else:
        src = truth.reshape(-1, n_cols)
    _copy_kernel[(n_rows,)](
        y, src, n_cols, src.stride(0), src.stride(1), y.stride(0), BLOCK=1024
    )
    return y.view(x.shape)
