"""An imported problem promoted end to end: imported, run, its accepted candidate promoted with
`kernelgen promote OP --run RUN`, and called as kernelgen_ops.kernelbench.<op> in a fresh process
that cannot import the pipeline. The operators' files stay as they were."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kernelgen import store
from kernelgen.agent import session as agent
from kernelgen.cli import app
from kernelgen.kernelbench import import_paths
from kernelgen.package import PromoteError, ShapeSpeedup, promote, promote_again, sha256
from kernelgen.package.imported import render_kernelbench
from kernelgen.package.library import PIPELINE_MODULES
from kernelgen.package.manifest import Provenance, load_manifest
from kernelgen.records import BenchRecord, Ceilings, Environment, PeerTime, ShapeTiming
from kernelgen.spec import load_spec
from kernelgen.spec.inputs import make_inputs

REPO = Path(__file__).resolve().parents[2]
KB = REPO / "tests" / "kernelbench"
OP = "kb1_1_softmax"
GOOD = (KB / "candidates" / "softmax_rows.py").read_text()
H200 = "NVIDIA H200"
# What promotion adds for an imported problem; every other file of the library stays as it was.
ADDED = {f"{OP}.py", "kernelbench.py", f"configs/{OP}.json"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project holding the real library and the tests' softmax problem, imported."""
    (tmp_path / "references").mkdir()
    (tmp_path / "seeds").mkdir()
    shutil.copytree(
        REPO / "generated" / "kernelgen_ops",
        tmp_path / "generated" / "kernelgen_ops",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (result,) = import_paths([KB / "problems" / "level1" / "1_Softmax.py"])
    assert result.status == "imported", result.reason
    return tmp_path


def _library(project: Path) -> Path:
    return project / "generated" / "kernelgen_ops"


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _cuda_bench(source: str) -> BenchRecord:
    eager = PeerTime(median_us=30.0, spread=0.01, host_us=31.0)
    shape = ShapeTiming(
        shape="problem",
        dtype="float32",
        bytes=1536000,
        flops=0,
        candidate=PeerTime(median_us=20.0, spread=0.01, host_us=22.0),
        eager=eager,
        speedup_eager=1.5,
        speedup_compile=1.25,
        gbps=76.8,
        tflops=0.0,
        limit_pct=1.6,
        floor_us=0.3,
        bound="launch",
    )
    env = Environment(
        device="cuda",
        gpu=H200,
        torch="2.11.0",
        triton="3.6.0",
        python="3.11",
        host="h",
        interpreter=False,
    )
    ceilings = Ceilings(
        gpu=H200,
        copy_gbps=4000.0,
        bf16_tflops=900.0,
        launch_us=3.0,
        measured="now",
        torch="2.11.0",
        triton="3.6.0",
    )
    return BenchRecord(
        op=OP,
        candidate="source.py",
        sha256=sha256(source),
        label="r01-c01",
        shapes=[shape],
        ceilings=ceilings,
        environment=env,
        geomean_eager=1.5,
        geomean_compile=1.25,
        peers="eager",
    )


def _accepted_run() -> str:
    """A CPU agent run whose first accepted candidate became the best, with the CUDA half of the
    evidence written over its record as an H200 run would have left it (no GPU here): the
    verdict on CUDA with the GPU-only cases run, memcheck clean, and the timings."""
    run_id = agent.start_run(OP, "cpu").id
    submitted = agent.submit_candidate(run_id, GOOD)
    assert submitted.accepted and submitted.best == submitted.candidate.id
    (rec,) = store.load_candidates(OP, run_id)
    assert rec.verdict is not None and rec.verdict.device == "cpu"
    verdict = rec.verdict.model_copy(
        update={
            "device": "cuda",
            "outcome": "accepted",
            "sanitized": ["memcheck"],
            "cases": [c.model_copy(update={"status": "passed"}) for c in rec.verdict.cases],
        }
    )
    cuda = rec.model_copy(update={"verdict": verdict, "bench": _cuda_bench(GOOD), "speedup": 1.5})
    store.save_candidate(OP, run_id, cuda)
    return run_id


# Run where the pipeline cannot be imported at all: each of its modules is refused by a finder
# ahead of every other, so a library that reached for one would fail here, not only leak.
CALL = """
import importlib.abc, json, sys
import torch

BLOCKED = set(sys.argv[2:])


class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} may not be imported by the library")
        return None


sys.meta_path.insert(0, Refuse())
folder = sys.argv[1]
from kernelgen_ops import kernelbench

x = torch.load(folder + "/x.pt")
torch.save(kernelbench.kb1_1_softmax(x), folder + "/y.pt")
refused = []
for bad in (x.double(), x[0], x.requires_grad_(True)):
    try:
        kernelbench.kb1_1_softmax(bad)
    except (TypeError, ValueError, RuntimeError) as e:
        refused.append(str(e))
leaked = sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)
print(json.dumps({"file": kernelbench.__file__, "refused": refused, "leaked": leaked,
                  "all": kernelbench.__all__,
                  "available": kernelbench.available()}))
"""


def test_an_imported_problem_is_promoted_and_runs_without_the_pipeline(project: Path) -> None:
    library = _library(project)
    before = _snapshot(library)
    run_id = _accepted_run()

    got = CliRunner().invoke(app, ["promote", OP, "--run", run_id])
    assert got.exit_code == 0, got.output
    assert store.load_run(OP, run_id).promoted

    after = _snapshot(library)
    assert set(after) - set(before) == ADDED
    changed = {name for name in before if after[name] != before[name]}
    assert changed == {"MANIFEST.json"}  # the operators' modules, configs and __init__ as they were
    manifest = json.loads(after["MANIFEST.json"])
    assert manifest["ops"] == json.loads(before["MANIFEST.json"])["ops"]
    entry = manifest["kernelbench"][OP]
    assert entry["run_id"] == run_id and entry["device"] == H200 and entry["routes"] == []
    assert [(p["name"], p["annotation"]) for p in entry["params"]] == [("x", "torch.Tensor")]
    assert entry["returns"] == "torch.Tensor"
    assert entry["origin"]["level"] == 1 and entry["origin"]["problem"] == 1
    assert entry["accepts"] == [
        {"name": "x", "dtypes": ["float32"], "rank": 2, "contiguous": False, "value": None}
    ]
    configs = json.loads(after[f"configs/{OP}.json"])
    assert configs["dispatch"] == {}  # the kernel always: no bucket, no evidence to dispatch on
    module = after[f"{OP}.py"]
    assert module.startswith(f"# kernelgen_ops.kernelbench.{OP}: written by `kernelgen promote`")
    assert "the problem's Model as torch users call it" in module
    for text in (module, after["kernelbench.py"]):
        assert "kernelgen." not in text.replace("kernelgen_ops.", "")
    assert after["kernelbench.py"] == render_kernelbench(load_manifest(library))

    # Called in a fresh process that cannot import the pipeline, against the reference.
    spec = load_spec(OP)
    size = next(s for s in spec.data.sizes if s.interpreter)
    (x,) = make_inputs(spec, size, "float32", "normal", 7, "cpu")
    torch.save(x, project / "x.pt")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KERNELGEN_ROOT")}
    done = subprocess.run(
        [sys.executable, "-c", CALL, str(project), *PIPELINE_MODULES],
        cwd=library.parent,  # the library's folder first on the path (python -c)
        env={**env, "TRITON_INTERPRET": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(out["file"]) == library / "kernelbench.py"
    assert out["leaked"] == [] and out["all"] == [OP]
    assert out["available"][OP]["origin"]["file"].endswith("level1/1_Softmax.py")
    torch.testing.assert_close(torch.load(project / "y.pt"), spec.reference(x))
    dtype, rank, grad = out["refused"]
    assert "is torch.float64; the kernel was verified for torch.float32 only" in dtype
    assert "has 1 dims; the kernel takes 2" in rank
    assert "requires grad" in grad


def _provenance(source: str) -> Provenance:
    return Provenance(
        op=OP,
        source=f"evaluations/{OP}/run-1/candidates/r01-c01/source.py",
        run_id="run-1",
        candidate_id="r01-c01",
        proposer="agent",
        parent="seed",
        device=H200,
        triton="3.6.0",
        torch="2.11.0",
        speedups=[ShapeSpeedup(shape="problem", dtype="float32", median_us=20.0, eager=1.5)],
        geomean_eager=1.5,
        peers="eager",
        sha256=sha256(source),
    )


def test_promoting_again_and_an_operator_after_it_keep_the_imported_entry(project: Path) -> None:
    library = _library(project)
    path = project / f"evaluations/{OP}/run-1/candidates/r01-c01/source.py"
    path.parent.mkdir(parents=True)
    path.write_text(GOOD)
    promote(OP, GOOD, None, _provenance(GOOD))
    promoted = _snapshot(library)
    (library / "kernelbench.py").write_text("")  # what promoting again must derive anew
    promote_again(OP)
    assert _snapshot(library) == promoted
    assert "kernelbench" in load_manifest(library).model_dump()


def test_an_imported_problem_needs_its_annotated_signature(project: Path) -> None:
    """A reference imported before its entry was annotated cannot be promoted: import it again."""
    ref = project / "references" / f"{OP}.py"
    annotated = "def kb1_1_softmax(x: torch.Tensor) -> torch.Tensor:"
    assert annotated in ref.read_text()
    ref.write_text(ref.read_text().replace(annotated, "def kb1_1_softmax(x):"))
    with pytest.raises(PromoteError, match="parameter 'x' of kb1_1_softmax\\(\\) needs a type"):
        promote(OP, GOOD, None, _provenance(GOOD))
