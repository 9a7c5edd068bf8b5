"""A suite's jobs sharing one GPU: which problem each takes next.

A problem is heavy where its truth at its own size is past one job's share of the GPU's memory
(truth.too_large under the share the suite gives each job). Level 1's own sizes move 4-17 GB a
call, and the judge, the bench, KernelBench's trials and its timing each hold several times that
in their own processes: on an 80 GB H100, three or four such problems at once ran the GPU out of
memory in every one of those steps, and a problem that died so got no verdict
(evaluations/logs/h100-20261206-kernelbench-memory). So heavy problems take turns, one under way
at a time (--heavy: more, on a GPU with the memory), and the light ones (level 2's fusions at
their sizes, level 1's matmuls) run beside it. A job that finds only heavy problems left while
the heavy ones allowed are under way waits for one to end.

A problem rejected for GPU memory (`oom`) while other jobs shared the GPU may have been short of
what they held, not of what its candidate asked for: it is attempted once more at the end, alone
on the GPU, and that verdict is the one kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed

from kernelgen.errors import KernelgenError
from kernelgen.kernelbench.results import SuiteProblem
from kernelgen.spec import load_spec, reference_path


def weight(op: str) -> int:
    """The truth of a call at the problem's own size, as the judge estimates it; 0 where the
    problem is not imported yet or its spec does not load (the suite says why when it reaches
    it)."""
    from kernelgen.verify.truth import estimate  # torch: not at the CLI's import

    try:
        spec = load_spec(op) if reference_path(op).is_file() else None
    except KernelgenError:
        return 0
    return 0 if spec is None else estimate(spec, spec.data.sizes[0].dims, spec.data.dtypes[0])


def is_heavy(op: str, budget: int | None) -> bool:
    """Whether the problem's own-size truth is past `budget` (None, the CPU's: never)."""
    return budget is not None and weight(op) > budget


def heavy_keys(todo: Iterable[SuiteProblem], device: str) -> set[tuple[int, int]]:
    """The keys of the problems past one job's share of the GPU's memory (none on the CPU), read
    in the suite's environment, where KERNELGEN_TRUTH_SHARE is a job's share."""
    from kernelgen.verify.truth import device_budget

    budget = device_budget(device)
    return {p.key for p in todo if is_heavy(p.op, budget)}


class Queue:
    """The problems not yet taken, in order, handed out so that at most `at_once` heavy
    problems are being worked on at a time. Heavy problems go first where one can: they are the
    suite's longest chain, and the light ones fill the other jobs meanwhile."""

    def __init__(
        self,
        todo: list[SuiteProblem],
        heavy: set[tuple[int, int]],
        stopping: threading.Event,
        at_once: int = 1,
    ):
        self._left = sorted(todo, key=lambda p: p.key not in heavy)  # stable: order kept
        self._heavy, self._at_once = heavy, at_once
        self._stopping = stopping
        self._under_way: set[tuple[int, int]] = set()  # keys being worked on
        self._shared: set[tuple[int, int]] = set()  # keys worked on with another beside them
        self._alone: list[SuiteProblem] = []  # to attempt again with nothing beside them
        self._retried: set[tuple[int, int]] = set()  # keys attempted again alone (once only)
        self._cond = threading.Condition()

    def take(self) -> SuiteProblem | None:
        """The next problem this job may work on, waiting while only heavy ones are left and
        as many as allowed are under way, or while one to work on alone waits for the others
        to end; None once none is left or the suite is stopping."""
        with self._cond:
            while (self._left or self._alone) and not self._stopping.is_set():
                heavy_now = len(self._under_way & self._heavy)
                for i, p in enumerate(self._left):
                    if p.key not in self._heavy or heavy_now < self._at_once:
                        if self._under_way:
                            self._shared |= self._under_way | {p.key}
                        self._under_way.add(p.key)
                        return self._left.pop(i)
                if not self._left and not self._under_way:
                    p = self._alone.pop(0)
                    self._retried.add(p.key)
                    self._under_way.add(p.key)
                    return p
                self._cond.wait(timeout=1.0)  # woken by done(); the timeout sees a stop
            return None

    def done(self, p: SuiteProblem, again_alone: bool = False) -> None:
        """`p` ended; `again_alone`: attempt it once more at the end, alone on the GPU, if it
        had another problem beside it at any time (alone, its verdict stands)."""
        with self._cond:
            self._under_way.discard(p.key)
            if again_alone and p.key in self._shared and p.key not in self._retried:
                self._alone.append(p)
            self._cond.notify_all()


def each(
    todo: list[SuiteProblem],
    jobs: int,
    work: Callable[[SuiteProblem], None],
    stopping: threading.Event,
    heavy: set[tuple[int, int]] | None = None,
    heavy_at_once: int = 1,
) -> None:
    """`work` on every problem, `jobs` at a time, of them `heavy_at_once` of the heavy ones
    (keys); one rejected `oom` beside other jobs once more at the end, alone. The first error
    (an interrupt included) stops the suite: no problem starts after it, and those running put
    nothing more."""
    queue = Queue(todo, heavy or set(), stopping, heavy_at_once)

    def job() -> None:
        while (p := queue.take()) is not None:
            again = False
            try:
                work(p)
                again = p.status == "rejected" and p.category == "oom"
            except BaseException:
                stopping.set()  # at once: the other jobs take nothing more
                raise
            finally:
                queue.done(p, again_alone=again)

    if jobs == 1 or len(todo) <= 1:
        job()
        return
    with ThreadPoolExecutor(min(jobs, len(todo)), thread_name_prefix="suite-job") as ex:
        futures = [ex.submit(job) for _ in range(min(jobs, len(todo)))]
        try:
            for future in as_completed(futures):
                future.result()
        except BaseException:  # an interrupt in this thread
            stopping.set()
            raise
