"""Cold verdicts: each candidate judged as a new user's first `kernelgen verify` judges it, a fresh
process with an empty Triton cache, and the wall time until its verdict. A new candidate of an
agent or an LLM is always cold, so this is the time the judge costs them (issue [V2]: 60 s or less
on the H200, autotuned candidates included).

  python scripts/cold_verdicts.py [--device cuda] [--seed 1] [--parallel 1] [--out DIR] PATH...
  python scripts/cold_verdicts.py --table LOG.jsonl   (a log's table: this script's, or the
                                                      adversarial suite's verdict log)

A PATH is a candidate file or a folder of them; a candidate's operator is the one whose entry
function it defines (`def softmax(`), or OP:PATH names it. Each verdict is appended to
DIR/cold-verdicts.jsonl as it comes (a call cut short keeps those done), and a table ends the
run. Whether a verdict is the right one is the tests' business (tests/verify, `-m gpu` on the
GPU); this measures how long it takes and records what it said.

With --parallel N, N verdicts run side by side, each with 1/N of the truths' memory and of the
compile runners a judge alone has: each one's time is then an upper bound of its time alone (they
share the host's cores and the GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kernelgen.verify.sharing import judges_share

ROOT = Path(__file__).resolve().parents[1]
OPS = sorted(p.stem for p in (ROOT / "references").glob("*.py"))


def candidates(paths: list[str]) -> list[tuple[str, Path]]:
    """(operator, file) for each path, folders expanded in name order."""
    out: list[tuple[str, Path]] = []
    for arg in paths:
        op, _, rest = arg.rpartition(":") if ":" in arg else ("", "", arg)
        path = Path(rest)
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for f in files:
            if name := op or operator_of(f):
                out.append((name, f))
    return out


def operator_of(path: Path) -> str | None:
    found = [op for op in OPS if re.search(rf"^def {op}\(", path.read_text(), re.MULTILINE)]
    if len(found) != 1:  # a candidate that defines no entry is rejected at once: not a measure
        print(f"skipped {path}: defines {found or 'no operator entry'}; name it as OP:{path}")
        return None
    return found[0]


def judge(op: str, path: Path, device: str, seed: int, log: Path, parallel: int) -> dict:
    """One verdict in a fresh process over a fresh Triton cache (and compile-ahead index), with
    its part of the GPU's memory and the host's compile runners where `parallel` run at once."""
    with tempfile.TemporaryDirectory(prefix="kernelgen-cold-") as cache:
        env = {**os.environ, "KERNELGEN_TRITON_CACHE": cache, "TRITON_CACHE_DIR": cache}
        env |= judges_share(parallel)
        cmd = [sys.executable, "-m", "kernelgen", "verify", op, str(path)]
        cmd += ["--device", device, "--seed", str(seed)]
        start = time.monotonic()
        proc = subprocess.run([*cmd, "--json"], capture_output=True, text=True, env=env)
        wall = time.monotonic() - start
    row = {"file": str(path), "op": op, "device": device, "seed": seed, "wall_s": round(wall, 1)}
    try:
        v = json.loads(proc.stdout.strip().splitlines()[-1])
        v = v[0] if isinstance(v, list) else v
        row |= {
            "outcome": v.get("outcome") or ("accepted" if v["accepted"] else "rejected"),
            "category": v.get("category"),
            "reason": (v.get("reason") or "")[:300],
            "verdict_s": round(v.get("seconds", 0.0), 1),
            # Where the verdict's time went (records.Phases: truth, compile, start, cases,
            # checks): what to cut where one is over the bound. wall_s - verdict_s is the
            # process's start (imports, CUDA's) and its exit.
            "phases": v.get("phases"),
        }
    except (IndexError, ValueError, KeyError, TypeError):
        row |= {"outcome": "no verdict", "category": None, "verdict_s": None,
                "reason": f"exit {proc.returncode}: {_last_error(proc.stderr)}"}  # fmt: skip
    with log.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(f"{row['wall_s']:7.1f} s  {row['outcome']:<16} {row['category'] or '':<11} {path}",
          flush=True)  # fmt: skip
    return row


def _last_error(stderr: str) -> str:
    """A crashed judge's last traceback (where it died, not only torch's advice that ends an
    out-of-memory message), or its stderr's tail."""
    text = stderr.strip()
    at = text.rfind("Traceback (most recent call last)")
    return text[at:][-4000:] if at >= 0 else text[-1000:]


def table(rows: list[dict], title: str) -> None:
    """The verdicts, slowest first, and those past [V2]'s 60 s with where their time went."""
    out = Table(title=title)
    for col in ("file", "op", "outcome", "category", "wall s", "verdict s"):
        out.add_column(col, justify="right" if col.endswith(" s") else "left")
    for r in sorted(rows, key=lambda r: -r["wall_s"]):
        out.add_row(Path(r["file"]).name, r["op"], r["outcome"], r["category"] or "",
                    f"{r['wall_s']:.1f}", f"{r.get('verdict_s') or 0:.1f}")  # fmt: skip
    Console(width=140).print(out)
    slow = [r for r in rows if r["wall_s"] > 60]
    worst = max((r["wall_s"] for r in rows), default=0.0)
    print(f"{len(rows)} verdicts, {len(slow)} over 60 s, slowest {worst} s")
    for r in slow:
        p = r.get("phases") or {}
        # The slowest compile is the candidate's own floor; what is past it is the judge's.
        # (Older logs hold its seconds in its name.)
        floor = p.get("slowest_compile_s") or 0.0
        past = f": {floor:.1f} s, {r['wall_s'] - floor:.1f} s past it" if floor else ""
        print(f"  {Path(r['file']).name} ({r['op']}): truth {p.get('truth')} "
              f"compile {p.get('compile')} cases {p.get('cases')}, "
              f"slowest compile {p.get('slowest_compile')}{past}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--table", type=Path, help="print the table of this verdict log, and stop")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "evaluations/logs")))
    args = ap.parse_args()
    if args.table is not None:
        if args.table.is_file():
            lines = args.table.read_text().splitlines()
            table([json.loads(x) for x in lines if x.strip()], str(args.table))
        return
    if not args.paths:
        ap.error("a candidate PATH, or --table LOG")
    todo = candidates(args.paths)
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "cold-verdicts.jsonl"
    with ThreadPoolExecutor(max(1, args.parallel)) as ex:
        rows = list(ex.map(lambda c: judge(*c, args.device, args.seed, log, args.parallel), todo))
    table(rows, f"cold verdicts on {args.device}, seed {args.seed}, {args.parallel} at once")


if __name__ == "__main__":
    main()
