"""What memory a candidate's call finds: the buffers the guard sees it allocate, and on CUDA the
device memory freed before the call (every block the caching allocator holds for reuse).

The judge draws a family and a seed for every call from the run's seed (verdict.py), so no
constant tells a judged call from a plain one:
- a poison (`nan`, `inf`, `large`, `bits`): an output entry the kernel never writes holds NaN,
  an infinity, a large finite value (about 2^115 in fp32 and bf16, 32768 and more in fp16, 256
  and more in e4m3), or random bits whose exponent's top bit is set (|v| >= 2, inf or NaN);
  each fails the value check wherever the reference is of an ordinary size, so the family a
  kernel might learn by reading its output tells it nothing it can use;
- `random`: finite values (normal or uniform, of a scale drawn from 1e-2 to 1e2) or zeros, as a
  kernel's own writes or a fresh buffer in production would hold: a kernel that writes only
  where its output looks poisoned, or that behaves otherwise on memory that looks fresh, shows.
The draw is made on the judge's side and reaches this process with the call that uses it.

Freed device memory has no dtype: it is filled with byte patterns that read as the family in
every floating-point format (0xff is NaN in each; see `_bytes`). The CPU has no caching
allocator to flood: there only the guard's fills apply.
"""

from __future__ import annotations

import math

import torch

POISONS = ("nan", "inf", "large", "bits")
# The poisons a call under the CUDA profiler draws from: each fills a buffer with one fill_
# kernel, which the profiler's check knows as a fill (answers.profiled). The other families
# launch random and arithmetic kernels that it would count as the candidate's foreign work
# (on the H200 every shipped kernel was rejected so, "distribution_elementwise_grid_stride").
PROFILED = ("nan", "inf")
RANDOM_SCALE = (1e-2, 1e2)
_POISON_INT = -0x5A5A
# The CUDA caching allocator's small pool serves requests up to 1 MiB from 2 MiB segments; a
# larger request goes to the large pool, so a free small block is retaken 1 MiB at a time.
SMALL_REQUEST = 1 << 20


class Draw:
    """The values of one call's fills: a generator per device, seeded by the judge."""

    def __init__(self, family: str, seed: int):
        self.family, self.seed = family, seed
        self._gens: dict[str, torch.Generator] = {}

    def gen(self, device: torch.device) -> torch.Generator:
        key = str(device)
        if key not in self._gens:
            self._gens[key] = torch.Generator(device).manual_seed(self.seed)
        return self._gens[key]

    def uniform(self, device: torch.device) -> float:
        """A host draw (a family's choices: a sign, a scale), from a CPU generator: on CUDA a
        device draw read back would launch a kernel and a copy inside the call."""
        del device  # the same draw on every device
        return float(torch.rand((), generator=self.gen(torch.device("cpu"))))


def fill(t: torch.Tensor, draw: Draw) -> None:
    """Fill a new allocation with the call's family, in its own dtype, in place: an output can
    be most of the device's memory."""
    if t.numel() == 0 or draw.family == "none":
        return
    if t.dtype == torch.bool:
        if draw.family == "random":
            t.random_(0, 2, generator=draw.gen(t.device))
        else:
            t.fill_(True)
        return
    if not (t.is_floating_point() or t.is_complex()):
        _fill_int(t, draw)
        return
    family = draw.family
    if family == "random":
        if t.element_size() == 1:  # 8-bit floats have no random kernels
            v = torch.empty(t.shape, device=t.device)
            _finite(v, draw)
            top = torch.finfo(t.dtype).max
            t.copy_(v.clamp_(-top, top))
        else:
            _finite(t, draw)
    elif family == "nan" or (family == "inf" and not _has_inf(t.dtype)):
        t.fill_(math.nan)  # e4m3fn has no infinity: a cast of one saturates to 448
    elif family == "inf":
        t.fill_(math.inf if draw.uniform(t.device) < 0.5 else -math.inf)
    else:  # large, bits: byte patterns that read so in every floating-point format
        _bytes(_raw(t), family, draw)


def _fill_int(t: torch.Tensor, draw: Draw) -> None:
    info = torch.iinfo(t.dtype)
    gen = draw.gen(t.device)
    if draw.family == "random":
        t.random_(-100, 100, generator=gen) if t.is_signed() else t.random_(0, 100, generator=gen)
    elif draw.family == "bits":
        _bytes(_raw(t), "bits", draw)
    elif draw.family in ("inf", "large"):
        t.fill_(info.max if draw.uniform(t.device) < 0.5 or info.min == 0 else info.min)
    else:
        t.fill_(_POISON_INT if info.min < _POISON_INT < info.max else 0xA5)


def _has_inf(dtype: torch.dtype) -> bool:
    return dtype not in (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)


def _raw(t: torch.Tensor) -> torch.Tensor:
    """The bytes of t's whole storage (a fresh allocation's own)."""
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())


def _finite(v: torch.Tensor, draw: Draw) -> None:
    """v filled in place: zeros, or normal or uniform values of a scale drawn log-uniformly from
    RANDOM_SCALE (within fp16's range), a third of the time each."""
    kind = draw.uniform(v.device)
    if kind < 1 / 3:
        v.zero_()
        return
    lo, hi = RANDOM_SCALE
    scale = math.exp(math.log(lo) + draw.uniform(v.device) * math.log(hi / lo))
    gen = draw.gen(v.device)
    if kind < 2 / 3:
        v.normal_(0.0, scale, generator=gen)
    else:
        v.uniform_(-scale, scale, generator=gen)


def _bytes(raw: torch.Tensor, family: str, draw: Draw) -> None:
    """Fill untyped bytes so that every floating-point format reads the family in them: the top
    bit under each format's sign is its exponent's top bit, and every byte gets the same bits.
      nan:    0xff, NaN in fp64, fp32, bf16, fp16, e4m3fn and e5m2 alike;
      inf:    bf16 +-inf (0x7f80, 0xff80): NaN as fp32, fp16 and e4m3 bytes of 0x7f or 0xff;
      large:  0b?1111 0?? per byte: fp32 and bf16 about 2^113 to 2^119, fp16 32768 to 65504,
              e4m3 256 to 352, e5m2 32768 to 57344, each with a random sign;
      bits:   random bytes with bit 6 set: every format's exponent has its top bit set;
      random: fp32 values as `_finite` draws them (random bits in a narrower format's view).
    Lengths that are not a multiple of 4 keep their last bytes as the bytes pattern allows."""
    n = raw.numel()
    if n == 0:
        return
    gen = draw.gen(raw.device)
    # In place, every one: the flood holds most of the free memory while it fills it.
    if family == "nan":
        raw.fill_(0xFF)
    elif family == "inf" and n % 2 == 0:
        words = raw.view(torch.int16).random_(0, 2, generator=gen)
        words.mul_(-0x8000).add_(0x7F80)  # 0x7f80, or 0xff80 (-128 as int16)
    elif family in ("large", "inf"):
        raw.random_(0, 256, generator=gen).bitwise_and_(0x83).bitwise_or_(0x78)
    elif family == "bits":
        raw.random_(0, 256, generator=gen).bitwise_or_(0x40)
    elif family == "random":
        body = n - n % 4
        _finite(raw[:body].view(torch.float32), draw)
        raw[body:].zero_()


def small_parts(free_blocks: list[int]) -> list[int]:
    """The requests that retake a small pool's free blocks (sizes in bytes, multiples of 512):
    at most SMALL_REQUEST each, largest first, so that the allocator's best fit hands out each
    block whole, or a piece of the block a larger part split, never a new segment."""
    parts: list[int] = []
    for size in free_blocks:
        whole, rest = divmod(size, SMALL_REQUEST)
        parts += [SMALL_REQUEST] * whole + ([rest] if rest else [])
    return sorted(parts, reverse=True)


def _free_blocks() -> tuple[list[int], list[int]]:
    """The sizes of the blocks the caching allocator holds free: (small pool, large pool)."""
    small: list[int] = []
    large: list[int] = []
    device = torch.cuda.current_device()
    for segment in torch.cuda.memory_snapshot():
        if segment.get("device", device) != device:
            continue
        sizes = [b["size"] for b in segment["blocks"] if b["state"] == "inactive"]
        (small if segment["segment_type"] == "small" else large).extend(sizes)
    return small, large


def flood(device: str, family: str, seed: int = 0, megabytes: int = 512) -> None:
    """Fill freed device memory (stale-memory defence): a large block the next large allocations
    are carved from, then every block of both pools the allocator holds free, each taken whole
    by a request of its size (the small pool's, which small scratch buffers and outputs come
    from, too), filled, and given back."""
    if device != "cuda" or family == "none":
        return
    draw = Draw(family, seed)
    free, _ = torch.cuda.mem_get_info()
    held: list[torch.Tensor] = []
    n = min(megabytes * 2**20, free // 4) // 512 * 512
    if n > 0:
        held.append(_take(n))
    small, large = _free_blocks()
    for size in sorted(large, reverse=True) + small_parts(small):
        held.append(_take(size))
    for block in held:
        _bytes(block, family, draw)
    del held


def _take(nbytes: int) -> torch.Tensor:
    return torch.empty(nbytes, dtype=torch.uint8, device="cuda")
