"""HOLE 2 (allowed modules re-export forbidden ones): the dispatch guard switched off.

`typing.sys.modules` reaches `torch.utils._python_dispatch`, whose `_disable_current_modes()`
pops every active TorchDispatchMode, the judge's guard included; `typing.sys.modules["torch"]`
reaches `torch._softmax`, a name no static rule knows (the rules match `torch.` paths, and a
subscript breaks the path). Inside the block torch computes the answer unseen; a Triton kernel
then copies it into the output, so a kernel of the candidate launched.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "static" (closed whitelist: no `typing.sys`).
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


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    modules = typing.sys.modules
    with modules["torch.utils._python_dispatch"]._disable_current_modes():
        answer = modules["torch"]._softmax(x2, -1, False)
    _copy_kernel[(n_rows,)](
        y, answer, n_cols, answer.stride(0), answer.stride(1), y.stride(0), BLOCK=1024
    )
    return y.view(x.shape)
