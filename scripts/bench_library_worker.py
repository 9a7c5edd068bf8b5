"""One worker of scripts/bench_library.py: one group of implementations, every shape, one JSON
line per figure on stdout (anything else on stdout is passed on as a message).

    python scripts/bench_library_worker.py GROUP [--forced-max-cols N] OP...

GROUP kernelgen: kernelgen_ops.<op> (measured dispatch, and forced onto the kernel), torch eager,
torch.compile of eager, torch.<op> under kernelgen_ops.use(). GROUP liger / flaggems: that library
alone (eager runs too, as the reference its outputs are checked against, untimed). The serving
libraries' groups (scripts/peers: quack, flashinfer, sglang, vllm, scaled_mm, flashmla) likewise,
for the ops they have; each shape's arguments go through the peer's binder first (its layout,
its per-batch plan; not timed), and a serving peer none of whose APIs runs on a shape is tried
again on the next, so a peer that refuses some shapes (FlashMLA all but MLA's) still has figures
at the others.

Timing follows kernelgen's protocol (kernelgen/bench/timing.py): per implementation and shape, a
short graph probe sets the calls per replay, then GRAPH_REPLAYS replays of one CUDA graph, L2
flushed before each, inputs rotated over a pool of copies so no call reads what an earlier call
of the replay left in L2; the median replay over its calls is the device time. Host time: wall
/ calls of back-to-back calls, one synchronize at the end, in HOST_RUNS rounds that time every
implementation of the shape once each (host_rounds; eager twice); the median of its rounds.
Spreads are the trimmed range of the replays, or of the rounds, over the median
(timing.summarize): with eager's second timings, the noise the routed call is judged against.
Inductor compiles in this process (no compile workers left running beside the timing).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "scripts"))  # the peers package, also where loaded by path
# torch.compile's default pool of compile worker processes stays alive after the compile, and
# the host timings of this process would share the CPUs with it.
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import peers  # noqa: E402
import torch  # noqa: E402

from kernelgen.bench import timing  # noqa: E402
from kernelgen.bench.worker import disagreement  # noqa: E402
from kernelgen.spec import BenchShape, OpSpec, Tolerance, load_spec  # noqa: E402
from kernelgen.spec.inputs import make_inputs  # noqa: E402

DTYPE = "bfloat16"
DECODE_ROWS = (1, 16, 64)
DECODE_MAX_ROWS = max(DECODE_ROWS)
SEED = 20261201
# Host time decides the host target at launch-bound shapes, where a call costs ~10 us and one run
# of 200 calls moved by +-30% between shapes of one run (2026-12-03): there, at least 1000 calls
# a run, after a warm-up run. The rounds' trimmed range was still 0.36-0.63 of the median at
# rms_norm's decode shapes (H200, 2026-12-03, evaluations/logs/
# h200-20261203-library-bench-workers-host-overhead, call 2): 11 rounds, compared in pairs.
HOST_RUNS = 11
HOST_MIN_CALLS = 1000
HOST_MIN_CALLS_BELOW_US = 30.0  # device time per call under which the floor applies
ROUTABLE = ("softmax", "rms_norm")
# How far a peer's answer may be from eager's, per element, where its operator has no rule of its
# own: bf16 rounding's order, as the serving libraries round (a bf16 intermediate in FlagGems'
# fused_moe, bf16 probabilities in FlashInfer's decode). Twice the verifier's bf16 tolerance, the
# pipeline bench's re-check, rejects those near zero (references/fused_moe.py, decode_attn.py):
# a peer's speed is measured at its own precision, not dropped for it.
PEER_TOLERANCE = Tolerance(rtol=2e-2, atol=2e-2)


def emit(kind: str, **fields: Any) -> None:
    print(json.dumps({"kind": kind, **fields}), flush=True)


@dataclass
class Impl:
    """One implementation of one operator: `fn` takes the operator's arguments; `context` is
    entered around every use of it (a dispatch mode, routing); `per_shape` makes a fresh `fn`
    for each shape (torch.compile)."""

    name: str
    fn: Callable[..., Any] | None
    api: str | None = None
    error: str | None = None
    context: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
    path: Callable[..., str | None] = field(default=lambda *args: None)
    per_shape: Callable[[], Callable[..., Any]] | None = None
    bind: peers.Binder | None = None  # a serving peer's: the shape's call in its own layout


# ---------------------------------------------------------------- shapes and inputs


def shapes(spec: OpSpec) -> list[tuple[BenchShape, bool]]:
    """(shape, is decode): the added decode shapes first (they are the point of issue [H]), then
    the spec's benchmark shapes. Added: DECODE_ROWS rows at each width the spec benchmarks with
    DECODE_MAX_ROWS rows or fewer, those the spec lacks. A decode shape is one of few rows,
    added or the spec's own: both are judged on host time."""
    bench = list(spec.data.bench)
    out: list[tuple[BenchShape, bool]] = []
    width = [d for d in spec.data.bucket if d != "rows"]
    by_rows = "rows" in spec.data.bucket and len(width) == 1
    if by_rows:
        seen = {tuple(sorted(b.dims.items())) for b in bench}
        for cols in sorted({b.dims[width[0]] for b in bench if _few_rows(b)}):
            for rows in DECODE_ROWS:
                dims = {"rows": rows, width[0]: cols}
                if tuple(sorted(dims.items())) not in seen:
                    out.append((BenchShape(name=f"{rows}x{cols}", dims=dims, dtype=DTYPE), True))
    return out + [(b.model_copy(update={"dtype": DTYPE}), by_rows and _few_rows(b)) for b in bench]


def _few_rows(shape: BenchShape) -> bool:
    return shape.dims.get("rows", DECODE_MAX_ROWS + 1) <= DECODE_MAX_ROWS


def _width(shape: BenchShape) -> int:
    return max(v for k, v in shape.dims.items() if k != "rows")


# ---------------------------------------------------------------- implementations


@contextlib.contextmanager
def _dispatch(mode: str) -> Iterator[None]:
    import kernelgen_ops

    before = kernelgen_ops.dispatch_mode()
    kernelgen_ops.set_dispatch(mode)
    try:
        yield
    finally:
        kernelgen_ops.set_dispatch(before)


def kernelgen_impls(op: str, spec: OpSpec) -> list[Impl]:
    import kernelgen_ops
    from kernelgen_ops import _contracts, _runtime

    dims = getattr(_contracts, f"dims_{op}")

    def path(*args: Any) -> str:
        return "torch" if _runtime.use_torch(op, dims(*args), routed=False) else "kernel"

    public = getattr(kernelgen_ops, op)
    impls = [
        Impl("kernelgen_ops", public, api=f"kernelgen_ops.{op}", path=path),
        Impl(
            "kernelgen_ops[kernel]",
            public,
            api=f'kernelgen_ops.{op} under set_dispatch("kernel")',
            context=lambda: _dispatch("kernel"),
            path=path,
        ),
        Impl("eager", spec.eager, api=f"references/{op}.py:{spec.eager.__name__}"),
        # One compiled object per shape, static, after a reset, as kernelgen's bench peers are
        # made: one object across shapes is recompiled with dynamic shapes after the second and
        # hits dynamo's recompile limit, which timed softmax 32768x1024 at 2751 us against
        # eager's 55.5 (H200, this script, 2026-12-01).
        Impl(
            "compile",
            spec.eager,
            api="torch.compile(eager, dynamic=False), default mode, per shape",
            per_shape=lambda: _fresh_compile(spec.eager),
        ),
    ]
    if op in ROUTABLE:
        impls.append(
            Impl(
                "routed",
                spec.eager,
                api=f"eager under kernelgen_ops.use(include=['{op}'])",
                context=lambda: kernelgen_ops.use(include=[op]),
            )
        )
    return impls


def _halves(fn: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """A [gate | up] peer taking two tensors, called the way silu_and_mul(x) is."""

    def call(x: Any) -> Any:
        d = x.shape[-1] // 2
        return fn(x[..., :d], x[..., d:])

    return call


def _liger_candidates(op: str) -> list[tuple[str, Callable[[], Callable[..., Any]]]]:
    def softmax() -> Callable[..., Any]:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction

        return LigerSoftmaxFunction.apply

    def rms_norm() -> Callable[..., Any]:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        return lambda x, w, eps: LigerRMSNormFunction.apply(x, w, eps)

    def silu_and_mul() -> Callable[..., Any]:
        from liger_kernel.ops.swiglu import LigerSiLUMulFunction

        return _halves(LigerSiLUMulFunction.apply)

    return {
        "softmax": [("liger_kernel.ops.softmax.LigerSoftmaxFunction.apply(x)", softmax)],
        "rms_norm": [("liger_kernel.ops.rms_norm.LigerRMSNormFunction.apply(x, w, eps)", rms_norm)],
        "silu_and_mul": [
            ("liger_kernel.ops.swiglu.LigerSiLUMulFunction.apply(gate, up)", silu_and_mul)
        ],
    }.get(op, [])


def _flaggems_candidates(op: str) -> list[tuple[str, Callable[[], Callable[..., Any]]]]:
    import flag_gems

    def use_gems(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            with flag_gems.use_gems():
                return fn(*args)

        return call

    eager = load_spec(op).eager
    return {
        "softmax": [
            ("flag_gems.softmax(x, -1)", lambda: lambda x: flag_gems.softmax(x, -1)),
            ("flag_gems.ops.softmax(x, -1)", lambda: lambda x: flag_gems.ops.softmax(x, -1)),
            ("torch.softmax under flag_gems.use_gems()", lambda: use_gems(eager)),
        ],
        "rms_norm": [
            (
                "flag_gems.rms_norm(x, [cols], w, eps)",
                lambda: lambda x, w, eps: flag_gems.rms_norm(x, [x.shape[-1]], w, eps),
            ),
            ("F.rms_norm under flag_gems.use_gems()", lambda: use_gems(eager)),
        ],
        "silu_and_mul": [
            ("flag_gems.silu_and_mul(gate, up)", lambda: _halves(flag_gems.silu_and_mul)),
        ],
    }.get(op, [])


def peer_impl(group: str, op: str, args: list[Any], answer: Answer) -> Impl:
    """The first of the peer's candidate APIs that runs and agrees with eager on `args`."""
    if group in peers.FAMILIES:
        return family_impl(group, op, args, answer)
    candidates = _liger_candidates(op) if group == "liger" else _flaggems_candidates(op)
    if not candidates:
        return Impl(group, None, error=f"{group} has no {op}")
    reasons = []
    for api, make in candidates:
        try:
            fn = make()
            problem = answer.wrong(fn(*args))
        except Exception as e:  # a peer's failure is a figure, not the end of the run
            problem = timing.describe_error(e)
        if problem is None:
            return Impl(group, fn, api=api)
        reasons.append(f"{api}: {problem}")
    return Impl(group, None, error="; ".join(reasons))


def family_impl(group: str, op: str, args: list[Any], answer: Answer) -> Impl:
    """A serving peer's first API whose binder and call run on `args` and agree with the answer
    it is checked against (eager's, or the binder's own where the peer computes another
    problem); an Impl with the reasons of each where none does."""
    candidates = peers.candidates(group, op)
    if not candidates:
        return Impl(group, None, error=f"{group} has no {op}")
    reasons = []
    for api, make in candidates:
        try:
            bind = make()
            call = bind(args)
            problem = answer.of(call).wrong(call.fn(*call.args))
        except Exception as e:  # a peer's failure is a figure, not the end of the run
            problem = timing.describe_error(e)
        if problem is None:
            return Impl(group, None, api=api, bind=bind)
        reasons.append(f"{api}: {problem}")
    return Impl(group, None, error="; ".join(reasons)[:600])


def bound(impl: Impl, args: list[Any], answer: Answer) -> tuple[Impl, list[Any], Answer]:
    """The implementation, arguments and answer to time and check for one shape: a serving
    peer's binder run on the shape's arguments (its failure recorded as the shape's error)."""
    if impl.bind is None:
        return impl, args, answer
    try:
        call = impl.bind(args)
    except Exception as e:
        return replace(impl, error=timing.describe_error(e), bind=None), args, answer
    api = f"{impl.api} ({call.note})" if call.note else impl.api
    return replace(impl, fn=call.fn, api=api, bind=None), call.args, answer.of(call)


@dataclass(frozen=True)
class Answer:
    """What the calls of one shape are checked against (kernelgen.bench.worker.disagreement):
    `expected` by the operator's own rule where it has one and `posed` holds the reference's
    arguments that pose the problem (a GEMM's error against its operands' scale, index sets in
    any order, as kernelgen's candidates are judged), else per element within PEER_TOLERANCE."""

    spec: OpSpec
    shape: BenchShape
    expected: Any  # eager's answer, or a serving peer's own where it computes another problem
    posed: list[Any] | None

    def wrong(self, out: Any) -> str | None:
        """None when `out` is the answer; else what differs."""
        return disagreement(
            self.spec, self.shape, out, self.expected, self.posed, loose=PEER_TOLERANCE
        )

    def of(self, call: peers.Prepared) -> Answer:
        """A serving peer's call's answer: this one where it computes the reference's problem
        (in whatever layout), else the one its binder gives (fp8 operands requantized rowwise)."""
        if call.expected is None:
            return self
        return replace(self, expected=call.expected, posed=call.posed)


# ---------------------------------------------------------------- timing


def _fresh_compile(fn: Callable[..., Any]) -> Callable[..., Any]:
    import torch

    torch.compiler.reset()
    return torch.compile(fn, dynamic=False)


def measure(
    impl: Impl, args: list[Any], answer: Answer
) -> tuple[dict[str, Any], timing.Call | None]:
    """Device time of one implementation on one input set, and the call its host time is taken
    of (None where it raised or disagreed with eager)."""
    if impl.fn is None:
        return {"error": impl.error}, None
    fn = impl.per_shape() if impl.per_shape is not None else impl.fn
    with impl.context():
        try:
            problem = answer.wrong(fn(*args))  # the first call compiles
        except Exception as e:
            return {"error": timing.describe_error(e)}, None
        if problem:
            return {"error": problem, "api": impl.api}, None
        out: dict[str, Any] = {"api": impl.api, "path": impl.path(*args)}
        call = timing.rotating(fn, timing.graph_pool([args]))
        try:
            device, spread, n = graph_time(call)
            out |= {"device_us": device, "method": "graph", "calls_per_replay": n}
            out["device_spread"] = round(spread, 4)
        except Exception:  # not capturable (a sync, a host read): do_bench, as the protocol does
            out |= {"device_us": timing.bench_us(call), "method": "do_bench"}
    out["device_us"] = round(out["device_us"], 3)
    return out, call


def graph_time(call: timing.Call) -> tuple[float, float, int]:
    """Device time of a call (median, spread over the replays, calls per replay): a short graph
    probe sets the calls per replay, then one graph of that many is timed."""
    probe = timing.GraphTimer(call, timing.GRAPH_PROBE_CALLS)
    try:
        n = timing.graph_calls(probe.time_us(timing.GRAPH_PROBE_REPLAYS))
    finally:
        probe.close()
    graph = timing.GraphTimer(call, n)
    try:
        median, spread = timing.summarize(graph.samples_us())
    finally:
        graph.close()
    return median, spread, n


AGAIN = "eager:again"  # eager's second place in the host rounds


def host_rounds(timed: list[tuple[Impl, timing.Call, float]]) -> dict[str, list[float]]:
    """Host time of each round of each implementation of one shape: HOST_RUNS rounds, each
    timing every implementation once in an order that rotates by round, after a warm-up of each.
    A slow spell of the host (seconds long on the H200's) then falls on all of them instead of
    on whichever was being timed, and the routed call is compared with eager inside a round.
    Eager has two places in the rotation (AGAIN the second): their paired difference is what
    two timings of one call differ by in this protocol, the noise the routed call is judged
    against."""
    counts = {}
    for impl, call, device_us in timed:
        n = timing.host_calls(device_us)
        counts[impl.name] = max(n, HOST_MIN_CALLS) if device_us < HOST_MIN_CALLS_BELOW_US else n
        with impl.context():
            timing.host_us(call, counts[impl.name] // 10)  # the graph pool and streams settle
    by_name = {impl.name: (impl, call) for impl, call, _ in timed}
    if "eager" in by_name:
        by_name[AGAIN], counts[AGAIN] = by_name["eager"], counts["eager"]
    samples: dict[str, list[float]] = {name: [] for name in by_name}
    for r in range(HOST_RUNS):
        for name in timing.rotated(list(by_name), r):
            impl, call = by_name[name]
            with impl.context():
                samples[name].append(timing.host_us(call, counts[name]))
    return samples


# ---------------------------------------------------------------- the worker


def _version(dist: str | None) -> str | None:
    try:
        return importlib.metadata.version(dist) if dist else None
    except importlib.metadata.PackageNotFoundError:
        return None


def _available(group: str) -> bool:
    family = peers.FAMILIES.get(group)
    if family is not None:
        dist, module = family.dist, family.module
    else:
        dist = {"liger": "liger-kernel", "flaggems": "flag-gems"}.get(group)
        module = {"liger": "liger_kernel", "flaggems": "flag_gems", "kernelgen": "kernelgen_ops"}[
            group
        ]
    try:
        if family is not None:
            # Found, not imported: importing sglang starts its server runtime, which its kernel
            # modules do without (scripts/peers/sglang.py); what fails to import is recorded
            # per shape, by the API that needed it.
            found = importlib.util.find_spec(module)
            if found is None:
                raise ModuleNotFoundError(f"No module named '{module}'")
            where = f"from {found.origin or list(found.submodule_search_locations or [])}"
        else:
            imported = importlib.import_module(module)
            where = f"from {getattr(imported, '__file__', None)}"
    except Exception as e:  # missing or broken: recorded, the other groups still run
        reason = timing.describe_error(e)
        if group in peers.NOT_CARRIED:
            reason += f" ({peers.NOT_CARRIED[group]})"
        emit("availability", impl=group, available=False, reason=reason)
        return False
    if family is not None:
        # The versions that decide what runs besides the family's own (the CuTe-DSL under QuACK).
        also = [f"{d} {_version(d)}" for d in family.also if _version(d)]
        where = "; ".join([where, *also])
    emit("availability", impl=group, available=True, version=_version(dist), reason=where)
    return True


def missing(group: str, ops: list[str]) -> None:
    """A serving peer that is not there: one measurement per shape of each op it would have
    been timed on, its error why, so that the record ranks each op against it or says why not."""
    why = f"{group} not available"
    if group in peers.NOT_CARRIED:
        why += f": {peers.NOT_CARRIED[group]}"
    for op in ops:
        for shape, decode in shapes(load_spec(op)):
            emit(
                "measurement",
                op=op,
                shape=shape.name,
                dims=shape.dims,
                dtype=DTYPE,
                decode=decode,
                impl=group,
                error=why,
            )


def _environment() -> None:
    from kernelgen_ops import _launch, _plans

    from kernelgen.env import environment

    env = environment("cuda").model_dump()
    lean = _launch.ACTIVE and _launch.enabled()
    emit("environment", **env, lean_launches=lean, launch_plans=lean and _plans.enabled())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("group", choices=("kernelgen", "liger", "flaggems", *peers.FAMILIES))
    parser.add_argument("ops", nargs="+")
    parser.add_argument("--forced-max-cols", type=int, default=65536)
    a = parser.parse_args()
    if a.group == "kernelgen":
        _environment()
    if a.group in peers.FAMILIES:
        peers.add_pth_dirs()  # wheels installed with --target keep their .pth unread
        a.ops = [op for op in a.ops if peers.candidates(a.group, op)]
    if not _available(a.group):
        if a.group in peers.FAMILIES:
            missing(a.group, a.ops)
        return 0  # recorded as not available
    family = a.group in peers.FAMILIES
    with torch.inference_mode():
        for op in a.ops:
            spec = load_spec(op)
            impls = kernelgen_impls(op, spec) if a.group == "kernelgen" else None
            for shape, decode in shapes(spec):
                args = make_inputs(spec, shape, DTYPE, "normal", SEED, "cuda")
                answer = Answer(spec, shape, spec.eager(*args), args)
                # A peer: its API is chosen on the first shape; a serving peer's again on each
                # shape until one runs (FlashMLA refuses every head dim but 512 and 576).
                if impls is None or (family and impls[0].fn is None and impls[0].bind is None):
                    impls = [peer_impl(a.group, op, args, answer)]
                results = []  # (impl, head, figures, call): host times are taken together below
                for impl in impls:
                    head = {
                        "op": op,
                        "shape": shape.name,
                        "dims": shape.dims,
                        "dtype": DTYPE,
                        "decode": decode,
                        "impl": impl.name,
                    }
                    forced = impl.name == "kernelgen_ops[kernel]"
                    if forced and _width(shape) > a.forced_max_cols:
                        skipped = f"wider than --forced-max-cols {a.forced_max_cols}"
                        emit("measurement", **head, skipped=skipped)
                        continue
                    shaped, shaped_args, checked = bound(impl, args, answer)
                    results.append((shaped, head, *measure(shaped, shaped_args, checked)))
                timed = [(i, c, f["device_us"]) for i, _, f, c in results if c is not None]
                hosts = host_rounds(timed)
                for impl, head, figures, call in results:
                    if impl.name in hosts:
                        host, spread = timing.summarize(hosts[impl.name])
                        figures |= {"host_us": round(host, 3), "host_spread": round(spread, 4)}
                        figures["host_rounds_us"] = [round(x, 3) for x in hosts[impl.name]]
                    if impl.name == "eager" and AGAIN in hosts:
                        figures["host_again_rounds_us"] = [round(x, 3) for x in hosts[AGAIN]]
                    # Eager's device time once more, after every other implementation of the
                    # shape: how far one call's figure moves between two timings (the noise the
                    # routed call is judged against, with the replays' spread).
                    if impl.name == "eager" and figures.get("method") == "graph":
                        figures["device_again_us"] = round(graph_time(call)[0], 3)
                    emit("measurement", **head, **figures)
                del results, timed
                del args, answer
                torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
