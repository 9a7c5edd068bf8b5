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


def storage_digest(t: torch.Tensor) -> str:
    """sha256 of every byte of the tensor's storage (padding of a strided view included), so an
    input is 'untouched' only if nothing under it changed."""
    raw = torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage().cpu())
    return hashlib.sha256(raw.numpy().tobytes()).hexdigest()
