"""Facts about a tensor's memory that both sides of verification compute the same way."""

from __future__ import annotations

import hashlib

import torch

from kernelgen.verify.protocol import Span


def span(t: torch.Tensor) -> Span:
    """The whole storage under a tensor: two tensors share memory when their spans overlap."""
    s = t.untyped_storage()
    return Span(ptr=s.data_ptr(), nbytes=s.nbytes())


def overlaps(a: Span, b: Span) -> bool:
    if a.nbytes == 0 or b.nbytes == 0:
        return False
    return a.ptr < b.ptr + b.nbytes and b.ptr < a.ptr + a.nbytes


def _signed(x: int) -> int:
    return x - (1 << 64) if x >= 1 << 63 else x


# splitmix64's constants; two independent streams of weights.
_GOLDEN = _signed(0x9E3779B97F4A7C15)
_MIX1, _MIX2 = _signed(0xBF58476D1CE4E5B9), _signed(0x94D049BB133111EB)
_STREAMS = (_signed(0x2545F4914F6CDD1D), _signed(0x5851F42D4C957F2D))


def _weights(n: int, stream: int, device: torch.device) -> torch.Tensor:
    """One pseudo-random odd int64 weight per position (splitmix64 of the index, wrapping)."""
    z = torch.arange(n, dtype=torch.int64, device=device) * _GOLDEN + stream
    z = (z ^ (z >> 30)) * _MIX1
    z = (z ^ (z >> 27)) * _MIX2
    return (z ^ (z >> 31)) | 1


def storage_digest(t: torch.Tensor, device: str | torch.device | None = None) -> str:
    """A digest of every byte of the tensor's storage (padding of a strided view included), so
    an input is 'untouched' only if nothing under it changed. Computed where the tensor lives (or
    on `device`): sha256 on the CPU; on a GPU, `fingerprint`, a few passes over the storage
    instead of a copy to the host and a sha256 there (that route took 9.3 s of the runner's
    22.7 s in a softmax verify on the H200, profiled). Both sides of a comparison compute it
    on the same device type. (No digest computed in the
    candidate's process holds against a candidate that could forge it: that is the static
    rules' job.)"""
    storage = t.untyped_storage()
    raw = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)
    if device is not None:
        raw = raw.to(device)
    if raw.device.type == "cpu":
        return "sha256:" + hashlib.sha256(raw.numpy().tobytes()).hexdigest()
    return fingerprint(raw)


def fingerprint(raw: torch.Tensor) -> str:
    """Two sums, mod 2**64, of the bytes' 32-bit words times odd position-dependent weights: a
    change of any one word always changes both; an accidental change of several leaves both
    equal with odds of about 2**-128. Integer arithmetic only, so it is the same on any device."""
    n = raw.numel()
    body = n - n % 4
    words = torch.cat([raw[:body].view(torch.int32).to(torch.int64), raw[body:].to(torch.int64)])
    # One read back to the host for both sums.
    sums = torch.stack(
        [(words * _weights(words.numel(), s, words.device)).sum() for s in _STREAMS]
    ).tolist()
    return f"fp{n}:" + "".join(f"{s & ((1 << 64) - 1):016x}" for s in sums)
