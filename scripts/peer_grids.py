"""The peers' own accuracy-test grids applied to kernelgen_ops (issue [P], item 4).

    python scripts/peer_grids.py run OUT.jsonl [--grids flaggems quack.softmax] [--ops softmax]
        [--dtypes float32 float16] [--device cuda|cpu] [--max-elements N] [--max-cases N]
    python scripts/peer_grids.py summary OUT.jsonl SUMMARY.json

`run` takes each grid of scripts/grids (FlagGems', Liger's, QuACK's, FlashInfer's and SGLang's
test parametrizations: shapes, dtypes, dims, layouts, value families, each grid naming its test
file and commit) and calls kernelgen_ops on every case four ways: the direct call
(kernelgen_ops.<op>) and, where the library routes the op, the peer's torch call under
kernelgen_ops.use(); each under the measured dispatch (the default) and forced onto the kernel
(set_dispatch("kernel")). Each answer is checked against references/<op>.py in float64 at the
peer's tolerance and at kernelgen's own (scripts/grids/check.py). One JSON line per call
(scripts/grids/record.py's CaseRecord) is appended to OUT.jsonl as it comes, so a run cut short
keeps what it did, and a run on the same file skips the calls it holds. A case the library's
contract refuses (decode_attn's pages of other than 64 tokens) is recorded as refused with the
library's message; a case whose inputs pass --max-elements (2^30 on a GPU by default) is
recorded as skipped, and so is one whose float64 truth or checks run out of memory.

`summary` folds a run's lines into one record (GridsSummary): calls by grid, mode, dispatch and
status, and every call that did not pass, in full; kept as evaluations/grids/grids-<UTC>.json.

On CPU (--device cpu) the kernels run in Triton's interpreter, which the script turns on itself:
a small subset (by default cases of at most 4096 elements in float32 and float16; the
interpreter's bf16 is not the GPU's and the library refuses it there).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import json
import os
import sys
import time
import zlib
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if str(ROOT / "scripts") not in sys.path:
    sys.path.append(str(ROOT / "scripts"))

from grids import Grid, GridCase, all_grids  # noqa: E402
from grids.record import CaseRecord, GridsSummary, summarize  # noqa: E402

CPU_MAX_ELEMENTS = 4096
# On a GPU: the float64 truth of a case and the checks' float64 copies take about 50 bytes an
# input element at their peak (rms_norm), so QuACK's 8192 x 262144 (2^31) would need more than
# an H200's 141 GB beside the inputs; such cases are recorded as skipped.
CUDA_MAX_ELEMENTS = 1 << 30
CPU_DTYPES = ["float32", "float16"]
MODES = (("direct", "measured"), ("direct", "kernel"), ("routed", "measured"), ("routed", "kernel"))


def select(grids: list[Grid], names: list[str] | None, ops: list[str] | None) -> list[Grid]:
    """The grids whose name starts with one of `names` (all without), of `ops` (all without)."""
    return [
        g
        for g in grids
        if (not names or any(g.name == n or g.name.startswith(n + ".") for n in names))
        and (not ops or g.op in ops)
    ]


def seed_of(grid: Grid, case: GridCase) -> int:
    return zlib.crc32(f"{grid.name}/{case.key()}".encode())


def _line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return f"{type(e).__name__}: {text}"[:600]


@contextlib.contextmanager
def spied(op: str) -> Iterator[list[int]]:
    """Counts the calls of the op module's launcher: whether the generated kernel took a call,
    or torch's op (kernelgen_ops looks the launcher up by name, so a spy is seen)."""
    module = importlib.import_module(f"kernelgen_ops.{op}")
    real = getattr(module, op)
    count = [0]

    def launcher(*args: Any) -> Any:
        count[0] += 1
        return real(*args)

    setattr(module, op, launcher)
    try:
        yield count
    finally:
        setattr(module, op, real)


def done_keys(out: Path) -> set[tuple]:
    """The calls an earlier run on this file recorded."""
    keys: set[tuple] = set()
    if not out.exists():
        return keys
    for line in out.read_text().splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if item.get("kind") == "case":
            keys.add((item["grid"], item["case"], item["layout"], item["mode"], item["dispatch"]))
    return keys


class Runner:
    """Runs the grids' cases and appends their records to one file."""

    def __init__(self, out: Path, device: str, max_elements: int | None, modes: list[tuple]):
        import kernelgen_ops
        import torch

        self.torch, self.ops = torch, kernelgen_ops
        self.out, self.device, self.max_elements, self.modes = out, device, max_elements, modes
        self.done = done_keys(out)
        self.counts = {"passed": 0, "failed": 0, "refused": 0, "error": 0, "skipped": 0}

    def write(self, record: CaseRecord) -> None:
        with self.out.open("a") as f:
            f.write(record.model_dump_json() + "\n")
        self.counts[record.status] += 1

    def run_grid(self, grid: Grid, cases: list[GridCase]) -> None:
        from grids import inputs

        from kernelgen.spec import load_spec

        spec = load_spec(grid.op)
        routes = grid.op in self.ops.routable()
        with spied(grid.op) as count:
            for case in cases:
                head = {
                    "grid": grid.name,
                    "peer": grid.peer,
                    "op": grid.op,
                    "source": grid.source.cite(),
                    "case": case.key(),
                    "shape": case.shape,
                    "dtype": case.dtype,
                }
                try:
                    calls = inputs.build(
                        grid.op, case, seed_of(grid, case), self.device, self.max_elements
                    )
                except inputs.TooLarge as e:
                    if (grid.name, case.key(), "-", None, None) not in self.done:
                        self.write(
                            CaseRecord(
                                **head, layout="-", mode=None, dispatch=None, status="skipped",
                                message=str(e),
                            )
                        )  # fmt: skip
                    continue
                for call in calls:
                    truth: dict[str, Any] = {}
                    for mode, dispatch in self.modes:
                        if mode == "routed" and (call.routed is None or not routes):
                            continue
                        key = (grid.name, case.key(), call.layout, mode, dispatch)
                        if key in self.done:
                            continue
                        self.write(self.one(grid, spec, head, call, mode, dispatch, count, truth))
                del calls, truth
                if self.device == "cuda":
                    self.torch.cuda.empty_cache()

    def one(
        self, grid, spec, head: dict, call, mode: str, dispatch: str, count: list[int], truth: dict
    ) -> CaseRecord:
        """One call, checked: the float64 reference and torch's answer in the case dtype are
        made the first time a call of this layout gives an answer, and kept for the others."""
        from grids import check

        torch, ops = self.torch, self.ops
        ops.set_dispatch(dispatch)
        before = count[0]
        start = time.monotonic()
        rec: dict[str, Any] = {**head, "layout": call.layout, "mode": mode, "dispatch": dispatch}
        try:
            with torch.no_grad():
                if mode == "direct":
                    out = getattr(ops, grid.op)(*call.args)
                else:
                    with ops.use(include=[grid.op]):
                        out = call.unview(call.routed())
            if self.device == "cuda":
                torch.cuda.synchronize()
        except Exception as e:  # the library's refusal is a finding, so is anything else
            path: str | None = "kernel" if count[0] > before else "torch"
            message = _line(e)
            ours = isinstance(e, (ValueError, TypeError)) and str(e).startswith("kernelgen_ops.")
            if ours and path == "torch":
                path = None  # the contract turned it away before either could take it
            elif not ours and path == "torch":
                message, ours = f"torch's op, which took the call: {message}", True
            return CaseRecord(
                **rec,
                path=path,  # type: ignore[arg-type]
                status="refused" if ours else "error",
                message=message,
                seconds=round(time.monotonic() - start, 3),
            )
        finally:
            ops.set_dispatch("measured")
        path = "kernel" if count[0] > before else "torch"
        try:
            if not truth:
                with torch.no_grad():
                    wide = [
                        a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                        for a in call.args
                    ]
                    truth["ref"] = spec.reference(*wide)
                    del wide
                    truth["native"] = spec.reference(*call.args)
        except Exception as e:  # no verdict without the truth: said so, not counted as ours
            return CaseRecord(
                **rec, path=path, status="skipped", message=f"the reference raised: {_line(e)}"
            )
        verdicts: list[str | None] = []
        for judge in (
            lambda: check.peer(grid.checks[head["dtype"]], out, truth["ref"]),
            lambda: check.kernelgen(
                spec, out, call.args, truth["ref"], truth["native"], call.dims,
                call.case_dtype, self.device,
            ),
        ):  # fmt: skip
            try:
                verdicts.append(judge())
            except torch.OutOfMemoryError as e:  # the harness's memory, not the answer's fault
                return CaseRecord(
                    **rec, path=path, status="skipped", message=f"the check: {_line(e)}"
                )
            except Exception as e:  # an answer a check cannot read (a wrong type, a shape)
                verdicts.append(f"the check raised: {_line(e)}")
        peer_error, own = verdicts
        return CaseRecord(
            **rec,
            path=path,
            status="failed" if peer_error or own else "passed",
            peer_error=peer_error,
            kernelgen_error=own,
            seconds=round(time.monotonic() - start, 3),
        )


def environment_line(device: str) -> str:
    from kernelgen.env import environment

    return json.dumps({"kind": "environment", **environment(device).model_dump()})


def library_digest() -> str | None:
    manifest = ROOT / "generated" / "kernelgen_ops" / "MANIFEST.json"
    return hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.exists() else None


def run(args: argparse.Namespace) -> int:
    grids = select(all_grids(), args.grids, args.ops)
    if not grids:
        print("no grid matches", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as f:
        f.write(environment_line(args.device) + "\n")
    modes = [m for m in MODES if m[0] in args.modes and m[1] in args.dispatch]
    runner = Runner(args.out, args.device, args.max_elements, modes)
    for grid in grids:
        cases = [c for c in grid.cases if not args.dtypes or c.dtype in args.dtypes]
        if args.max_cases is not None:
            cases = cases[: args.max_cases]
        if not cases:
            continue
        start = time.monotonic()
        runner.run_grid(grid, cases)
        print(
            f"{grid.name}: {len(cases)} cases in {time.monotonic() - start:.1f} s; so far "
            + ", ".join(f"{k} {v}" for k, v in runner.counts.items()),
            file=sys.stderr,
            flush=True,
        )
    return 0


def read(path: Path) -> tuple[list[CaseRecord], dict | None]:
    """The run's records (the last of each call where a resumed run wrote one again) and its
    last environment line."""
    records: dict[tuple, CaseRecord] = {}
    env = None
    for line in path.read_text().splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if item.get("kind") == "environment":
            env = {k: v for k, v in item.items() if k != "kind"}
        elif item.get("kind") == "case":
            r = CaseRecord.model_validate(item)
            records[(r.grid, r.case, r.layout, r.mode, r.dispatch)] = r
    return list(records.values()), env


def summary(args: argparse.Namespace) -> int:
    from kernelgen.records import Environment

    records, env = read(args.out)
    totals, grids = summarize(records)
    record = GridsSummary(
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        command="python scripts/peer_grids.py " + " ".join(sys.argv[1:]),
        environment=Environment.model_validate(env) if env else None,
        library=library_digest(),
        totals=totals,
        grids=grids,
        not_passed=[r for r in records if r.status != "passed"],
    )
    args.summary.parent.mkdir(parents=True, exist_ok=True)
    args.summary.write_text(record.model_dump_json(indent=1) + "\n")
    print(f"{args.summary}: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the grids, appending a JSON line per call")
    r.add_argument("out", type=Path)
    r.add_argument("--grids", nargs="+", help="grid names or their leading parts (flaggems)")
    r.add_argument("--ops", nargs="+")
    r.add_argument("--dtypes", nargs="+", help="default: all on CUDA, float32 float16 on CPU")
    r.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    r.add_argument(
        "--max-elements",
        type=int,
        help=f"default: {CUDA_MAX_ELEMENTS} on CUDA, {CPU_MAX_ELEMENTS} on CPU",
    )
    r.add_argument("--max-cases", type=int, help="per grid, the first N cases that match")
    r.add_argument("--modes", nargs="+", choices=("direct", "routed"), default=["direct", "routed"])
    r.add_argument(
        "--dispatch", nargs="+", choices=("measured", "kernel"), default=["measured", "kernel"]
    )
    s = sub.add_parser("summary", help="fold a run's lines into one record")
    s.add_argument("out", type=Path)
    s.add_argument("summary", type=Path)
    args = parser.parse_args(argv)
    if args.command == "summary":
        return summary(args)
    if args.device == "cpu":
        # Before triton is imported (kernelgen_ops imports it in Runner).
        os.environ["TRITON_INTERPRET"] = "1"
        if args.max_elements is None:
            args.max_elements = CPU_MAX_ELEMENTS
        if args.dtypes is None:
            args.dtypes = CPU_DTYPES
    elif args.max_elements is None:
        args.max_elements = CUDA_MAX_ELEMENTS
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
