"""HOLE 1 (guard blind inside the launch): torch compute in the kernel body via constexpr tensors.

Under the CPU interpreter a `tl.constexpr` argument arrives as the launcher's own torch tensor,
and the kernel body is plain Python: `Y.copy_(X.double().softmax(-1))` is torch computing the
whole answer (in float64, better than torch's own fp16), inside the launch, where the dispatch
guard is paused. The static rules see only attribute calls on a kernel argument, which they allow.
On a GPU the kernel does not compile (a tensor is no constexpr).

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "provenance" (the guard stays on inside launches and sees aten softmax)
or "static" (no method calls on a constexpr kernel argument). On CUDA (not run here): "compile".
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, n_cols, X: tl.constexpr, Y: tl.constexpr, BLOCK: tl.constexpr):
    # An expression statement, not an assignment: the interpreter rewrites assignments into
    # to_tensor() calls, which would choke on a torch tensor.
    Y.copy_(X.double().softmax(-1))


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    y = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
    _softmax_kernel[(1,)](y, n_cols, x2, y, BLOCK=16)
    return y.view(x.shape)
