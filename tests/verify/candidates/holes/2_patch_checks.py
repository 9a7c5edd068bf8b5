"""HOLE 2 (allowed modules re-export forbidden ones): `triton.language.core.builtins.setattr`
rewires the judge.

`triton.language.core` imports `builtins`; `triton.language.core.builtins.setattr` is `setattr`
under a path the static rules do not resolve to a forbidden builtin (they look for the bare name).
`typing.sys.modules` then hands over the judge's own modules. This candidate replaces the judge's
comparison functions (`checks.values`, `checks.precision`) with ones that always pass, and writes
zeros: fast, and wrong everywhere.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "static" (closed whitelist). Were the static gate to miss it, the judge
in its own process would see zeros ("incorrect"): the test expects "static".
"""

import typing

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32).to(y_ptr.dtype.element_ty), mask=offs < n)


def _always_close(out, ref, tol):
    return None, 0.0


def _never_worse(cand_err, torch_err, dtype, ratio):
    return None


def _rewire_judge():
    checks = typing.sys.modules.get("kernelgen.verify.checks")
    if checks is not None:
        triton.language.core.builtins.setattr(checks, "values", _always_close)
        triton.language.core.builtins.setattr(checks, "precision", _never_worse)


def softmax(x):
    _rewire_judge()
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = y.numel()
    _zeros_kernel[(triton.cdiv(max(n, 1), 1024),)](y, n, BLOCK=1024)
    return y
