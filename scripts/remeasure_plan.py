"""An agent plan that re-measures kernels the library ships, unchanged (scripts/h200_agent.py).

    python scripts/remeasure_plan.py OP [OP ...] --why "what changed" > plan.json

When an operator's bench shapes or the bench itself change, the shipped kernel's record no
longer says what the library would do at every shape: the dispatch table is built from it. The
plan submits the shipped source (MANIFEST.json's `source`) as it is, with a note saying so, in
a new agent run; promoting that run (`kernelgen promote OP --run RUN`: the agent's own promote
refuses a kernel that does not beat itself) rebuilds the table from the new figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

MANIFEST = Path("generated/kernelgen_ops/MANIFEST.json")


def plan(ops: list[str], why: str, manifest: dict) -> list[dict[str, str]]:
    items = []
    for op in ops:
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
    parser.add_argument("--why", required=True, help="what changed since the shipped record")
    args = parser.parse_args()
    try:
        manifest = json.loads(MANIFEST.read_text())
    except (OSError, ValueError) as e:
        sys.exit(f"{MANIFEST}: not readable ({e}); run from the repository root")
    json.dump(plan(args.ops, args.why, manifest), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
