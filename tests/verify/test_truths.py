"""A run's truths within a memory budget: past it the least recently judged are dropped, and a
candidate that reaches one again gets it drawn again from the run's seed, the same values. On a
GPU the budget is a share of its memory (truth.RESIDENT_SHARE); here it is set by hand."""

from pathlib import Path

import torch

from kernelgen.spec import load_spec
from kernelgen.verify.truth import Truths

ROOT = Path(__file__).resolve().parents[2]


def _cases():
    spec = load_spec("softmax")
    return spec, [c for c in spec.cases if c.size.interpreter and c.limit is None][:4]


def test_truths_past_the_budget_are_dropped_and_drawn_again_alike(tmp_path: Path) -> None:
    spec, cases = _cases()
    kept = Truths(spec, 3, "cpu", tmp_path / "kept")
    assert kept.budget is None  # the CPU's cases are small: all kept
    refs = {c.name: kept.get(c).variants["a"].ref for c in cases}
    sizes = dict(kept._sizes)
    budget = max(sizes.values())  # room for one case at a time
    tight = Truths(spec, 3, "cpu", tmp_path / "tight")
    tight.budget = budget
    for _ in range(2):
        for case in cases:
            truth = tight.get(case)
            assert torch.equal(truth.variants["a"].ref, refs[case.name])
            assert sum(tight._sizes.values()) <= budget
    assert tight.dropped >= 2 * len(cases) - 1


def test_prepare_draws_what_the_budget_cannot_hold_at_once_one_at_a_time(tmp_path: Path) -> None:
    spec, cases = _cases()
    truths = Truths(spec, 3, "cpu", tmp_path)
    truths.budget = 1  # no two cases together, none kept past the next
    seen: list[str] = []
    truths.prepare(cases, threads=8, done=lambda c, t: seen.append(c.name))
    assert seen == [c.name for c in cases]  # every case told, in order, one after another
    assert list(truths._cases) == [cases[-1].name]


def test_a_drawn_case_s_long_name_makes_a_file_name_the_os_takes(tmp_path: Path) -> None:
    from kernelgen.verify.truth import _file_stem

    layout = "transposed[17,3,77,513]strides[118503,39501,1,77]offset0"
    dims = "batch_size=17,embedding_dimension=513,num_heads=3,sequence_length=77"
    name = f"drawn2:{dims}:" + ":".join(f"{q}={layout}" for q in "QKV") + "/float32/sorted_up"
    assert len(name) > 255
    stem = _file_stem(name)
    assert len(stem.encode()) <= 160 and stem != _file_stem(name.replace("Q=", "q="))
    (tmp_path / f"{stem}-a.pt").write_bytes(b"")  # OSError 36 with the name as it was
    assert _file_stem("small/float32/normal") == "small-float32-normal"


def test_a_closed_judge_holds_no_truth(tmp_path: Path) -> None:
    """A judge's truths go with it: the suite's shards judge one cold candidate after another in
    one process, which must not keep the largest case it drew."""
    from kernelgen.verify.judge import Evaluator

    spec, cases = _cases()
    ev = Evaluator("softmax", "cpu", seed=3)
    ev.truths.get(cases[0])
    assert ev.truths._cases
    ev.close()
    assert not ev.truths._cases and not ev.truths._sizes


def test_a_judged_candidate_leaves_its_judge_within_the_budget(tmp_path: Path, monkeypatch) -> None:
    """A case larger than the budget (a limit case's GBs beside other judges) is kept while the
    candidate is judged, and dropped once it is: not held while the judge waits for the next."""
    from kernelgen.verify import judge as judge_module
    from kernelgen.verify.judge import Evaluator

    spec, cases = _cases()
    with Evaluator("softmax", "cpu", seed=3) as ev:
        ev.truths.budget = 1  # every case is past it
        held: list[int] = []

        def run(self) -> object:  # the judging, reduced to drawing the candidate's cases
            for case in cases:
                self.ev.truths.get(case)
            held.append(len(self.ev.truths._cases))
            return "verdict"

        monkeypatch.setattr(judge_module.Judging, "run", run)
        assert ev.verify(tmp_path / "k.py", "", "digest") == "verdict"
        assert held == [1]  # the last case drawn, past the budget, kept for its calls
        assert not ev.truths._cases and not ev.truths._sizes


def test_a_case_too_large_to_keep_is_judged_last_and_alone(tmp_path: Path, monkeypatch) -> None:
    """A case whose truth the budget cannot hold (a KernelBench problem at its own size) is not
    drawn ahead: it is drawn when reached, after the others, under the host's limit lock, with
    one input set, as a limit case is, and trimmed to the budget once judged. The rest of the
    verdict is as before."""
    import contextlib

    from kernelgen import gpulock
    from kernelgen.verify import verdict as verdict_module
    from kernelgen.verify import verify_candidate
    from kernelgen.verify.judge import Evaluator

    spec = load_spec("softmax")
    by_size: dict[int, object] = {}
    for c in spec.cases:  # one case each of the three smallest sizes the interpreter runs
        if c.size.interpreter and c.dtype == "float32" and c.dist == "normal":
            by_size.setdefault(c.dims["rows"] * c.dims["cols"], c)
    cases = [by_size[n] for n in sorted(by_size)[:3]]
    big = cases[-1]
    order: list[tuple[str, bool]] = []
    sets: dict[str, set[str]] = {}
    locked = [False]

    @contextlib.contextmanager
    def limit_case(what: str, op: str | None = None):
        locked[0] = True
        try:
            yield 0.0
        finally:
            locked[0] = False

    monkeypatch.setattr(gpulock, "limit_case", limit_case)
    monkeypatch.setattr(verdict_module.gpulock, "limit_case", limit_case)
    with Evaluator("softmax", "cpu", seed=3) as ev:
        ev.grid = cases
        ev.truths.budget = max(ev.truths._estimate(c) for c in cases[:-1])
        assert ev.truths._estimate(big) > ev.truths.budget
        assert [c.name for c in ev.drawn_ahead()] == [c.name for c in cases[:-1]]
        compute = ev.truths._compute

        def traced(case):  # type: ignore[no-untyped-def]
            order.append((case.name, locked[0]))
            truth = compute(case)
            sets[case.name] = set(truth.variants)
            return truth

        monkeypatch.setattr(ev.truths, "_compute", traced)
        v = verify_candidate("softmax", ROOT / "seeds" / "softmax.py", device="cpu", evaluator=ev)
        assert v.accepted, v.reason
        assert order[-1] == (big.name, True)  # last, and under the lock
        assert sets.pop(big.name) == {"a"} and all(v == {"a", "b"} for v in sets.values())
        assert all(not held for name, held in order[:-1])
        assert sum(ev.truths._sizes.values()) <= ev.truths.budget  # trimmed once judged
        assert {r.name for r in v.cases if r.status == "passed"} == {c.name for c in cases}
