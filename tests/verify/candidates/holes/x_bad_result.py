"""EXIT CODE: a result the caller cannot parse, under the sandbox's own nonce.

Like 2_forge_verdict.py it takes the nonce and the result folder from the child's `main()` frame
(`typing.sys._getframe`), but writes a result that is no Verdict (`{"accepted": true}`), then ends
the process (`triton.language.core.knobs.os._exit(0)`). The caller trusts a nonce'd result to be
a Verdict and validates it with pydantic: at HEAD the ValidationError escapes verify_candidate
("never raises for anything the candidate does") and the CLI dies with a traceback (exit 1 by
luck: Python's exit code for an uncaught exception).

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: traceback, exit 1; in-process
verify_candidate RAISES pydantic.ValidationError.
Fixed verifier: rejected, "static" (closed whitelist); a malformed reply from the runner must be
a "crash", never an exception.
"""

import typing

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32).to(y_ptr.dtype.element_ty), mask=offs < n)


def _bad_result():
    frame = typing.sys._getframe(1)
    while frame is not None:
        names = frame.f_locals
        if "nonce" in names and "folder" in names:
            text = typing.sys.modules["json"].dumps(
                {"nonce": names["nonce"], "result": '{"accepted": true}'}
            )
            names["folder"].joinpath("result.json").write_text(text)
            triton.language.core.knobs.os._exit(0)
        frame = frame.f_back


def softmax(x):
    _bad_result()
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = y.numel()
    _zeros_kernel[(triton.cdiv(max(n, 1), 1024),)](y, n, BLOCK=1024)
    return y
