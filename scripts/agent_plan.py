"""Be the agent on the GPU: the rewrites of a plan, submitted through kernelgen's agent session.

    python scripts/agent_plan.py PLAN.json --out DIR [--deadline-s 540] [--no-promote]

PLAN.json is a list of {"op": ..., "file": ..., "note": ..., "run": ...} (the note is the
candidate's transcript: what was tried and why; "run", optional, continues that agent run of the
operator instead of starting one). An item {"op": ..., "run": ..., "promote": true} without a file
promotes that run's best as it stands (a promotion an earlier call could not finish). Per
operator, in plan order: `agent.start_run` (the seed judged and timed), then each of its files
through `agent.submit_candidate`, the same path as `kernelgen agent submit` and the MCP tool, then
`agent.promote` when a candidate beat the seed (or when asked), and the run's report. One JSON
line per step goes to stdout and DIR/agent.jsonl, and after every step DIR/results.tgz is packed
again with the operators' runs, the peers' cache and generated/, so a call cut short by its time
limit still brings back every finished step. A step is skipped when the time left is less than
the longest step of its kind so far.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kernelgen import paths
from kernelgen.agent import session as agent


class Plan:
    def __init__(self, path: Path):
        try:
            items = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            sys.exit(f"{path}: not a readable JSON plan ({e})")
        if not isinstance(items, list) or not all(
            isinstance(i, dict) and ({"op", "file"} <= i.keys() or _promote_only(i)) for i in items
        ):
            sys.exit(
                f"{path}: expected a list of {{'op', 'file', 'note'}} objects, or of "
                "{'op', 'run', 'promote': true}"
            )
        self.by_op: dict[str, list[dict[str, Any]]] = {}
        for item in items:
            if "file" in item and not Path(item["file"]).is_file():
                sys.exit(f"{path}: {item['file']}: no such candidate file")
            self.by_op.setdefault(item["op"], []).append(item)


class Driver:
    def __init__(self, out: Path, deadline_s: float):
        self.out, self.deadline = out, time.monotonic() + deadline_s
        self.longest: dict[str, float] = {}
        self.runs: list[str] = []
        out.mkdir(parents=True, exist_ok=True)

    def fits(self, kind: str, default_s: float) -> bool:
        return self.deadline - time.monotonic() > self.longest.get(kind, default_s)

    def step(self, kind: str, **fields: Any) -> Any:
        """Run one session call, log it, repack the results. A failure is logged, not raised:
        the plan's next operator still runs."""
        fn = fields.pop("fn")
        start = time.monotonic()
        try:
            result = fn()
            line = {"step": kind, **fields, "ok": True, "result": _dump(result)}
        except Exception as e:  # noqa: BLE001 - one clear line, and on to the next step
            result = None
            line = {"step": kind, **fields, "ok": False, "error": f"{type(e).__name__}: {e}"}
        seconds = time.monotonic() - start
        self.longest[kind] = max(self.longest.get(kind, 0.0), seconds)
        line["seconds"] = round(seconds, 1)
        text = json.dumps(line)
        print(text, flush=True)
        with (self.out / "agent.jsonl").open("a") as f:
            f.write(text + "\n")
        self.pack()
        return result

    def pack(self) -> None:
        root = paths.root()
        keep = [f"evaluations/{r}" for r in self.runs] + ["evaluations/peers", "generated"]
        keep = [k for k in keep if (root / k).exists()]
        if not keep:  # a project without runs yet (a dry run elsewhere): nothing to carry back
            return
        subprocess.run(
            ["tar", "czf", str(self.out / "results.tgz"), "--exclude=*.egg-info", *keep],
            cwd=root,
            check=False,
        )


def _promote_only(item: dict[str, Any]) -> bool:
    return "file" not in item and item.get("promote") is True and "run" in item


def _dump(result: Any) -> Any:
    return result.model_dump(mode="json") if hasattr(result, "model_dump") else result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--deadline-s", type=float, default=540.0)
    parser.add_argument("--model", default="kernelgen-session (written by hand, as an agent)")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the plan")
    parser.add_argument("--no-promote", action="store_true")
    args = parser.parse_args()
    plan = Plan(args.plan)
    d = Driver(args.out, args.deadline_s)
    # One judge per run for the whole plan, as the MCP server keeps them: the seed's truth and
    # warm runners serve every submission of that operator.
    with agent.kept_judges():
        drive(plan, d, args)


def drive(plan: Plan, d: Driver, args: argparse.Namespace) -> None:
    for op, items in plan.by_op.items():
        resume = next((i["run"] for i in items if i.get("run")), None)
        if resume is not None:
            run = agent.find_run(resume)
        elif d.fits("start", 90.0):
            start = functools.partial(agent.start_run, op, args.device, args.model)
            run = d.step("start", op=op, fn=start)
        else:
            print(json.dumps({"step": "skip", "op": op, "why": "no time to start"}), flush=True)
            continue
        if run is None:
            continue
        d.runs.append(f"{op}/{run.id}")
        for item in items:
            if _promote_only(item):
                continue
            if not d.fits("submit", 90.0):
                print(json.dumps({"step": "skip", "file": item["file"]}), flush=True)
                continue
            source = Path(item["file"]).read_text()
            submit = functools.partial(agent.submit_candidate, run.id, source, item.get("note"))
            d.step("submit", op=op, file=item["file"], fn=submit)
        best = agent.run_status(run.id).best
        before = run.best if resume is not None else None
        asked = any(_promote_only(i) for i in items)
        if (
            best is not None
            and (best != before or asked)
            and args.device == "cuda"
            and not args.no_promote
            and d.fits("promote", 60.0)
        ):
            d.step("promote", op=op, fn=functools.partial(agent.promote, run.id))
        d.step("report", op=op, fn=functools.partial(agent.report, run.id))


if __name__ == "__main__":
    main()
