"""QuACK (quack-kernels 0.6.5, CuTe-DSL on nvidia-cutlass-dsl 4.8.1 cu13): softmax and rmsnorm.

The forward entry points first (quack.softmax.softmax_fwd, quack.rmsnorm.rmsnorm_fwd, what the
autograd wrappers call), then the public autograd ones (quack.softmax, quack.rmsnorm). A kernel
is compiled on the first call of each width and dtype (CuTe-DSL's JIT), outside the timings.
rmsnorm_fwd takes the weight in its dtype and computes in fp32, as references/rms_norm.py does.
"""

from __future__ import annotations

from typing import Any

from peers import Binder, Candidate, Prepared


def _plain(fn: Any) -> Binder:
    return lambda args: Prepared(fn, list(args))


def _softmax_fwd() -> Binder:
    from quack.softmax import softmax_fwd

    return _plain(softmax_fwd)


def _softmax() -> Binder:
    import quack

    return _plain(quack.softmax)


def _rmsnorm_fwd() -> Binder:
    from quack.rmsnorm import rmsnorm_fwd

    # (out, residual_out, rstd): the normalized rows first.
    return _plain(lambda x, w, eps: rmsnorm_fwd(x, w, eps=eps)[0])


def _rmsnorm() -> Binder:
    import quack

    return _plain(lambda x, w, eps: quack.rmsnorm(x, w, eps=eps))


CANDIDATES: dict[str, list[Candidate]] = {
    "softmax": [
        ("quack.softmax.softmax_fwd(x)", _softmax_fwd),
        ("quack.softmax(x)", _softmax),
    ],
    "rms_norm": [
        ("quack.rmsnorm.rmsnorm_fwd(x, w, eps=eps)[0]", _rmsnorm_fwd),
        ("quack.rmsnorm(x, w, eps=eps)", _rmsnorm),
    ],
}
