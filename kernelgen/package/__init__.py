"""Promotion: write a candidate into the production library, generated/kernelgen_ops/.

    promote(op, source, configs, provenance)     any source, with the provenance it is shipped with
    promote_from_run(op, run_id, candidate_id)   an accepted, CUDA-measured candidate of a run

A promotion writes the operator's module (the candidate source under a provenance header, its
TUNED / DEFAULT_CONFIG tables turned into loads from configs/<op>.json, and a last line that makes
its kernels launch lean), the config JSON, the MANIFEST.json entry and a regenerated __init__.py.
It builds the whole new library in a sibling folder, checks that it compiles and imports, then
swaps the folders: an interruption at any point leaves the old library or the new one in place,
never a mix (a swap cut between its two renames is undone by the next promotion).

The library's hand-written files (_runtime.py, _launch.py, _contracts.py, _routing.py) are
carried over unchanged; _contracts.py must know an operator (check_<op>, fake_<op>) before it can
be promoted.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from string import Template
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kernelgen import paths, store, syntax, tuning
from kernelgen.bench import MIN_GAIN
from kernelgen.errors import KernelgenError
from kernelgen.records import BenchRecord, CandidateRecord, now
from kernelgen.spec import load_spec

HAND_WRITTEN = (
    "_runtime.py",
    "_launch.py",
    "_plans.py",
    "_calls.py",
    "_contracts.py",
    "_routing.py",
)
_TEMPLATES = Path(__file__).parent / "templates"
_IMPORT_CHECK_TIMEOUT_S = 300
# What `import kernelgen_ops` must never pull in: the library needs torch and triton only.
PIPELINE_MODULES = ("kernelgen", "openai", "pydantic", "typer", "rich")

Configs = dict[str, dict[str, dict[str, Any]]]


class PromoteError(KernelgenError):
    """A candidate that cannot be promoted, or a library that cannot take it."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShapeSpeedup(_Model):
    """One benchmark shape of the promoted kernel, against its three baselines."""

    shape: str
    dtype: str
    median_us: float
    eager: float | None = Field(None, description="torch eager time / this time")
    compile: float | None = Field(None, description="torch.compile time / this time")
    seed: float | None = Field(None, description="seed kernel time / this time")
    host_us: float | None = Field(None, description="wall time per back-to-back call")
    eager_us: float | None = Field(None, description="torch eager's median, same run")
    eager_host_us: float | None = Field(None, description="torch eager's host time per call")
    bound: Literal["memory", "compute", "launch"] | None = Field(
        None, description="what bounds the shape (roofline); None: a record from before it"
    )


class Provenance(_Model):
    """Where a promoted kernel came from and what it measured."""

    op: str
    source: str = Field(description="the promoted file, relative to the project root")
    run_id: str | None = None
    candidate_id: str | None = None
    record: str | None = Field(None, description="evaluations/<op>/<run>/candidates/<id>/...")
    proposer: str = Field(description="llm, tune, replay, files; 'seed' for an unmeasured seed")
    model: str | None = None
    round: int | None = None
    parent: str | None = None
    device: str | None = Field(None, description="GPU the timings were taken on; None: none")
    driver: str | None = None
    cuda: str | None = None
    torch: str | None = None
    triton: str | None = None
    speedups: list[ShapeSpeedup] | None = Field(None, description="None: never measured")
    peers: Literal["eager", "reference"] | None = Field(
        None,
        description="what 'eager' and 'torch.compile' ran: references/<op>.py's `eager` (the op "
        "as torch users call it) or the reference as written (None: a record older than that)",
    )
    geomean_eager: float | None = None
    geomean_compile: float | None = None
    geomean_seed: float | None = None
    sha256: str = Field(description="of the source as judged, before the promotion rewrites it")
    promoted: str = Field(default_factory=now)
    note: str | None = None
    measured: bool = Field(False, description="derived: timed on a GPU (device and speedups)")

    @model_validator(mode="after")
    def _derive_measured(self) -> Provenance:
        self.measured = self.device is not None and self.speedups is not None
        return self


class Param(_Model):
    name: str
    annotation: str
    default: str | None = Field(None, description="source text of the default")


class ManifestEntry(Provenance):
    """Provenance plus what the generated __init__.py needs to expose the operator."""

    params: list[Param]
    returns: str
    summary: str = Field(description="first line of the reference's docstring")
    tuned_on: list[str] = Field(default_factory=list, description="device keys in configs/")


class Manifest(_Model):
    format: Literal[1] = 1
    library: Literal["kernelgen_ops"] = "kernelgen_ops"
    ops: dict[str, ManifestEntry] = Field(default_factory=dict)


def sha256(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def device_key(device: str, triton_version: str) -> str:
    """How configs/<op>.json names the table of one device under one Triton version."""
    return f"{device}|triton-{triton_version}"


# ---------------------------------------------------------------- reading sources


def _parse(source: str, where: str) -> ast.Module:
    try:
        return syntax.parse(source)
    except SyntaxError as e:
        raise PromoteError(f"{where}: line {e.lineno}: {e.msg}") from None


def _entry(tree: ast.Module, op: str, where: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == op:
            return node
    raise PromoteError(f"{where}: no top-level function {op}()")


def reference_api(op: str) -> tuple[list[Param], str, str]:
    """The public signature (params, return annotation) and summary from references/<op>.py."""
    path = paths.references_dir() / f"{op}.py"
    if not path.is_file():
        raise PromoteError(f"{path}: missing; the library exposes the reference's signature")
    tree = _parse(path.read_text(), str(path))
    fn = _entry(tree, op, str(path))
    a = fn.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg:
        raise PromoteError(f"{path}: {op}() must take plain positional-or-keyword parameters")
    defaults: list[ast.expr | None] = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults)
    params = []
    for arg, default in zip(a.args, defaults, strict=True):
        if arg.annotation is None:
            raise PromoteError(f"{path}: parameter {arg.arg!r} of {op}() needs a type annotation")
        params.append(
            Param(
                name=arg.arg,
                annotation=ast.unparse(arg.annotation),
                default=None if default is None else ast.unparse(default),
            )
        )
    if fn.returns is None:
        raise PromoteError(f"{path}: {op}() needs a return annotation")
    # The docstring's first paragraph, on one line.
    doc = " ".join((ast.get_docstring(tree) or op).strip().split("\n\n")[0].split())
    return params, ast.unparse(fn.returns), doc


def _check_signature(tree: ast.Module, op: str, params: list[Param], where: str) -> None:
    got = [a.arg for a in _entry(tree, op, where).args.args]
    want = [p.name for p in params]
    if got != want:
        raise PromoteError(f"{where}: {op}({', '.join(got)}) differs from the reference {want}")


def _literal_dict(node: ast.Assign | ast.AnnAssign, name: str, where: str) -> dict | None:
    """The dict a top-level assignment binds, or None when it is computed, not a literal."""
    if isinstance(node, ast.Assign) and len(node.targets) != 1:
        raise PromoteError(f"{where}: line {node.lineno}: assign {name} on its own")
    try:
        value = ast.literal_eval(node.value)  # type: ignore[arg-type]
    except ValueError:
        return None
    if not isinstance(value, dict):
        raise PromoteError(f"{where}: line {node.lineno}: {name} must be a dict")
    return value


def tuning_tables(source: str, where: str = "candidate") -> tuple[dict, dict]:
    """(DEFAULT_CONFIG, TUNED) as the candidate source writes them; {} where it has none."""
    tree = _parse(source, where)
    out = []
    for name in ("DEFAULT_CONFIG", "TUNED"):
        node = tuning.assignment(tree, name)
        out.append((_literal_dict(node, name, where) if node else None) or {})
    return out[0], out[1]


# ---------------------------------------------------------------- writing the module


def _dash(x: object) -> str:
    return "-" if x is None else str(x)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def peer_name(p: Provenance) -> str:
    """What the record's 'eager' ran, so that no figure names an unnamed peer."""
    ref = f"references/{p.op}.py"
    if p.peers == "eager":
        return f"{ref}:eager, the op as torch users call it"
    spec = load_spec(p.op)
    if spec.eager is spec.reference:
        return f"{ref}:{p.op}, which is how torch users compute it"
    return f"{ref}:{p.op} as written, not {ref}:eager (the figures overstate the gain)"


def render_header(p: Provenance, dispatch: dict[str, dict[str, Any]] | None = None) -> str:
    lines = [
        f"kernelgen_ops.{p.op}: written by `kernelgen promote`; do not edit, promote again.",
        "The source below is the candidate as judged, except for this header, the two config",
        f"loads (TUNED, DEFAULT_CONFIG come from configs/{p.op}.json) and the last line (lean",
        "launches, see _launch.py); ruff leaves it as it is.",
        "",
        f"source    {p.source}",
        f"record    {p.record or 'none: promoted without a run'}",
        f"proposer  {p.proposer} (model {p.model or '-'}, round {_dash(p.round)}, "
        f"parent {p.parent or '-'})",
    ]
    if p.measured:
        lines.append(
            f"device    {p.device} (driver {p.driver or '-'}, CUDA {p.cuda or '-'}, "
            f"torch {p.torch or '-'}, Triton {p.triton or '-'})"
        )
        lines.append(
            f"speedups  geomean {_fmt(p.geomean_eager)} vs eager, {_fmt(p.geomean_compile)} vs "
            f"torch.compile, {_fmt(p.geomean_seed)} vs seed"
        )
        lines += textwrap.wrap(
            f"peers     eager = {peer_name(p)}; torch.compile of the same",
            _WIDTH - 2,
            subsequent_indent="          ",
        )
        for s in p.speedups or []:
            lines.append(
                f"          {s.shape} {s.dtype}: {s.median_us:.1f} us, {_fmt(s.eager)} eager, "
                f"{_fmt(s.compile)} compile, {_fmt(s.seed)} seed"
            )
        if dispatch:
            won = [str(r["shape"]) for r in dispatch.values() if r["kernel"]]
            lost = [str(r["shape"]) for r in dispatch.values() if not r["kernel"]]
            lines += textwrap.wrap(
                "dispatch  per call (host time counted at launch-bound shapes), against eager: "
                f"the kernel at {', '.join(won) or 'no shape'}; torch's op at "
                f"{', '.join(lost) or 'no shape'}",
                _WIDTH - 2,  # "# " comes before each line
                subsequent_indent="          ",
            )
    else:
        lines.append("device    none: NOT MEASURED on any GPU")
        lines.append("speedups  none: NOT MEASURED")
    lines += [f"sha256    {p.sha256}", f"promoted  {p.promoted}"]
    if p.note:
        first, *rest = textwrap.wrap(p.note, _WIDTH - 12)
        lines += [f"note      {first}", *(f"          {line}" for line in rest)]
    # Candidates are kept as judged (their hash is their provenance), so no linter or formatter
    # may rewrite them.
    lines += ["", "ruff: noqa", "fmt: off"]
    return "\n".join(f"# {line}".rstrip() for line in lines) + "\n"


def _names(tree: ast.Module) -> set[str]:
    """Every identifier the module binds or reads."""
    names: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(n.name)
        elif isinstance(n, ast.alias):
            names.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.arg):
            names.add(n.arg)
    return names


# The module's last line: its launched kernels go through _launch.LeanKernel, which calls a
# specialization's compiled kernel directly once Triton's own path has launched it (host time per
# call is what decides decode shapes). The launcher's source is unchanged; the kernels are the
# same objects underneath.
LEAN_LAUNCHES = (
    "\n\n# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).\n"
    "_runtime.lean_launches(globals())\n"
)


def rewrite_module(
    op: str, source: str, provenance: Provenance, dispatch: dict[str, dict[str, Any]] | None = None
) -> str:
    """The library module: header, then the source with its config tables loaded at run time."""
    where = provenance.source
    tree = _parse(source, where)
    if "_runtime" in _names(tree):
        raise PromoteError(f"{where}: uses the name _runtime, which the library module needs")
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    edits: list[tuple[int, int, str]] = []  # (first line, last line, text), 1-based inclusive
    loads = {
        "TUNED": f'TUNED = _runtime.tuned("{op}")  # per device: configs/{op}.json\n',
        "DEFAULT_CONFIG": f'DEFAULT_CONFIG = _runtime.default_config("{op}")  # configs/{op}.json'
        + "\n",
    }
    for name, text in loads.items():
        node = tuning.assignment(tree, name)
        if node is None or _literal_dict(node, name, where) is None:
            continue
        assert node.end_lineno is not None
        shared = [
            n
            for n in tree.body
            if n is not node
            and n.lineno <= node.end_lineno
            and (n.end_lineno or n.lineno) >= node.lineno
        ]
        if shared:
            raise PromoteError(f"{where}: line {node.lineno}: put {name} on lines of its own")
        edits.append((node.lineno, node.end_lineno, text))
    # `_runtime` after the imports that come before the first config load (or after the
    # docstring); both the loads and the last line need it.
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    first_edit = min((e[0] for e in edits), default=len(lines) + 1)
    before = [n for n in imports if (n.end_lineno or n.lineno) < first_edit]
    if before:
        at = max(n.end_lineno or n.lineno for n in before) + 1
    else:
        doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
        at = (doc.end_lineno or 0) + 1 if doc else 1
    edits.append((at, at - 1, "\nfrom . import _runtime\n"))  # an insertion: no line replaced
    for first, last, text in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[first - 1 : last] = [text]
    return render_header(provenance, dispatch) + "".join(lines) + LEAN_LAUNCHES


# ---------------------------------------------------------------- the manifest and __init__.py


def _template(name: str) -> Template:
    return Template((_TEMPLATES / name).read_text())


_WIDTH = 100  # the project's line length: the rendered __init__.py passes ruff unchanged


def _all_names(ops: list[str]) -> str:
    """The inside of __all__'s brackets: one line where it fits in 100 columns, else one name a
    line, as ruff format writes it."""
    one = ", ".join(f'"{op}"' for op in ops)
    if len(f"__all__ = [{one}]") <= _WIDTH:
        return one
    return "\n" + "".join(f'    "{op}",\n' for op in ops)


def _def(name: str, params: list[str], returns: str) -> str:
    one = f"def {name}({', '.join(params)}) -> {returns}:"
    if len(one) <= _WIDTH:
        return one
    # One parameter per line with a trailing comma: the layout ruff format keeps as it is.
    return f"def {name}(\n" + "".join(f"    {p},\n" for p in params) + f") -> {returns}:"


def _wrap(text: str, indent: str, prefix: str = "") -> list[str]:
    width = _WIDTH - len(indent) - len(prefix)
    return [f"{indent}{prefix}{line}".rstrip() for line in textwrap.wrap(text, width) or [""]]


def render_init(manifest: Manifest) -> str:
    """The library's __init__.py for the operators in `manifest` (see templates/ops_*.tmpl)."""
    ops = sorted(manifest.ops)
    width = max((len(f"kernelgen_ops.{op}(...)") for op in ops), default=0)
    listing, imports, blocks = [], [], []
    block = _template("ops_op.py.tmpl")
    for op in ops:
        e = manifest.ops[op]
        params = [
            f"{p.name}: {p.annotation}" + ("" if p.default is None else f" = {p.default}")
            for p in e.params
        ]
        args = ", ".join(p.name for p in e.params)
        if e.measured:
            which = f"{e.proposer} run {e.run_id}/{e.candidate_id}" if e.run_id else "the seed"
            origin = f"{which} on {e.device}, {_fmt(e.geomean_eager)} vs eager"
            short = f"{e.run_id}/{e.candidate_id}" if e.run_id else "seed"
            short += f", {_fmt(e.geomean_eager)} vs eager"
        else:
            origin = short = f"{e.source}, {e.proposer}, not measured"
        listing.append(f"    {f'kernelgen_ops.{op}(...)':<{width}}  {short}")
        imports.append(f"from . import {op} as _{op}")
        doc = _wrap('"""' + e.summary, "    ") + [""]  # the quotes count in the first line
        doc += _wrap(f'Kernel: {origin}; see kernelgen_ops.available()["{op}"].', "    ")
        blocks.append(
            block.substitute(
                op=op,
                args=args,
                comment="\n".join(_wrap(f"{op}: {origin}", "", "# ")),
                impl_def=_def(f"_{op}_impl", params, e.returns),
                fake_def=_def(f"_{op}_fake", params, e.returns),
                public_def=_def(op, params, e.returns),
                doc="\n".join(doc).lstrip() + '\n    """',
            )
        )
    return (
        _template("ops_init.py.tmpl")
        .substitute(
            listing="\n".join(listing) or "    (no operators yet)",
            imports="\n".join(imports),
            all=_all_names(ops),
            blocks="".join(blocks),
        )
        .rstrip("\n")
        + "\n"
    )


def write_init(manifest: Manifest, library: Path | None = None) -> Path:
    """Render __init__.py from `manifest` into `library` (default: generated/kernelgen_ops)."""
    path = (library or paths.library_dir()) / "__init__.py"
    store.write_atomic(path, render_init(manifest))
    return path


def load_manifest(library: Path) -> Manifest:
    path = library / "MANIFEST.json"
    if not path.is_file():
        return Manifest()
    try:
        return Manifest.model_validate_json(path.read_text())
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise PromoteError(f"{path}: {where}: {err['msg']}") from None


# ---------------------------------------------------------------- building and swapping


def _check_hand_written(library: Path, op: str) -> None:
    missing = [name for name in HAND_WRITTEN if not (library / name).is_file()]
    if missing:
        raise PromoteError(f"{library}: missing {', '.join(missing)} (hand-written, kept in git)")
    tree = _parse((library / "_contracts.py").read_text(), str(library / "_contracts.py"))
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    needed = (f"check_{op}", f"fake_{op}", f"dims_{op}", f"torch_{op}")
    lacking = [f for f in needed if f not in defined]
    if lacking:
        raise PromoteError(
            f"{library / '_contracts.py'}: no {' or '.join(lacking)}: write what {op} accepts, "
            "its fake output, its bucket dims and torch's own op before promoting it"
        )


def _validate(folder: Path) -> None:
    """Every file parses; the package imports in a fresh process without pipeline modules."""
    for path in sorted(folder.rglob("*.py")):
        try:
            compile(path.read_text(), str(path), "exec")
        except SyntaxError as e:
            raise PromoteError(f"{path.name}: line {e.lineno}: {e.msg}") from None
    for path in sorted(folder.rglob("*.json")):
        try:
            json.loads(path.read_text())
        except ValueError as e:
            raise PromoteError(f"{path.name}: {e}") from None


_IMPORT_CHECK = """
import importlib.util, sys
root = sys.argv[1]
spec = importlib.util.spec_from_file_location(
    "kernelgen_ops", root + "/__init__.py", submodule_search_locations=[root])
mod = importlib.util.module_from_spec(spec)
sys.modules["kernelgen_ops"] = mod
spec.loader.exec_module(mod)
missing = [op for op in mod.available() if not callable(getattr(mod, op, None))]
if missing:
    sys.exit(f"operators in MANIFEST.json but not exposed: {missing}")
leaked = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[2:]))
if leaked:
    sys.exit(f"importing the library imports {leaked}")
"""


def _import_check(folder: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _IMPORT_CHECK, str(folder), *PIPELINE_MODULES],
            capture_output=True,
            text=True,
            timeout=_IMPORT_CHECK_TIMEOUT_S,
            env=env,
            cwd=folder.parent,
        )
    except subprocess.TimeoutExpired:
        raise PromoteError(
            f"importing the new library took over {_IMPORT_CHECK_TIMEOUT_S}s"
        ) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise PromoteError(f"the new library does not import: {last}")


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One promotion at a time per generated/ folder (a lock on the folder itself)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no concurrent promotions expected there
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def recover(library: Path) -> None:
    """Finish or undo what an interrupted promotion left beside `library`."""
    parent, name = library.parent, library.name
    for stale in parent.glob(f".{name}.new-*"):
        shutil.rmtree(stale, ignore_errors=True)
    olds = sorted(parent.glob(f".{name}.old-*"), key=lambda p: p.stat().st_mtime)
    if olds and not library.exists():
        # Cut between the swap's two renames: the old library is complete; put it back.
        os.rename(olds.pop(), library)
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


def _swap(new: Path, library: Path) -> None:
    old = library.with_name(f".{library.name}.old-{secrets.token_hex(4)}")
    os.rename(library, old)
    try:
        os.rename(new, library)
    except BaseException:
        os.rename(old, library)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _per_call(device_us: float, host_us: float | None) -> float:
    """What one call costs a caller making calls back to back: the device time, or the host
    time where launching is the slower part (decode shapes)."""
    return max(device_us, host_us or 0.0)


def _host_counts(s: ShapeSpeedup) -> bool:
    """Host time decides only where the kernel is launch-bound (decode shapes). Elsewhere a
    model's launches run ahead of a busy GPU and their host time hides behind earlier kernels:
    counting it there sent rms_norm 4096x4096 to torch's op (24.3 us on the device) from a
    kernel of 18.6 us, for a host time of 39.9 us measured on Triton's launch path. A record
    without the bound counts it everywhere, as before."""
    return s.host_us is not None and s.eager_host_us is not None and s.bound in ("launch", None)


# The kernel takes a shape only where it beat torch's op per call by this much: a tie is torch's,
# the path a user gets without the library. Measured on the H200 (session 15): softmax 1x32000
# per call 12.94 us against 12.95 and 16x32000 13.70 against 13.47, a re-measurement of the same
# kernel flipping both; the library bench then timed the kernel's direct call 5.8 us slower on the
# host there. The margin is promotion's floor.
DISPATCH_MARGIN = MIN_GAIN


def dispatch_table(op: str, provenance: Provenance) -> dict[str, dict[str, object]]:
    """Per benchmark shape of a measured provenance, under its bucket key (the spec's bucket
    dims rounded up to powers of two, as in the tuned tables): whether the kernel beat torch's
    op per call by DISPATCH_MARGIN, host time included at launch-bound shapes (_host_counts).
    Shapes without an eager time, or no longer in the spec, are left out (no evidence)."""
    if not provenance.measured or not provenance.speedups:
        return {}
    spec = load_spec(op)
    by_name = {b.name: b for b in spec.data.bench}
    table: dict[str, dict[str, object]] = {}
    for s in provenance.speedups:
        bench = by_name.get(s.shape)
        eager_us = s.eager_us
        if eager_us is None and s.eager:  # a record from before the raw times were kept
            eager_us = s.median_us * s.eager
        if bench is None or eager_us is None or not spec.data.bucket:
            continue
        key = spec.bucket_key(bench.dims)
        host = _host_counts(s)
        kernel = _per_call(s.median_us, s.host_us if host else None)
        torch_op = _per_call(eager_us, s.eager_host_us if host else None)
        table[key] = {
            "shape": s.shape,
            "kernel_us": round(kernel, 2),
            "torch_us": round(torch_op, 2),
            # What torch's op costs per call at the least, whatever its launch costs: the rule
            # at launch-bound shapes (kernelgen_ops/_runtime.py, _wins_on_a_slow_host).
            "torch_device_us": round(eager_us, 2),
            # The kernel's device time: all a call costs inside a CUDA graph, which the
            # library weighs alone under set_dispatch("device") (_runtime.takes_kernel_on_device).
            "kernel_device_us": round(s.median_us, 2),
            "host_included": host,
            "kernel": kernel < torch_op * (1 - DISPATCH_MARGIN),
        }
    return table


def promote(
    op: str,
    source: str,
    configs: Configs | None,
    provenance: Provenance,
    *,
    library: Path | None = None,
    check_import: bool = True,
) -> Path:
    """Write `source` into the library as operator `op` and return the library folder.

    `configs` maps device keys ("NVIDIA H200|triton-3.6.0", see device_key) to bucket tables
    ({"4096x4096": {"num_warps": 8}}); None takes the source's own TUNED table, keyed by the
    provenance's device. Tables of an earlier source of `op` are dropped: they were tuned for
    another kernel.
    """
    library = (library or paths.library_dir()).resolve()
    if provenance.op != op:
        raise PromoteError(f"provenance is for {provenance.op!r}, not {op!r}")
    if sha256(source) != provenance.sha256:
        raise PromoteError(f"{provenance.source}: sha256 differs from the provenance's")
    params, returns, summary = reference_api(op)
    where = provenance.source
    tree = _parse(source, where)
    _check_signature(tree, op, params, where)
    default, tuned = tuning_tables(source, where)
    if configs is None:
        configs = {}
        if tuned:
            if not (provenance.device and provenance.triton):
                raise PromoteError(f"{where}: a TUNED table needs the device it was tuned on")
            configs = {device_key(provenance.device, provenance.triton): tuned}
    if configs:
        node = tuning.assignment(tree, "TUNED")
        if node is None or _literal_dict(node, "TUNED", where) is None:
            raise PromoteError(
                f"{where}: has no literal TUNED table to load the tuned configs into"
            )
    # The contract first (checked again under the lock): the dispatch table needs the spec.
    _check_hand_written(library, op)
    dispatch = dispatch_table(op, provenance)
    module = rewrite_module(op, source, provenance, dispatch)
    config_json = {"op": op, "sha256": provenance.sha256, "default": default, "devices": configs}
    entry = ManifestEntry(
        **provenance.model_dump(),
        params=params,
        returns=returns,
        summary=summary,
        tuned_on=sorted(configs),
    )

    library.parent.mkdir(parents=True, exist_ok=True)
    with _locked(library.parent):
        recover(library)
        _check_hand_written(library, op)
        # Where the kernel won, from the same record as the provenance (see _runtime).
        config_json["dispatch"] = (
            {device_key(provenance.device, provenance.triton): dispatch}
            if dispatch and provenance.device and provenance.triton
            else {}
        )
        manifest = load_manifest(library)
        manifest.ops[op] = entry
        new = library.with_name(f".{library.name}.new-{secrets.token_hex(4)}")
        try:
            shutil.copytree(library, new, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            (new / f"{op}.py").write_text(module)
            (new / "configs").mkdir(exist_ok=True)
            (new / "configs" / f"{op}.json").write_text(_json(config_json))
            (new / "MANIFEST.json").write_text(manifest.model_dump_json(indent=2) + "\n")
            (new / "__init__.py").write_text(render_init(manifest))
            _validate(new)
            if check_import:
                _import_check(new)
            _swap(new, library)
        finally:
            shutil.rmtree(new, ignore_errors=True)
    return library


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


# ---------------------------------------------------------------- from a run


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.root()))
    except ValueError:
        return str(path)


def _measured(bench: BenchRecord) -> dict[str, object]:
    """The Provenance fields that come from a CUDA bench record."""
    env = bench.environment
    return {
        "device": env.gpu,
        "driver": env.driver,
        "cuda": env.cuda,
        "torch": env.torch,
        "triton": env.triton,
        "speedups": [
            ShapeSpeedup(
                shape=s.shape,
                dtype=s.dtype,
                median_us=s.candidate.median_us,
                eager=s.speedup_eager,
                compile=s.speedup_compile,
                seed=s.speedup_seed,
                host_us=s.candidate.host_us,
                eager_us=s.eager.median_us if s.eager else None,
                eager_host_us=s.eager.host_us if s.eager else None,
                bound=s.bound,
            )
            for s in bench.shapes
        ],
        "peers": bench.peers,
        "geomean_eager": bench.geomean_eager,
        "geomean_compile": bench.geomean_compile,
        "geomean_seed": bench.geomean_seed,
    }


def first_judged(op: str, digest: str) -> tuple[str, str, str, str] | None:
    """(created, run id, candidate id, proposer) of the earliest candidate record of `op` whose
    source has sha256 `digest`, or None. A kernel resubmitted unchanged in a later run (to be
    measured again) is promoted from that run; the header then says where it came from."""
    found = []
    for path in store.op_dir(op).glob("*/candidates/*/record.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):  # an unreadable record is no evidence either way
            continue
        judged = data.get("sha256") or (data.get("verdict") or {}).get("sha256")
        if judged == digest:
            found.append(
                (data.get("created") or "", path.parents[2].name, path.parent.name,
                 str(data.get("proposer")))
            )  # fmt: skip
    return min(found) if found else None


def provenance_of(op: str, run_id: str, cand: CandidateRecord, source: str) -> Provenance:
    assert cand.bench is not None
    digest = sha256(source)
    first = first_judged(op, digest)
    note = None
    if first is not None and (first[1], first[2]) != (run_id, cand.id):
        note = (
            f"this source was first judged as {first[3]} run {first[1]}/{first[2]}; run "
            f"{run_id} judged and measured it again unchanged, and its figures are the ones here"
        )
    return Provenance(
        op=op,
        source=_relative(store.candidate_path(op, run_id, cand.id)),
        run_id=run_id,
        candidate_id=cand.id,
        record=_relative(store.candidate_dir(op, run_id, cand.id) / "record.json"),
        proposer=cand.proposer,
        model=cand.model,
        round=cand.round,
        parent=cand.parent,
        sha256=digest,
        note=note,
        **_measured(cand.bench),
    )


def seed_source_with_sha(op: str, digest: str) -> str:
    """The version of seeds/<op>.py whose sha256 is `digest`: the file, or one in its git history
    (a record names the exact source it measured; the seed may have moved on since)."""
    rel = f"seeds/{op}.py"
    root = paths.root()
    current = (root / rel).read_text()
    if sha256(current) == digest:
        return current
    revs = subprocess.run(
        ["git", "log", "--format=%H", "--", rel],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    for rev in revs:
        shown = subprocess.run(
            ["git", "show", f"{rev}:{rel}"], cwd=root, capture_output=True, text=True, check=False
        )
        if shown.returncode == 0 and sha256(shown.stdout) == digest:
            return shown.stdout
    raise PromoteError(f"{rel}: no version (file or git history) has sha256 {digest[:12]}")


def provenance_of_bench(
    op: str, bench: BenchRecord, record: Path, source_name: str, source: str, note: str
) -> Provenance:
    """A kernel measured by `kernelgen bench` outside a run (the seeds, before any run wins)."""
    if sha256(source) != bench.sha256:
        raise PromoteError(
            f"{record}: measured sha256 {bench.sha256[:12]}, but the source "
            f"given hashes to {sha256(source)[:12]}"
        )
    return Provenance(
        op=op,
        source=source_name,
        record=_relative(record),
        proposer="seed",
        sha256=bench.sha256,
        note=note,
        **_measured(bench),
    )


def promote_from_run(op: str, run_id: str, candidate_id: str | None = None) -> Path:
    """Promote a run's best candidate (or `candidate_id`): it must be accepted and measured on
    CUDA. Marks the run promoted and returns the library folder."""
    run = store.load_run(op, run_id)
    candidates = {c.id: c for c in store.load_candidates(op, run_id)}
    cid = candidate_id or run.best
    if cid is None:
        raise PromoteError(
            f"run {run_id} of {op} kept no candidate over the seed: nothing to promote "
            "(pass --candidate ID to choose one)"
        )
    cand = candidates.get(cid)
    if cand is None:
        known = ", ".join(sorted(candidates)) or "none"
        raise PromoteError(f"run {run_id} of {op} has no candidate {cid!r} (it has: {known})")
    where = f"{op} {run_id}/{cid}"
    if cand.status != "accepted":
        why = f": {cand.category}: {cand.reason}" if cand.reason else ""
        raise PromoteError(
            f"{where} was not accepted ({cand.status}{why}); only accepted "
            "candidates can be promoted"
        )
    bench = cand.bench
    if bench is None or bench.environment.device != "cuda" or bench.environment.interpreter:
        raise PromoteError(
            f"{where} has no timings measured on CUDA; promote only what was "
            "measured on a GPU (run `kernelgen optimize` there)"
        )
    verdict = cand.verdict
    if verdict is None or verdict.device != "cuda" or not verdict.complete:
        got = "no verdict" if verdict is None else f"a {verdict.device} verdict ({verdict.outcome})"
        raise PromoteError(f"{where} has {got}; promotion needs a CUDA verdict with every case run")
    if "memcheck" not in verdict.sanitized:
        raise PromoteError(
            f"{where} was not run under compute-sanitizer (memcheck); promote what "
            "`kernelgen optimize --device cuda` checked before promotion"
        )
    source = store.candidate_source(op, run_id, cid)
    digest = sha256(source)
    judged = cand.sha256 or (cand.verdict.sha256 if cand.verdict else None)
    if judged is not None and judged != digest:
        raise PromoteError(
            f"{store.candidate_path(op, run_id, cid)} changed since it was judged "
            f"(sha256 {digest[:12]}, judged {judged[:12]})"
        )
    library = promote(op, source, None, provenance_of(op, run_id, cand, source))
    run.promoted = True
    store.save_run(run)
    return library


def promote_again(op: str, library: Path | None = None) -> Path:
    """Promote the library's kernel of `op` again from what its manifest records: the same source
    (found by its path, checked by its sha256), provenance, tuned configs and promotion date.
    What changes is only what promotion derives from them (the module's header, the dispatch
    table), after a change to how kernelgen derives it. Returns the library folder."""
    library = (library or paths.library_dir()).resolve()
    entry = load_manifest(library).ops.get(op)
    if entry is None:
        raise PromoteError(
            f"{library / 'MANIFEST.json'}: no {op!r} in ops; nothing to promote again"
        )
    path = paths.root() / entry.source
    if not path.is_file():
        raise PromoteError(f"{library / 'MANIFEST.json'}: ops.{op}.source: no file {path}")
    fields = set(Provenance.model_fields)
    provenance = Provenance(**entry.model_dump(include=fields - {"measured"}))
    configs_path = library / "configs" / f"{op}.json"
    configs = _read_configs(configs_path).get("devices") if configs_path.is_file() else None
    return promote(op, path.read_text(), configs or None, provenance, library=library)


def _read_configs(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise PromoteError(f"{path}: unreadable ({e})") from None
    if not isinstance(data, dict):
        raise PromoteError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data
