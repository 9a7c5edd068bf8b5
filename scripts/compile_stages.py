"""Where one kernel's compile goes: each of Triton's stages (ttir, ttgir, llir, ptx, cubin) timed
for one specialization, compiled for sm_90 on this machine (no GPU needed: the stages are
Triton's frontend, LLVM and the bundled ptxas).

A cold verdict cannot come sooner than the slowest compile the candidate needs. This tells how
much of that is the candidate's own (a whole-row block of 262144 columns is almost all ptxas,
one process that no number of compile runners splits) and how much is the judge's.

  python scripts/compile_stages.py FILE KERNEL --arg y_ptr=*fp16 --arg n_cols=i32 ...
      --const BLOCK=262144 [--warps 4] [--stages 3]

FILE is a candidate's source, KERNEL a @triton.jit function in it; each --arg is a parameter's
Triton type in order of the signature, each --const a constexpr's value.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kernelgen.errors import SpecError
from kernelgen.spec import load_module
from kernelgen.verify.target import DEFAULT, TARGETS


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise SystemExit(f"{what} {item!r}: expected NAME=VALUE")
        out[name] = value
    return out


def _kernel(path: Path, name: str):
    try:
        module = load_module(path, path.stem)
    except SpecError as e:
        raise SystemExit(str(e)) from None
    kernel = getattr(module, name, None)
    if kernel is None:
        raise SystemExit(f"{path}: no {name!r} in it")
    return kernel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("file", type=Path)
    ap.add_argument("kernel")
    ap.add_argument("--arg", action="append", default=[], help="NAME=TYPE, e.g. x_ptr=*fp16")
    ap.add_argument("--const", action="append", default=[], help="NAME=INT")
    ap.add_argument("--warps", type=int, default=4)
    ap.add_argument("--stages", type=int, default=3)
    a = ap.parse_args()
    os.environ.pop("TRITON_INTERPRET", None)  # the compiler, not the interpreter
    # A cold compile: a cached one would time nothing.
    cache = os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="compile-stages-")

    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.compiler import ASTSource, compile

    try:
        consts = {k: int(v) for k, v in _pairs(a.const, "--const").items()}
    except ValueError as e:
        raise SystemExit(f"--const: an integer value expected ({e})") from None
    sig = {**_pairs(a.arg, "--arg"), **dict.fromkeys(consts, "constexpr")}
    spent: dict[str, float] = {}
    add_stages = CUDABackend.add_stages

    def timed(self, stages, options, *rest):
        add_stages(self, stages, options, *rest)
        for name, stage in list(stages.items()):

            def run(src, meta, stage=stage, name=name):
                start = time.perf_counter()
                try:
                    return stage(src, meta)
                finally:
                    spent[name] = time.perf_counter() - start

            stages[name] = run

    CUDABackend.add_stages = timed
    kernel = _kernel(a.file, a.kernel)
    src = ASTSource(kernel, sig, constexprs=consts)
    start = time.perf_counter()
    compiled = compile(
        src,
        target=GPUTarget(*TARGETS[DEFAULT]),
        options={"num_warps": a.warps, "num_stages": a.stages},
    )
    total = time.perf_counter() - start
    shutil.rmtree(cache, ignore_errors=True)

    console = Console()
    console.print(f"{a.kernel}, {consts}, {a.warps} warps, for {DEFAULT}: {total:.1f} s")
    table = Table()
    table.add_column("stage")
    table.add_column("s", justify="right")
    table.add_column("share", justify="right")
    for name, s in spent.items():
        table.add_row(name, f"{s:.1f}", f"{s / total:.0%}")
    rest = total - sum(spent.values())
    table.add_row("the rest (parse, hash, cache)", f"{rest:.1f}", f"{rest / total:.0%}")
    console.print(table)
    console.print(f"shared memory {compiled.metadata.shared} B; this host: {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
