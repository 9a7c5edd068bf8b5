"""What every generated operator shares at run time: tuned configs, provenance, op registration,
dispatch by measured crossover, and the hook that makes its kernels launch lean (_launch.py).

Hand-written and shipped with the library (`kernelgen promote` copies it along, never rewrites
it). Imports torch, triton and the standard library only.

Tuned configs live in configs/<op>.json, one file per operator:

    {"op": "softmax", "sha256": "<hash of the source the tables were tuned for>",
     "default": {"num_warps": 4},
     "devices": {"NVIDIA H200|triton-3.6.0": {"4096x4096": {"num_warps": 8}, ...}}}

A table is keyed "<device name>|triton-<version>" because a config tuned under one Triton version
may not even compile under another; a device tuned under some other Triton version still gets its
own table (the newest one) rather than the defaults, since block shapes age better than defaults
do. Bucket keys are the operator's dims rounded up to powers of two, joined by "x".
"""

import functools
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import torch
import triton

from . import _launch, _plans

_HERE = Path(__file__).resolve().parent
# Triton decides between compiling and interpreting when a kernel is decorated, i.e. when the
# operator modules are imported; reading the variable once here gives the same answer.
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
# The key of the table used off CUDA (CPU under the interpreter): always the defaults.
_NO_DEVICE = -1

Config = dict[str, Any]


def _read_json(path: Path) -> Any:
    with path.open() as f:
        return json.load(f)


@functools.cache
def load_configs(op: str) -> dict[str, Any]:
    """configs/<op>.json, read once per process."""
    path = _HERE / "configs" / f"{op}.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"kernelgen_ops: {path} is missing; re-run `kernelgen promote {op}`"
        )
    data = _read_json(path)
    return {
        "default": dict(data.get("default") or {}),
        "devices": dict(data.get("devices") or {}),
        "dispatch": dict(data.get("dispatch") or {}),
    }


def default_config(op: str) -> Config:
    """The config for shapes and devices nobody tuned: the candidate's own DEFAULT_CONFIG."""
    return load_configs(op)["default"]


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("."):
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def select_table(
    devices: Mapping[str, Mapping[str, Config]], device_name: str, triton_version: str
) -> dict[str, Config]:
    """The bucket table for a device: exact Triton version, else the device's newest, else {}."""
    exact = devices.get(f"{device_name}|triton-{triton_version}")
    if exact is not None:
        return dict(exact)
    same_device = [k for k in devices if k.split("|triton-")[0] == device_name]
    if not same_device:
        return {}
    newest = max(same_device, key=lambda k: _version(k.split("|triton-")[-1]))
    return dict(devices[newest])


def nearest_bucket(table: Mapping[str, Config], dims: tuple[int, ...]) -> str:
    """The key of `table` nearest to `dims` in log2 space (dims rounded up to powers of two)."""
    return min(table, key=lambda key: _distance(key, dims))


def _distance(key: str, dims: tuple[int, ...]) -> float:
    """log2 steps between a bucket key and `dims` (rounded up to powers of two), summed."""
    want = [math.log2(triton.next_power_of_2(max(int(d), 1))) for d in dims]
    return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))


@functools.cache
def _cuda() -> bool:
    """torch.cuda.is_available(), asked once: it reads the environment and asks the driver on
    every call (about 1 us), and its answer does not change within a process."""
    return torch.cuda.is_available()


def _device_index() -> int:
    if INTERPRET or not _cuda():
        return _NO_DEVICE
    # torch._C's own getter where there is one (what torch.cuda.current_device() calls after
    # three Python checks): a routed torch call asks on every call.
    return _launch._current_device()


@functools.cache
def _table(op: str, index: int) -> dict[str, Config]:
    if index == _NO_DEVICE:
        return {}
    name = torch.cuda.get_device_name(index)
    return select_table(load_configs(op)["devices"], name, triton.__version__)


class TunedTable(Mapping[str, Config]):
    """An operator's bucket table for the current device, resolved on first use, not at import.

    Promotion replaces a candidate's literal `TUNED = {...}` with one of these, so the candidate's
    own lookup keeps working unchanged while the numbers come from configs/<op>.json. Resolving
    lazily keeps `import kernelgen_ops` from initialising CUDA; each device index is resolved
    once. Candidates cache their lookups per shape, so this is reached on cache misses only.
    """

    def __init__(self, op: str) -> None:
        self.op = op

    def _current(self) -> dict[str, Config]:
        return _table(self.op, _device_index())

    def __getitem__(self, key: str) -> Config:
        return self._current()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def __repr__(self) -> str:
        return f"TunedTable({self.op!r})"


def tuned(op: str) -> TunedTable:
    return TunedTable(op)


@functools.cache
def config_lookup(op: str, index: int | None = None) -> Callable[..., Config]:
    """A cached `dims -> config` function for one device, for candidates without their own.

    `index` None means the current device at the time of this call.
    """
    table = _table(op, _device_index() if index is None else index)
    default = default_config(op)

    @functools.lru_cache(maxsize=256)
    def lookup(*dims: int) -> Config:
        return table[nearest_bucket(table, dims)] if table else default

    return lookup


# ---- dispatch by measured crossover ---------------------------------------------------------
#
# configs/<op>.json's "dispatch" holds, per device (keyed like the tuned tables), one entry per
# benchmark shape of the promoted kernel's record, under its bucket key:
#     {"shape": "256x151936", "kernel_us": 742.0, "torch_us": 94.4, "kernel": false}
# (per-call cost: the larger of device time and host time per back-to-back call, so a decode
# shape whose kernel is quick but whose launch is slow counts as lost). A call takes the kernel
# where the nearest measured bucket says it won (at a launch-bound bucket, still on a slower
# host: _wins_on_a_slow_host), torch's op where it lost. Where there is no
# evidence (another device, or a shape further than MAX_DISTANCE from every measured bucket), a
# routed torch call keeps torch's op and a direct call to kernelgen_ops.<op> takes the kernel:
# enable() never makes a model slower on a guess, and a direct call does what it says.
#
# Inside a CUDA graph (decode steps captured by SGLang or vLLM, torch.compile's reduce-overhead)
# a call costs its device time alone, so the answer above, which weighs host time at decode
# shapes, leaves wins out: on the H200, inside a graph, softmax 1x32000 takes 5.5 us in the
# kernel and 13.0 in torch's op, a routed F.rms_norm 1x4096 2.1 against 7.9, router_gemm
# 16x192x4096 4.9 against 15.4 (evaluations/logs/h200-20261204-graph-dispatch-library-bench).
# The library does not ask on each call whether the stream captures: asking cost a routed
# F.rms_norm 1.5-6.6 us of host time a call there (same logs). A process whose steps run as
# CUDA graphs says so instead: set_dispatch("device") (or KERNELGEN_OPS_DISPATCH=device) judges
# every row by device time alone (takes_kernel_on_device), from the warm-up on, so the capture
# finds its kernels loaded.

MODES = ("measured", "device", "kernel", "torch")
MAX_DISTANCE = 2.0  # log2 steps, summed over the bucket's dims: a factor 4 in one dim
_mode = os.environ.get("KERNELGEN_OPS_DISPATCH", "measured")
if _mode not in MODES:
    raise ValueError(f"kernelgen_ops: KERNELGEN_OPS_DISPATCH={_mode!r}; expected one of {MODES}")


def set_dispatch(mode: str) -> None:
    """'measured' (the default: the table decides), 'device' (the table decides by device time
    alone: for steps run as CUDA graphs; set it before their warm-up), 'kernel' (always the
    generated kernel) or 'torch' (always torch's op), for every operator;
    KERNELGEN_OPS_DISPATCH sets it at import."""
    global _mode
    if mode not in MODES:
        raise ValueError(f"kernelgen_ops.set_dispatch: {mode!r}; expected one of {MODES}")
    _mode = mode
    forget_routed()  # a routed call's kept answers were the old mode's


def dispatch_mode() -> str:
    return _mode


@functools.cache
def _dispatch(op: str, index: int) -> dict[str, dict[str, Any]]:
    if index == _NO_DEVICE:
        return {}
    name = torch.cuda.get_device_name(index)
    return select_table(load_configs(op)["dispatch"], name, triton.__version__)


@functools.lru_cache(maxsize=4096)
def kernel_won(
    op: str, index: int, dims: tuple[int, ...], routed: bool = False, device: bool = False
) -> bool | None:
    """Whether the kernel beat torch's op at the measured bucket nearest `dims` on device
    `index`; None without evidence there. Cached per exact dims (one lookup per call), and
    behind that per dims rounded up to powers of two, which is all the answer depends on: a
    workload of many sizes (prefill lengths) costs a rounding per new size, not a search.

    Where the table counted host time (launch-bound shapes), the row is judged again as on a
    slower host, and `routed` (a torch call under enable()/use()) adds the route's cost to the
    kernel's call (_wins_on_a_slow_host). `device`: by device time alone (set_dispatch's
    "device" mode: takes_kernel_on_device)."""
    buckets = tuple(triton.next_power_of_2(max(int(d), 1)) for d in dims)
    return _won_at(op, index, buckets, routed, device)


@functools.cache
def _won_at(
    op: str, index: int, buckets: tuple[int, ...], routed: bool, device: bool
) -> bool | None:
    table = _dispatch(op, index)
    if not table:
        return None
    key = nearest_bucket(table, buckets)
    if _distance(key, buckets) > MAX_DISTANCE:
        return None
    row = table[key]
    return takes_kernel_on_device(row, routed) if device else takes_kernel(row, routed)


def takes_kernel(row: Mapping[str, Any], routed: bool) -> bool:
    """A dispatch row's answer: the kernel where it won, and at a launch-bound row where it
    still wins on a slower host (with the route's cost, for a routed call)."""
    return row["kernel"] and (not row.get("host_included") or _wins_on_a_slow_host(row, routed))


def takes_kernel_on_device(row: Mapping[str, Any], routed: bool) -> bool:
    """A dispatch row's answer by device time alone, as inside a CUDA graph, where neither a
    call's host time nor the route's is paid: the kernel where its device time beat torch's
    op's by the margin. A launch-bound row from before the kernel's device time was kept has
    no such evidence: takes_kernel's answer."""
    if not row.get("host_included"):
        return row["kernel"]  # its figures are device times already
    kernel, torch_op = row.get("kernel_device_us"), row.get("torch_device_us")
    if kernel is None or torch_op is None:
        return takes_kernel(row, routed)
    return kernel < torch_op * (1 - DISPATCH_MARGIN)


# At a launch-bound row (host_included: the figures are host time, back-to-back calls) the
# kernel's figure is its Python call, which a slow spell of the host stretches, while torch's
# op, where its device time decided its figure, costs the same. On the H200's host the public
# call forced onto the kernel took 7.9 us a call, and 12.8 a few minutes later (softmax 1x32000;
# rms_norm 1x4096: 9.2 and 15.2, torch's F.rms_norm 10.1 and 16.2, while torch.softmax stayed at
# its device time, 11.0 and 11.2: scripts/host_overhead.py, 2026-12-04, calls 1 and 4 of
# evaluations/logs/h200-20261204-softmax-remeasure-routed-bench), and
# the library bench saw the same call at 9.5 and 14.8 us. So a launch-bound row is judged as on
# a host slower by HOST_SLOWDOWN, the worst measured (15.24 / 9.22), rounded up: the kernel's
# figure scaled by it, torch's too where its host time decided it, and a routed call adds the
# route's cost. (No shipped row answers differently at 1.65, the value the bench record
# evaluations/library/bench-20261204T151615Z.json was measured under; checked on CPU, 2026-12-04.)
HOST_SLOWDOWN = 1.66
# What a routed call to the kernel costs on top of the public call's (the route, its checks,
# one more frame), in us of host time. On the H200's host, 2026-12-04: 2.6-5.6 us
# (scripts/host_overhead.py, routed_kernel_minus_plain less public_minus_eager, softmax and
# rms_norm at their first two decode shapes; call 1 of the log
# h200-20261204-softmax-remeasure-routed-bench), 3.1-7.2 earlier that day (call 4 of
# h200-20261204-host-floor-before-after), and up to 9.9 us (scripts/bench_library.py, routed
# against kernelgen_ops at softmax 64x151936): the worst, rounded up.
ROUTED_KERNEL_US = 10.0
DISPATCH_MARGIN = 0.02  # promotion's floor (kernelgen.package.DISPATCH_MARGIN)


def _wins_on_a_slow_host(row: Mapping[str, Any], routed: bool) -> bool:
    """At a launch-bound row: whether the kernel's call (plus the route's, for a routed call)
    beats torch's op by the margin on a host HOST_SLOWDOWN times slower than the one measured.
    torch's op costs its host time scaled as well where that decided its figure (rms_norm's
    decode shapes: 18.3 us against 6.8 on the device), else its device time, which no host
    moves (softmax 1x32000: 12.9 us; the kernel's 9.7 would be 16.1, and torch's op takes the
    call; 1x151936: 39.2 against the kernel's 18.4, 30.5 on the slow host). A row from before
    the device time was kept (no torch_device_us): the kernel for a direct call, as the row
    says; torch's op for a routed one."""
    torch_device = row.get("torch_device_us")
    if torch_device is None:
        return not routed
    torch_us = row["torch_us"]
    torch_slow = torch_us * HOST_SLOWDOWN if torch_us > torch_device else torch_device
    kernel_slow = row["kernel_us"] * HOST_SLOWDOWN + (ROUTED_KERNEL_US if routed else 0.0)
    return kernel_slow <= torch_slow * (1 - DISPATCH_MARGIN)


# op -> {routed_key(shape): routed_to_torch's answer}. Every routed call asks that
# first, so its route looks a repeat shape up here itself (_routing, one dict lookup on the call's
# path) and calls routed_to_torch only for a new one. The answers are the mode's: set_dispatch
# drops them. Bounded: past the bound a new shape is answered, not kept.
ROUTED_KEPT: dict[str, dict[tuple, bool]] = {}
_ROUTED_KEPT_MAX = 4096


def routed_key(shape: torch.Size) -> torch.Size | tuple:
    """The key of ROUTED_KEPT[op] for a call of this shape now (_routing builds it inline): the
    shape itself where every device picks the same table, else (device index, shape)."""
    return shape if one_table() else (_device_index(), shape)


@functools.cache
def one_table() -> bool:
    """Every device this process sees picks the same tables (one GPU model, or no GPU): then a
    routed call's kept answer needs no device index, which costs 0.37 us a call to ask on the
    H200's host (scripts/host_overhead.py's step_device_index_us, 2026-12-03)."""
    if INTERPRET or not _cuda():
        return True
    return len({torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())}) <= 1


def routed_to_torch(op: str, shape: torch.Size) -> bool:
    """use_torch(op, dims, routed=True) for softmax's and rms_norm's routes, from the shape of
    their input (the dims are its rows and last dimension, _contracts.dims_softmax), kept in
    ROUTED_KEPT[op]; the routes ask nothing more of the table. False for a 0-d shape or traced
    sizes, never kept: the route's own checks turn such calls away (a 0-d tensor, tracing)."""
    if not shape or type(shape[-1]) is not int:
        return False
    kept = ROUTED_KEPT.setdefault(op, {})
    key = routed_key(shape)
    answer = kept.get(key)
    if answer is None:
        answer = use_torch(op, rows_and_width(shape), routed=True)
        if len(kept) < _ROUTED_KEPT_MAX:
            kept[key] = answer
    return answer


def forget_routed() -> None:
    """Drop routed_to_torch's kept answers (a test that changes configs/ or the device)."""
    for kept in ROUTED_KEPT.values():
        kept.clear()


def rows_and_width(shape: torch.Size) -> tuple[int, int]:
    """The rows and the last dimension of a tensor of this shape: the dims softmax's and
    rms_norm's tables are keyed by (_contracts.dims_softmax)."""
    cols = shape[-1]
    return (math.prod(shape) // max(cols, 1), cols)


def use_torch(op: str, dims: tuple[int, ...], routed: bool) -> bool:
    """Whether this call goes to torch's op instead of the kernel (see above). Per call: the
    mode, the current device, one cached lookup; configs/ and the device name are read once."""
    if _mode == "kernel" or _mode == "torch":
        return _mode == "torch"
    won = kernel_won(op, _device_index(), dims, routed, _mode == "device")
    if won is None:
        return routed
    return not won


def lean_launches(namespace: dict[str, Any]) -> None:
    """Called by the last line of each operator module: its launched @triton.jit kernels launch
    through _launch.LeanKernel (Triton's path for a specialization's first launch, its compiled
    kernel directly after that), and its host code calls triton.cdiv / next_power_of_2 as plain
    functions (_launch.host_helpers); with KERNELGEN_OPS_PLANS=1, its launcher replays launch
    plans (_plans.py)."""
    _launch.install(namespace)
    _launch.host_helpers(namespace)
    _plans.install(namespace)


@functools.lru_cache(maxsize=1)
def manifest() -> dict[str, Any]:
    """MANIFEST.json: the provenance of every operator, read once."""
    return _read_json(_HERE / "MANIFEST.json")


def available() -> dict[str, dict[str, Any]]:
    # A fresh copy each call, so a caller editing the answer cannot edit the cache.
    ops = json.loads(json.dumps(manifest()["ops"]))
    for op, entry in ops.items():
        entry["dispatch"] = json.loads(json.dumps(load_configs(op)["dispatch"]))
    return ops


def register(
    op: str, impl: Callable[..., torch.Tensor], fake: Callable[..., torch.Tensor]
) -> torch._ops.OpOverload:
    """Register `impl` as the torch custom op kernelgen_ops::<op>, with `fake` for tracing.

    The schema is inferred from impl's annotations. The op never mutates its inputs (the verifier
    checks that bitwise), so torch.compile may reorder and deduplicate calls to it.
    """
    custom = torch.library.custom_op(f"kernelgen_ops::{op}", impl, mutates_args=())
    custom.register_fake(fake)
    return getattr(torch.ops.kernelgen_ops, op).default
