"""The library's __init__.py, rendered from MANIFEST.json (kernelgen/templates/ops_*.py.tmpl)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from string import Template

from kernelgen import paths, store
from kernelgen.package.header import WIDTH, times
from kernelgen.package.manifest import Manifest

_TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


def _template(name: str) -> Template:
    return Template((_TEMPLATES / name).read_text())


def _all_names(ops: list[str]) -> str:
    """The inside of __all__'s brackets: one line where it fits in 100 columns, else one name a
    line, as ruff format writes it."""
    one = ", ".join(f'"{op}"' for op in ops)
    if len(f"__all__ = [{one}]") <= WIDTH:
        return one
    return "\n" + "".join(f'    "{op}",\n' for op in ops)


def _def(name: str, params: list[str], returns: str) -> str:
    one = f"def {name}({', '.join(params)}) -> {returns}:"
    if len(one) <= WIDTH:
        return one
    # One parameter per line with a trailing comma: the layout ruff format keeps as it is.
    return f"def {name}(\n" + "".join(f"    {p},\n" for p in params) + f") -> {returns}:"


def _wrap(text: str, indent: str, prefix: str = "") -> list[str]:
    width = WIDTH - len(indent) - len(prefix)
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
            # The headline is against the fastest peer measured, not eager (see package/peers).
            best = times(e.best_peer.geomean) if e.best_peer else "-"
            origin = f"{which} on {e.device}, {best} vs the best peer"
            short = f"{e.run_id}/{e.candidate_id}" if e.run_id else "seed"
            short += f", {best} vs best peer"
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
