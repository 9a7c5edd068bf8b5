"""An agent plan that re-measures kernels the library ships, unchanged (scripts/agent_plan.py).

    python scripts/remeasure_plan.py OP [OP ...] [--why "what changed"] [--resume OP=RUN] \
        > plan.json

When an operator's bench shapes or the bench itself change, the shipped kernel's record no
longer says what the library would do at every shape: the dispatch table is built from it. The
plan submits the shipped source (MANIFEST.json's `source`) as it is, with a note saying so, in
a new agent run; promoting that run (`kernelgen promote OP --run RUN`: the agent's own promote
refuses a kernel that does not beat itself, after running it under compute-sanitizer, which
promotion requires) rebuilds the table from the new figures. --resume OP=RUN takes an earlier
call's run of OP instead of a new one: the item only promotes it (sanitizer first).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

MANIFEST = Path("generated/kernelgen_ops/MANIFEST.json")


def plan(
    ops: list[str], why: str | None, manifest: dict, resume: dict[str, str] | None = None
) -> list[dict]:
    items: list[dict] = []
    for op in ops:
        if op in (resume or {}):
            items.append({"op": op, "run": resume[op], "promote": True})
            continue
        if not why:
            sys.exit(f"{op}: a new run needs --why (what changed since the shipped record)")
        entry = manifest["ops"].get(op)
        if entry is None:
            sys.exit(f"{MANIFEST}: no operator {op!r}; it has {', '.join(manifest['ops'])}")
        source = entry.get("source")
        if not source or not Path(source).is_file():
            sys.exit(f"{MANIFEST}: ops.{op}.source: {source!r} is not a file in this checkout")
        shipped = f"{entry.get('proposer')} run {entry.get('run_id')} {entry.get('candidate_id')}"
        note = (
            f"Re-measurement, not a rewrite: the kernel kernelgen_ops ships ({shipped}), "
            f"unchanged, in a new agent run. {why}"
        )
        items.append({"op": op, "file": source, "note": note})
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="+")
    parser.add_argument("--why", help="what changed since the shipped record (new runs)")
    parser.add_argument("--resume", action="append", default=[], metavar="OP=RUN")
    args = parser.parse_args()
    resume = {}
    for item in args.resume:
        op, sep, run = item.partition("=")
        if not sep or not run or op not in args.ops:
            sys.exit(f"--resume {item!r}: expected OP=RUN with OP one of {', '.join(args.ops)}")
        resume[op] = run
    try:
        manifest = json.loads(MANIFEST.read_text())
    except (OSError, ValueError) as e:
        sys.exit(f"{MANIFEST}: not readable ({e}); run from the repository root")
    json.dump(plan(args.ops, args.why, manifest, resume), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
