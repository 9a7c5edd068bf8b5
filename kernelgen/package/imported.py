"""An imported problem's library entry: kernelgen_ops.kernelbench.<op>, the kernel always.

An imported problem (a KernelBench Model, SPEC.origin set) is promoted like an operator: the
same evidence (an accepted candidate with a CUDA verdict, memcheck and CUDA timings), the same
module (the candidate under its provenance header, its configs in configs/<op>.json, lean
launches) and a MANIFEST.json entry. What it lacks is what an operator's author writes by hand
in _contracts.py: what it accepts, its fake output, its bucket dims and torch's own op. So its
entry differs, and is kept apart from the operators, in kernelgen_ops/kernelbench.py (generated
here from MANIFEST.json's "kernelbench"), as the status page and `kernelgen ops` keep imports
apart:
- The kernel takes every call. No torch fallback stands behind it: torch's version of a
  problem is the caller's own Model, which the caller has. The library could only have it by
  embedding the benchmark's file (SPEC's SOURCE) and the import's machinery that runs it at a
  call's sizes (the module executed again with its size constants, the state swapped in:
  kernelgen/kernelbench/runtime.py), a copy of the pipeline inside a library that needs
  nothing but torch and triton. Nor is there evidence to dispatch on: an imported problem is
  timed at its own size alone and declares no bucket, so no row could send a call to torch's
  op. set_dispatch() therefore does not apply to it.
- No routes: a whole Model's forward is no torch function whose calls could be sent to it.
- Its call checks what the judge verified, from the spec, recorded in the entry (Accepts):
  each tensor's dtype, rank and device, contiguity where only contiguous tensors were drawn,
  no gradient wanted, and a scalar at the one value the problem fixes.
- Not a torch custom op: a fake output needs the Model's shapes, which the library does not
  carry either.
"""

from __future__ import annotations

import textwrap
from string import Template

from kernelgen.package.header import WIDTH, times
from kernelgen.package.manifest import Accepts, ImportedProblem, Manifest
from kernelgen.spec import OpSpec, ScalarInput, TensorInput, load_spec
from kernelgen.spec.origin import IMPORTED_NAME

MODULE = "kernelbench"  # kernelgen_ops.kernelbench: the file kernelgen_ops/kernelbench.py


def imported(op: str) -> OpSpec | None:
    """The spec of `op` where it is an imported problem (named kb<level>_<n>_<title>, as the
    import names it, and with SPEC.origin), else None. The name decides first: an operator's
    promotion reads nothing more than it did."""
    if not IMPORTED_NAME.match(op):
        return None
    spec = load_spec(op)
    return spec if spec.data.origin is not None else None


def origin(spec: OpSpec) -> ImportedProblem:
    o = spec.data.origin
    assert o is not None
    fields = ("source", "file", "sha256", "level", "problem", "title")
    return ImportedProblem(**{f: getattr(o, f) for f in fields})


def accepts(spec: OpSpec) -> list[Accepts]:
    """What the judge drew for each parameter of the reference: the call's checks."""
    data = spec.data
    case_dtypes = list(dict.fromkeys([*data.dtypes, *(data.domain.dtypes if data.domain else [])]))
    layouts = {str(s.layout) for s in data.sizes} | set(data.domain.layouts if data.domain else [])
    strided = bool(layouts - {"contiguous"})
    out = []
    for item in data.inputs:
        if isinstance(item, ScalarInput):
            fixed = item.draw is None and item.dim is None
            out.append(Accepts(name=item.name, value=item.value if fixed else None))
            continue
        assert isinstance(item, TensorInput)
        out.append(
            Accepts(
                name=item.name,
                dtypes=case_dtypes if item.dtype == "case" else [item.dtype],
                rank=len(item.shape),
                contiguous=not (item.layout_varies and strided),
            )
        )
    return out


_HEAD = '''\
# ruff: noqa: E501 (a KernelBench problem's name can take most of a line by itself)
"""kernelgen_ops.kernelbench: kernels for imported benchmark problems (KernelBench).

Written by `kernelgen promote` from MANIFEST.json ("kernelbench"): do not edit by hand.

$listing

Each is the kernel kernelgen verified and measured for one problem's Model: its inputs, then the
Model's parameters and buffers, in the order of the reference (references/<op>.py where it was
promoted). A call always takes the kernel: torch's version is the caller's own Model, the
kernels were timed at the problem's own size alone (no dispatch table), no torch call is routed
here, and set_dispatch() does not apply. A call is checked against what the judge drew: each
tensor's dtype, rank and device, contiguity where only contiguous tensors were drawn, no
gradient wanted, and a scalar at the one value the problem gives it. These are plain functions,
not torch custom ops (their output shapes are the Model's, which the library does not hold).
available() gives each kernel's provenance and the problem it came from.
"""

import json

import torch

from . import _runtime
'''

_CHECK = '''
__all__ = [$all]

# Per parameter: (name, dtypes or None for a scalar, rank, contiguous only, the scalar's value).
_Accepts = tuple[tuple[str, tuple[torch.dtype, ...] | None, int, bool, object], ...]


def available() -> dict[str, dict]:
    """Each kernel's provenance: source, run, device, speedups, and the problem it came from."""
    return json.loads(json.dumps(_runtime.manifest().get("kernelbench", {})))


def _check(op: str, accepts: _Accepts, args: tuple) -> None:
    for (name, dtypes, rank, contiguous, value), arg in zip(accepts, args, strict=True):
        where = f"kernelgen_ops.kernelbench.{op}: {name}"
        if dtypes is None:
            if value is not None and (type(arg) is not type(value) or arg != value):
                raise ValueError(f"{where} is {arg!r}; the kernel was verified at {value!r} only")
            continue
        if not isinstance(arg, torch.Tensor):
            raise TypeError(f"{where} must be a tensor, got {type(arg).__name__}")
        if arg.dtype not in dtypes:
            verified = ", ".join(str(d) for d in dtypes)
            raise TypeError(f"{where} is {arg.dtype}; the kernel was verified for {verified} only")
        if arg.dim() != rank:
            raise ValueError(f"{where} has {arg.dim()} dims; the kernel takes {rank}")
        if not arg.is_cuda and not (_runtime.INTERPRET and arg.device.type == "cpu"):
            raise ValueError(
                f"{where} is on {arg.device}; the kernels run on CUDA (on CPU only under "
                "TRITON_INTERPRET=1)"
            )
        if contiguous and not arg.is_contiguous():
            raise ValueError(
                f"{where} is not contiguous; the kernel was verified on contiguous tensors only"
            )
        if arg.requires_grad and torch.is_grad_enabled():
            raise RuntimeError(
                f"{where} requires grad and the kernel has no backward: call it under "
                "torch.no_grad() or torch.inference_mode()"
            )
'''

_OP = """

$comment
$accepts


$public_def
    $doc
    $check
    $launch
"""


def _wrap(text: str, indent: str, prefix: str = "") -> list[str]:
    width = WIDTH - len(indent) - len(prefix)
    return [f"{indent}{prefix}{line}".rstrip() for line in textwrap.wrap(text, width) or [""]]


def _def(name: str, params: list[str], returns: str) -> str:
    one = f"def {name}({', '.join(params)}) -> {returns}:"
    if len(one) <= WIDTH:
        return one
    return f"def {name}(\n" + "".join(f"    {p},\n" for p in params) + f") -> {returns}:"


def _import(op: str) -> str:
    one = f"from . import {op} as _{op}\n"
    return one if len(one) <= WIDTH + 1 else f"from . import (\n    {op} as _{op},\n)\n"


def _call(head: str, args: list[str]) -> str:
    """A call in a function body as ruff format writes it: on one line, else its arguments on
    one line of their own, else one a line with a trailing comma."""
    one = f"    {head}({', '.join(args)})"
    if len(one) <= WIDTH:
        return one.lstrip()
    inner = f"        {', '.join(args)}"
    if len(inner) <= WIDTH:
        return f"{head}(\n{inner}\n    )"
    return f"{head}(\n" + "".join(f"        {a},\n" for a in args) + "    )"


def _accepts_literal(op: str, items: list[Accepts]) -> str:
    """`_<op>_accepts: _Accepts = (...)`: on one line where it fits, else a row a line."""
    prefix = f"_{op}_accepts: _Accepts = "
    rows = []
    for a in items:
        if a.rank is None:
            rows.append(f'("{a.name}", None, 0, False, {a.value!r})')
        else:
            dtypes = ", ".join(f"torch.{d}" for d in a.dtypes) + ("," if len(a.dtypes) == 1 else "")
            rows.append(f'("{a.name}", ({dtypes}), {a.rank}, {a.contiguous}, None)')
    one = f"{prefix}({', '.join(rows)},)"
    if len(one) <= WIDTH:
        return one
    return prefix + "(\n" + "".join(f"    {r},\n" for r in rows) + ")"


def render_kernelbench(manifest: Manifest) -> str:
    """kernelgen_ops/kernelbench.py for the imported problems in `manifest`."""
    ops = sorted(manifest.kernelbench)
    listing, blocks = [], []
    for op in ops:
        e = manifest.kernelbench[op]
        o = e.origin
        best = times(e.best_peer.geomean) if e.best_peer else "-"
        which = f"{e.proposer} run {e.run_id}/{e.candidate_id}"
        listing.append(f"    {op}(...): {best} vs best peer ({e.run_id}/{e.candidate_id})")
        doc = _wrap('"""' + e.summary, "    ") + [""]
        doc += _wrap(
            f"Kernel: {which} on {e.device}, {best} vs the best peer; see "
            f'kernelgen_ops.kernelbench.available()["{op}"].',
            "    ",
        )
        params = [f"{p.name}: {p.annotation}" for p in e.params]
        names = [p.name for p in e.params]
        args = ", ".join(names)
        given = f"({args},)" if len(names) == 1 else f"({args})"
        blocks.append(
            _substitute(
                _OP,
                op=op,
                comment="\n".join(_wrap(f"{op}: {o.file} (sha256 {o.sha256[:12]})", "", "# ")),
                accepts=_accepts_literal(op, e.accepts),
                public_def=_def(op, params, e.returns),
                doc="\n".join(doc).lstrip() + '\n    """',
                check=_call("_check", [f'"{op}"', f"_{op}_accepts", given]),
                launch=_call(f"return _{op}.{op}", names),
            )
        )
    imports = "".join(_import(op) for op in ops)
    names = ", ".join(f'"{op}"' for op in ops)
    if len(f"__all__ = [{names}]") > WIDTH:
        names = "\n" + "".join(f'    "{op}",\n' for op in ops)
    head = _substitute(_HEAD, listing="\n".join(listing))
    return head + imports + _substitute(_CHECK, all=names) + "".join(blocks)


def _substitute(template: str, **values: str) -> str:
    return Template(template).substitute(values)
