"""Facts about a tensor's memory that both sides of verification compute the same way, the
copies the judge runs a reference on, and how much of torch's device cache either side keeps."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

import torch

from kernelgen.verify.protocol import Shared, Span, TensorMeta

# Device memory a process (the judge's, a runner's) may keep cached by torch but unused. A limit
# case leaves GBs in torch's cache (its borrowed inputs, the outputs once the judge has let them
# go), memory the other judges' limit cases need: on an H100 four runners kept 18-29 GiB each
# after theirs. Past this, the cache is given back; below, it is kept (emptying syncs the GPU).
CACHED_BYTES = 1 << 30


def give_back_cache(device: str | torch.device | None = None) -> None:
    """Return torch's cached, unused device memory to the GPU where more than CACHED_BYTES of it
    is held, so the other processes on the GPU can have it."""
    if torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device) > CACHED_BYTES:
        torch.cuda.empty_cache()


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


# Words per pass of `fingerprint`: its int64 temporaries take 8 bytes a word, several at once,
# so a storage of GBs (a limit case's input) is digested a slice at a time, its temporaries
# 128 MB each whatever the storage's size.
_SLICE = 1 << 24


def _weights(n: int, stream: int, device: torch.device, start: int = 0) -> torch.Tensor:
    """One pseudo-random odd int64 weight per position from `start` on (splitmix64 of the
    index, wrapping)."""
    z = torch.arange(start, start + n, dtype=torch.int64, device=device) * _GOLDEN + stream
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
    words = raw[:body].view(torch.int32)
    # The words, then each byte past the last whole word, weighted by position. The sums wrap
    # mod 2**64 whatever the order of their terms, so slice by slice they are the same; kept on
    # the device, one read back to the host for both.
    parts = [(start, words[start : start + _SLICE]) for start in range(0, words.numel(), _SLICE)]
    parts.append((words.numel(), raw[body:]))
    total = torch.zeros(len(_STREAMS), dtype=torch.int64, device=raw.device)
    for start, part in parts:
        wide = part.to(torch.int64)
        total += torch.stack(
            [(wide * _weights(wide.numel(), s, wide.device, start)).sum() for s in _STREAMS]
        )
    sums = total.tolist()
    return f"fp{n}:" + "".join(f"{s & ((1 << 64) - 1):016x}" for s in sums)


def whole(t: torch.Tensor, device: str | torch.device) -> torch.Tensor:
    """`t` on `device` with its storage whole (a strided view keeps its padding and offset), as
    torch.save and torch.load would carry it; `Tensor.to` would make it dense. No copy when it is
    on `device` already."""
    storage = t.untyped_storage()
    raw = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage).to(device)
    return _view(
        raw.untyped_storage(), t.dtype, list(t.shape), list(t.stride()), t.storage_offset()
    )


def lend(t: torch.Tensor) -> Shared:
    """A CUDA tensor's storage, lent by IPC handle. Each loan is counted once: lend again for
    every borrow (torch releases one count when the borrower's copy of the handle is dropped)."""
    (device, handle, nbytes, offset_bytes, counter, counter_offset, event, sync) = (
        t.untyped_storage()._share_cuda_()
    )
    return Shared(
        device=device,
        handle=_b64(handle),
        nbytes=nbytes,
        offset_bytes=offset_bytes,
        ref_counter=_b64(counter),
        ref_counter_offset=counter_offset,
        event=_b64(event),
        event_sync=sync,
        dtype=str(t.dtype).removeprefix("torch."),
        shape=list(t.shape),
        stride=list(t.stride()),
        offset=t.storage_offset(),
    )


def borrow(s: Shared, pick: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """A copy, in this process's own memory, of a lent tensor (the whole storage, then the view);
    the handle is dropped before this returns, which ends the loan. With `pick`, a copy of only
    what it takes of the lent view: a limit case's sampled rows of an output of GBs, where a
    whole copy doubled the GBs on the GPU (an H100 with four judges: softmax's 4 GiB output
    could not be read back)."""
    dtype = getattr(torch, s.dtype)
    if s.nbytes == 0:  # torch lends no handle for an empty storage
        empty = torch.empty(0, dtype=torch.uint8, device=f"cuda:{s.device}").untyped_storage()
        view = _view(empty, dtype, s.shape, s.stride, s.offset)
        return view if pick is None else pick(view)
    lent = torch.UntypedStorage._new_shared_cuda(
        s.device,
        base64.b64decode(s.handle),
        s.nbytes,
        s.offset_bytes,
        base64.b64decode(s.ref_counter),
        s.ref_counter_offset,
        base64.b64decode(s.event),
        s.event_sync,
    )
    if pick is not None:
        part = pick(_view(lent, dtype, s.shape, s.stride, s.offset)).clone()
        torch.cuda.current_stream().synchronize()  # copied before the lender may reuse it
        del lent
        return part
    own = torch.empty(s.nbytes, dtype=torch.uint8, device=f"cuda:{s.device}")
    own.untyped_storage().copy_(lent)
    torch.cuda.current_stream().synchronize()  # the copy is done before the lender may reuse it
    del lent
    return _view(own.untyped_storage(), dtype, s.shape, s.stride, s.offset)


def _view(
    storage: torch.UntypedStorage,
    dtype: torch.dtype,
    shape: list[int],
    stride: list[int],
    offset: int,
) -> torch.Tensor:
    return torch.empty(0, dtype=dtype, device=storage.device).set_(storage, offset, shape, stride)


def _b64(raw: bytes | None) -> str:
    return base64.b64encode(raw or b"").decode()


def meta(args: list[Any]) -> list[TensorMeta | float | int | bool]:
    """A call's arguments as a layout: each tensor's shape, strides, offset, storage and dtype
    (what a compile depends on, without its values); the scalars as they are."""
    out: list[TensorMeta | float | int | bool] = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(
                TensorMeta(
                    shape=list(a.shape),
                    stride=list(a.stride()),
                    offset=a.storage_offset(),
                    storage=a.untyped_storage().nbytes() // max(1, a.element_size()),
                    dtype=str(a.dtype).removeprefix("torch."),
                )
            )
        else:
            out.append(a)
    return out


def upcast(args: list[Any]) -> list[Any]:
    """Float64 copies of the floating-point tensors, copies of the others: never an argument
    itself (a float64 input's .double() is), which a reference that writes its inputs would
    change under the candidate."""
    return [
        a.to(torch.float64, copy=True) if isinstance(a, torch.Tensor) and a.is_floating_point()
        else a.clone() if isinstance(a, torch.Tensor)
        else a
        for a in args
    ]  # fmt: skip


def copies(args: list[Any]) -> list[Any]:
    """The arguments as they are, in fresh memory: what a reference may write."""
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
