"""A run's truths within a memory budget: past it the least recently judged are dropped, and a
candidate that reaches one again gets it drawn again from the run's seed, the same values. On a
GPU the budget is a share of its memory (truth.RESIDENT_SHARE); here it is set by hand."""

from pathlib import Path

import torch

from kernelgen.spec import load_spec
from kernelgen.verify.truth import Truths


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
