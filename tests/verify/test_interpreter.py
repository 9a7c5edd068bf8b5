"""The interpreter made to compute what the H200 computes, where Triton 3.6's does not."""

from __future__ import annotations

import os
import subprocess
import sys

# Run in a fresh interpreter: TRITON_INTERPRET is read when triton is imported, and the patch
# is the sandboxed runner's, not this process's.
_PROBE = """
import torch, triton, triton.language as tl
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(x_ptr, y_ptr, out_ptr, PROPAGATE: tl.constexpr):
    i = tl.arange(0, 4)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    if PROPAGATE:
        hi = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
        lo = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    else:
        hi = tl.maximum(x, y)
        lo = tl.minimum(x, y)
    tl.store(out_ptr + i, hi)
    tl.store(out_ptr + 4 + i, lo)

nan = float("nan")
x = torch.tensor([nan, 1.0, nan, -float("inf")])
y = torch.tensor([2.0, nan, nan, 3.0])
for propagate in (False, True):
    out = torch.empty(8)
    k[(1,)](x, y, out, PROPAGATE=propagate)
    print(propagate, out.tolist())
"""


def _probe(install: bool) -> dict[str, str]:
    code = _PROBE.format(install="interpreter.install()" if install else "")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    return dict(line.split(" ", 1) for line in out.strip().splitlines())


def test_max_and_min_drop_nan_as_the_gpu_does() -> None:
    seen = _probe(install=True)
    # PTX max.f32/min.f32: NaN only when both are NaN.
    assert seen["False"] == "[2.0, 1.0, nan, 3.0, 2.0, 1.0, nan, -inf]"
    # PropagateNan.ALL keeps NaN, on the GPU and here.
    assert seen["True"] == "[nan, nan, nan, 3.0, nan, nan, nan, -inf]"


def test_the_interpreter_alone_differs() -> None:
    # What the patch is for: without it, the CPU keeps the NaN the GPU drops.
    assert _probe(install=False)["False"] == "[nan, nan, nan, 3.0, nan, nan, nan, -inf]"
