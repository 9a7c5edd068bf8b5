"""KernelBench's criteria inside a sandboxed process, as the benchmark worker (bench/worker.py)
times contenders: the candidate loaded there (bench/contender.py), never in kernelgen's own
process. Two targets for `run_isolated`, each KbRequest in:

- `check_main` -> KbTrials: the problem's Model at its own size, built and fed as KernelBench's
  eval does (eval.py, run_and_check_correctness): torch.manual_seed(42), then 5 trial seeds drawn
  from it; per trial the seed, get_inputs(), the Model's forward, then the candidate on the same
  inputs and the Model's own parameters and buffers (the operator's contract passes them in),
  compared by torch.allclose at atol = rtol = tolerance. A call that raises, or an output of
  another shape, ends the trials there, as in KernelBench.
- `time_main` -> KbTimed: its timing (timing.py, time_execution_with_cuda_event): untimed warmup
  calls (3 for the candidate, 5 for the peers, as measure_ref_program_time takes), then timed
  trials, each after a device synchronize and a 256 MiB fill that flushes L2, between two CUDA
  events on the current stream, the first dropped; the mean is the figure. The peers are the
  Model in eager and under torch.compile (inductor, mode default), on the same inputs. Where
  KernelBench times the candidate and the reference in runs of their own, here the three take
  their trials in rounds, one trial each in turn: timed one after the other, whichever came
  first met the GPU as the lock left it (its clocks down from idle: nvidia-smi read 345 MHz on
  an idle H100) and the others a GPU warmed by it, a drift that a ratio of two means carries
  whole.

Float inputs and the Model are cast to the problem's dtype, as KernelBench casts to its
precision; integer inputs (targets, indices) keep theirs, as the operator's contract has them.
The comparison runs here, beside the candidate, as KernelBench runs it: kernelgen's verdict (its
judge, in a process of its own) is the trusted one, and this is the benchmark's figure beside it.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, NamedTuple

import torch

from kernelgen import gpulock
from kernelgen.bench.contender import load_entry
from kernelgen.bench.timing import describe_error
from kernelgen.kernelbench import jobs
from kernelgen.kernelbench.results import KbRequest, KbTimed, KbTimes, KbTiming, KbTrial, KbTrials
from kernelgen.spec import OpSpec, load_spec
from kernelgen.verify import checks, truth

CANDIDATE_WARMUP = 3
PEER_WARMUP = 5
DISCARD_FIRST = 1
# KernelBench's flag on a speedup over eager it finds hard to believe (eval.py).
EXCESSIVE = 10.0
GPU_MEMORY_FRACTION = 0.9


def _set_seed(seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def _cast(x: Any, dtype: torch.dtype, device: str) -> Any:
    if not isinstance(x, torch.Tensor):
        return x
    return x.to(device=device, dtype=dtype if x.is_floating_point() else x.dtype)


class _Problem:
    """The problem's module at its own size, its Model built as KernelBench builds it, and the
    Model's state in the order the operator takes it."""

    def __init__(self, spec: OpSpec, req: KbRequest):
        problem = spec.module.PROBLEM
        self.ns = problem.namespace(spec.data.sizes[0].dims)
        self.dtype_name = spec.data.dtypes[0]
        self.dtype = getattr(torch, self.dtype_name)
        self.device = req.device
        _set_seed(req.seed)
        init = [_cast(x, self.dtype, self.device) for x in self.ns["get_init_inputs"]()]
        _set_seed(req.seed)
        model = self.ns["Model"](*init)
        self.model = model.to(device=self.device, dtype=self.dtype)
        state = {**dict(self.model.named_parameters()), **dict(self.model.named_buffers())}
        self.params = [state[p.state].detach() for p in problem.plan.params]

    def inputs(self, seed: int) -> list[Any]:
        """get_inputs() under `seed`, drawn on the device they are used on: KernelBench draws
        them on the CPU and copies them over, which at level 1's own sizes (2^31 entries an
        input) made five trials take 112 s of the GPU's time on an H100
        (evaluations/logs/h100-20261206-kernelbench-memory). The same distributions; the
        values are the device generator's."""
        _set_seed(seed)
        with torch.device(self.device):
            return [_cast(x, self.dtype, self.device) for x in self.ns["get_inputs"]()]


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _leaves(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _trial(seed: int, ref: Any, out: Any, tolerance: float) -> KbTrial:
    refs, outs = _leaves(ref), _leaves(out)
    if len(refs) != len(outs):
        return KbTrial(
            seed=seed, passed=False, error=f"{len(outs)} outputs, the Model gives {len(refs)}"
        )
    passed, worst, means = True, 0.0, []
    for r, o in zip(refs, outs, strict=True):
        if not isinstance(o, torch.Tensor) or o.shape != r.shape:
            got = list(o.shape) if isinstance(o, torch.Tensor) else type(o).__name__
            return KbTrial(
                seed=seed,
                passed=False,
                error=f"Output shape mismatch: Expected {list(r.shape)}, got {got}",
            )
        try:
            # A block at a time: float64 differences of a billion-entry output whole are 26 GB.
            close, most, mean = checks.allclose_diff(r, o, tolerance, tolerance)
        except Exception as e:  # KernelBench counts a comparison that raises as a runtime error
            return KbTrial(seed=seed, passed=False, error=describe_error(e))
        passed &= close
        if r.numel():
            worst = max(worst, most)
            means.append(mean)
    mean = sum(means) / len(means) if means else 0.0
    return KbTrial(seed=seed, passed=passed, max_abs_diff=worst, mean_abs_diff=mean)


def run_check(req: KbRequest) -> KbTrials:
    from kernelgen.env import environment

    spec = load_spec(req.op)
    env = environment(req.device)
    problem = _Problem(spec, req)
    _, fn = load_entry(req.candidate, "kernelgen_kernelbench_candidate", spec.name)
    if isinstance(fn, str):
        return KbTrials(dtype=problem.dtype_name, trials=[], environment=env, load_error=fn)
    _set_seed(req.seed)
    seeds = [int(torch.randint(0, 2**32 - 1, (1,)).item()) for _ in range(req.trials)]
    trials: list[KbTrial] = []
    for seed in seeds:
        inputs = problem.inputs(seed)
        ref = problem.model(*inputs)
        _sync()
        try:
            out = fn(*inputs, *problem.params)
            _sync()
        except Exception as e:  # the candidate's error ends the trials, as in KernelBench
            trials.append(KbTrial(seed=seed, passed=False, error=describe_error(e)))
            break
        trial = _trial(seed, ref, out, req.tolerance)
        trials.append(trial)
        # Freed before the next trial draws its own: at level 1's largest sizes each set is
        # tens of GB, and two alive at once would double the trials' peak.
        del inputs, ref, out
        if trial.error is not None:
            break
    return KbTrials(dtype=problem.dtype_name, trials=trials, environment=env)


def _flush_l2() -> None:
    # 32 x 1024 x 1024 int64: 256 MiB written, past the H200's L2 (KernelBench's clear_l2_cache).
    dummy = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
    dummy.fill_(42)
    del dummy


def _event_trial(fn: Callable[..., Any], args: list[Any]) -> float:
    """One trial as time_execution_with_cuda_event takes it: ms between two CUDA events around
    one call, after a synchronize and an L2 flush."""
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    _flush_l2()
    start.record()
    fn(*args)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def _warm(fn: Callable[..., Any], args: list[Any], calls: int) -> None:
    for _ in range(calls):
        fn(*args)
        torch.cuda.synchronize()
    # What the warmup cached goes back before the trials (the rounds drop their first).
    torch.cuda.empty_cache()


class Contender(NamedTuple):
    name: str
    call: Callable[..., Any]
    args: list[Any]
    warmup: int


def in_rounds(
    contenders: list[Contender],
    trials: int,
    discard_first: int,
    warm: Callable[[Callable[..., Any], list[Any], int], None],
    trial: Callable[[Callable[..., Any], list[Any]], float],
    exclusive: Callable[[], Any] = nullcontext,
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Each contender's trials (ms), taken in rounds: every round times each contender still in
    it once, in the order given, and the first `discard_first` rounds are dropped. The first
    warmup call of each (its compile: torch.compile's graph, the candidate's kernels) runs before
    `exclusive` is entered, the rest of its warmup and all the rounds inside it. A contender that
    raises leaves the rounds with its error; the others' trials stand."""
    errors: dict[str, str] = {}
    times: dict[str, list[float]] = {c.name: [] for c in contenders}

    def guarded(c: Contender, step: Callable[[], Any]) -> Any:
        try:
            return step()
        except Exception as e:  # one implementation's failure leaves the others' figures
            errors[c.name] = describe_error(e)
            times.pop(c.name, None)
            return None

    for c in contenders:
        if c.warmup:
            guarded(c, lambda c=c: warm(c.call, c.args, 1))
    with exclusive():
        for c in contenders:
            if c.name in times and c.warmup > 1:
                guarded(c, lambda c=c: warm(c.call, c.args, c.warmup - 1))
        for r in range(trials + discard_first):
            for c in contenders:
                if c.name not in times:
                    continue
                ms = guarded(c, lambda c=c: trial(c.call, c.args))
                if ms is not None and r >= discard_first:
                    times[c.name].append(ms)
    return times, errors


def _stats(times: list[float]) -> KbTimes:
    return KbTimes(
        mean_ms=statistics.fmean(times),
        std_ms=statistics.pstdev(times),
        min_ms=min(times),
        max_ms=max(times),
        trials=len(times),
    )


def run_timing(req: KbRequest) -> KbTimed:
    from kernelgen.env import environment

    spec = load_spec(req.op)
    env = environment(req.device)
    problem = _Problem(spec, req)
    timing = KbTiming(
        warmup=CANDIDATE_WARMUP,
        trials=req.perf_trials,
        discard_first=DISCARD_FIRST,
        order="rounds",
    )
    _, fn = load_entry(req.candidate, "kernelgen_kernelbench_candidate", spec.name)
    inputs = problem.inputs(req.seed)
    params = problem.params
    if isinstance(fn, str):
        timing.errors["candidate"] = fn
        return KbTimed(timing=timing, environment=env)
    entry = fn
    torch._dynamo.reset()
    compiled = torch.compile(problem.model, backend="inductor", mode="default")
    contenders = [
        Contender("candidate", lambda *a: entry(*a, *params), inputs, CANDIDATE_WARMUP),
        Contender("eager", problem.model, inputs, PEER_WARMUP),
        Contender("compile", compiled, inputs, PEER_WARMUP),
    ]
    # The warmups' later calls and the rounds hold the GPU alone (kernelgen/gpulock.py).
    times, errors = in_rounds(
        contenders,
        req.perf_trials,
        DISCARD_FIRST,
        _warm,
        _event_trial,
        lambda: gpulock.exclusive("KernelBench's timing", req.op),
    )
    timing.errors.update(errors)
    for who, ms in times.items():
        setattr(timing, who, _stats(ms))
    cand = timing.candidate
    if cand is not None and cand.mean_ms > 0:
        if timing.eager is not None:
            timing.speedup_vs_eager = timing.eager.mean_ms / cand.mean_ms
            timing.excessive = timing.speedup_vs_eager > EXCESSIVE
        if timing.compile is not None:
            timing.speedup_vs_compile = timing.compile.mean_ms / cand.mean_ms
    return KbTimed(timing=timing, environment=env)


def _prepare(req: KbRequest) -> None:
    os.chdir(req.root)
    if req.device == "cuda":
        torch.cuda.set_per_process_memory_fraction(GPU_MEMORY_FRACTION)


def check_main(request: str) -> str:
    """Sandbox target: KbRequest JSON in, KbTrials JSON out."""
    req = KbRequest.model_validate_json(request)
    _prepare(req)
    # The trials run on the GPU beside other jobs' judges, never beside a timing (gpulock.py);
    # at a size whose truth a judge could not keep, as one judge of the host at a time, as the
    # judge holds that case (Truths.oversized): the Model's output and the candidate's, beside
    # their inputs, are tens of GB at level 1's largest.
    if req.device != "cuda":
        lock, alone = nullcontext(), nullcontext()
    else:
        lock = gpulock.shared("KernelBench's trials", req.op)
        alone = gpulock.limit_case("KernelBench's trials", req.op) if _large(req) else nullcontext()
    with torch.no_grad(), lock, alone:
        return run_check(req).model_dump_json()


def _large(req: KbRequest) -> bool:
    return jobs.is_heavy(req.op, truth.device_budget(req.device))


def time_main(request: str) -> str:
    """Sandbox target: KbRequest JSON in, KbTimed JSON out."""
    req = KbRequest.model_validate_json(request)
    _prepare(req)
    with torch.no_grad():
        return run_timing(req).model_dump_json()
