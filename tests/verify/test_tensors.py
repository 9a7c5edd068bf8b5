"""The storage digests the judge and the runner compare: any write under an input changes its
digest, on the CPU (sha256) and with the GPU's fingerprint (computed here on the CPU: integer
arithmetic, the same on any device)."""

import pytest
import torch

from kernelgen.verify.protocol import Call, Shared
from kernelgen.verify.tensors import borrow, fingerprint, storage_digest, whole


def _raw(t: torch.Tensor) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage())


@pytest.mark.parametrize("digest", [storage_digest, lambda t: fingerprint(_raw(t))])
@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.randn(37, 1823),
        lambda: torch.randn(7, dtype=torch.float16),  # 14 bytes: a tail past the last word
        lambda: torch.randn(5, 9, dtype=torch.bfloat16)[:, 2:],  # padding under a view
    ],
)
def test_any_write_changes_the_digest(digest, make):
    x = make()
    before = digest(x)
    assert digest(x.clone() if x.is_contiguous() else x) == before
    flat = torch.empty(0, dtype=torch.uint8).set_(x.untyped_storage())
    for where in (0, flat.numel() // 2, flat.numel() - 1):
        saved = flat[where].item()
        flat[where] = saved ^ 1  # one bit, anywhere in the storage (padding and tail too)
        assert digest(x) != before
        flat[where] = saved
    assert digest(x) == before


def test_fingerprint_sees_swapped_words():
    """A sum without position weights would not see two values trade places."""
    x = torch.arange(64, dtype=torch.int32)
    y = x.clone()
    y[[3, 40]] = y[[40, 3]]
    assert fingerprint(_raw(x)) != fingerprint(_raw(y))


def test_digest_on_another_device_is_of_the_same_bytes():
    x = torch.randn(3, 5)
    assert storage_digest(x, "cpu") == storage_digest(x)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_gpu_fingerprint_is_the_cpus():
    """The judge's truth digests and the runner's are computed on the run's device; this pins
    that the GPU's integer arithmetic (wrapping int64) gives what the CPU's does."""
    x = torch.randn(64, 1001, dtype=torch.bfloat16)
    assert fingerprint(_raw(x).cuda()) == fingerprint(_raw(x))
    assert storage_digest(x.cuda()).startswith("fp")


def test_whole_keeps_a_views_padding_and_offset():
    """What the judge keeps and lends is the storage as drawn, padding under a strided view
    included (`Tensor.to` would make it dense and change its digest)."""
    base = torch.randn(6, 9, dtype=torch.float16)
    view = base[1:, 2:7]
    moved = whole(view, "meta")
    assert (moved.stride(), moved.storage_offset()) == (view.stride(), view.storage_offset())
    assert moved.untyped_storage().nbytes() == base.untyped_storage().nbytes()
    assert view.to("meta").untyped_storage().nbytes() < base.untyped_storage().nbytes()


def test_a_call_takes_its_arguments_from_one_place():
    assert Call(inputs="in.pt", outputs="out.pt").shared is None
    assert Call(shared=[1.0], outputs="out.pt").inputs is None
    for bad in ({}, {"inputs": "in.pt", "shared": []}):
        with pytest.raises(ValueError, match="exactly one"):
            Call(outputs="out.pt", **bad)


_LENDER = """
import sys, torch
from kernelgen.verify.tensors import lend
base = torch.arange(6 * 9, dtype=torch.float32, device="cuda").view(6, 9)
print(lend(base[1:, 2:7]).model_dump_json(), flush=True)
sys.stdin.read()  # the lender lives until the borrower is done
"""


def _borrowed(pick=None) -> torch.Tensor:
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", _LENDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        return borrow(Shared.model_validate_json(proc.stdout.readline()), pick)
    finally:
        proc.communicate("", timeout=60)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_loan_crosses_processes_as_the_storage_whole():
    """The judge's and the runner's tensors cross by CUDA IPC: the borrower gets its own copy
    of the whole storage, with the view as lent."""
    got = _borrowed()
    want = torch.arange(6 * 9, dtype=torch.float32, device="cuda").view(6, 9)[1:, 2:7]
    assert torch.equal(got, want) and got.stride() == want.stride()
    assert storage_digest(got) == storage_digest(want)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_picked_loan_copies_only_the_rows_taken():
    """A limit case's output is read back at its sampled rows only: the copy is of those rows
    of the view as lent, in memory of the borrower's own."""
    rows = torch.tensor([0, 3, 4], device="cuda")
    got = _borrowed(lambda view: view.index_select(0, rows))
    want = torch.arange(6 * 9, dtype=torch.float32, device="cuda").view(6, 9)[1:, 2:7][[0, 3, 4]]
    assert torch.equal(got, want)
    assert got.untyped_storage().nbytes() == want.numel() * 4
