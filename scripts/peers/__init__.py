"""The serving libraries' kernels that scripts/bench_library.py times against kernelgen_ops (issue
[P]), one module per family: QuACK, FlashInfer, SGLang, vLLM, torch._scaled_mm, FlashMLA.

A family is one worker group (its own process, as Liger and FlagGems are) and one module here,
scripts/peers/<group>.py, whose CANDIDATES lists per op the APIs to try, each a (label, make)
pair whose make() imports what it needs and returns a binder. A binder takes the operator's
arguments as references/<op>.py makes them and returns the call to time (Prepared): the peer's
function, its arguments in the peer's own layout (a block table turned into FlashInfer's page
lists, fp8 operands requantized rowwise), and where the peer computes another problem than the
reference (rowwise scales, MLA's shared K and V), the answer to check it against. What a binder
does is not timed: it is the per-batch planning a server does once for all its layers, or the
conversion a model does once at load.

Nothing is imported at the top of a family's module but torch: a missing peer raises on make(),
and the worker records why (with NOT_CARRIED's note, where staging left it out on purpose), never
drops it. FAMILIES names each family's ops without importing it, for scripts/bench_library.py,
which starts only the families that have one of the ops asked for.
"""

from __future__ import annotations

import importlib
import site
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the parent bench reads FAMILIES without paying for torch's import
    import torch


@dataclass
class Prepared:
    """One peer call on one input set: fn(*args), checked against `expected` where given (else
    against eager's answer); `note` says what differs from the reference's problem. `posed`,
    with `expected`: the peer's problem as the reference's arguments, so that the operator's own
    rule judges it (else twice the verifier's tolerance does)."""

    fn: Callable[..., Any]
    args: list[Any]
    expected: torch.Tensor | None = None
    note: str | None = None
    posed: list[Any] | None = None


Binder = Callable[[list[Any]], Prepared]
Candidate = tuple[str, Callable[[], Binder]]


@dataclass(frozen=True)
class Family:
    group: str  # the worker group and the impl name in the record
    module: str  # found (not imported) to say whether the family is there
    dist: str | None  # the distribution whose version the record keeps
    ops: tuple[str, ...]  # the keys of scripts/peers/<group>.py's CANDIDATES
    seconds: float  # its share of the bench's default budget (JIT builds included)
    also: tuple[str, ...] = field(default=())  # further distributions whose versions matter


FAMILIES: dict[str, Family] = {
    f.group: f
    for f in (
        # CuTe-DSL compiles a kernel per width on its first call, a second or two each.
        Family(
            "quack",
            "quack",
            "quack-kernels",
            ("softmax", "rms_norm"),
            90.0,
            ("nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-cu13"),
        ),
        # nvcc builds the decode and prefill modules on the first plan(), minutes.
        Family(
            "flashinfer",
            "flashinfer",
            "flashinfer-python",
            ("decode_attn",),
            240.0,
            ("apache-tvm-ffi",),
        ),
        Family("sglang", "sglang", "sglang", ("decode_attn", "fused_moe"), 120.0),
        Family("vllm", "vllm", "vllm", ("fused_moe",), 60.0),
        Family("scaled_mm", "torch", "torch", ("fp8_gemm",), 60.0),
        Family("flashmla", "flash_mla", "sgl-flash-mla", ("sparse_attn",), 60.0),
    )
}

# Peers that scripts/gpu/stage.sh leaves out, and why (sizes of 2026-12-05 from the registry; one
# call carries 64 MiB with the working tree, about 31 MiB of it). The worker adds the note to an
# import failure, so the record says why the peer has no figure.
NOT_CARRIED = {
    "vllm": "not staged: vllm 0.26.0 (the newest release pinned to torch 2.11) is a 304 MB wheel, "
    "eight calls of staging; its fused_moe needs the compiled vllm._moe_C inside it",
}


def candidates(group: str, op: str) -> list[Candidate]:
    """The family's APIs for `op`, in the order tried; [] where it has none."""
    return importlib.import_module(f"peers.{group}").CANDIDATES.get(op, [])


def add_pth_dirs() -> list[str]:
    """Process the .pth files of every sys.path folder, as site does for site-packages only.
    Wheels installed with `pip install --target /tmp/site` (the GPU machine's way, put on
    PYTHONPATH) keep their .pth unread: nvidia-cutlass-dsl's puts its dsl_packages folder on
    sys.path, without which QuACK's `import cutlass` fails. Returns the folders processed."""
    done = []
    for entry in list(sys.path):
        folder = Path(entry or ".")
        if folder.is_dir() and any(folder.glob("*.pth")) and "site-packages" not in folder.parts:
            site.addsitedir(str(folder))
            done.append(str(folder))
    return done
