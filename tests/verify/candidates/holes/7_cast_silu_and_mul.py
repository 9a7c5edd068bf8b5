"""HOLE 7 (a dtype cast in the launcher passes), silu_and_mul: casts on the way in and out.

Without a reduction there is nothing to accumulate, so this one moves the casts to both ends: the
launcher upcasts the input into an fp32 buffer (`x32[:] = x2`), the kernel is an fp32-only kernel
(no `.to()` anywhere), and the launcher rounds the fp32 result into the output (`y[:] = y32`).
Both casts dispatch to `copy_`, which the guard takes for a layout copy; on CUDA they run as
torch's copy kernels, whose names contain "copy" and pass the profiler's check too.

HEAD (c167456), `kernelgen verify silu_and_mul FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "provenance" (a copy_ that changes dtype is a cast).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_and_mul_fp32_kernel(y_ptr, x_ptr, n, d, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    row = offs // d
    col = offs % d
    a = tl.load(x_ptr + row * 2 * d + col, mask=mask, other=0.0)
    b = tl.load(x_ptr + row * 2 * d + col + d, mask=mask, other=0.0)
    tl.store(y_ptr + offs, a / (1.0 + tl.exp(-a)) * b, mask=mask)


def silu_and_mul(x):
    d = x.shape[-1] // 2
    x2 = x.reshape(-1, 2 * d)
    n_rows = x2.shape[0]
    x32 = torch.empty((n_rows, 2 * d), dtype=torch.float32, device=x.device)
    x32[:] = x2
    y32 = torch.empty((n_rows, d), dtype=torch.float32, device=x.device)
    n = y32.numel()
    _silu_and_mul_fp32_kernel[(triton.cdiv(max(n, 1), 1024),)](y32, x32, n, d, BLOCK=1024)
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    y[:] = y32
    return y.view(*x.shape[:-1], d)
