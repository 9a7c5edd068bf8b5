"""The provenance header of a library module: where the kernel came from and what it measured."""

from __future__ import annotations

import textwrap
from typing import Any

from kernelgen.package.manifest import BestPeer, Provenance
from kernelgen.package.peers import PEER_NAMES
from kernelgen.spec import load_spec

WIDTH = 100  # the project's line length: the rendered files pass ruff unchanged


def dash(x: object) -> str:
    return "-" if x is None else str(x)


def times(x: float | None) -> str:
    """A speedup as the headers write it: 1.50x; '-' where there is none."""
    return "-" if x is None else f"{x:.2f}x"


def peer_name(p: Provenance) -> str:
    """What the record's 'eager' ran, so that no figure names an unnamed peer."""
    ref = f"references/{p.op}.py"
    spec = load_spec(p.op)
    if p.peers == "eager":
        called = "the problem's Model" if spec.data.origin is not None else "the op"
        return f"{ref}:eager, {called} as torch users call it"
    if spec.eager is spec.reference:
        return f"{ref}:{p.op}, which is how torch users compute it"
    return f"{ref}:{p.op} as written, not {ref}:eager (the figures overstate the gain)"


def _best_peer_lines(best: BestPeer) -> list[str]:
    where = "eager or torch.compile in the run's record"
    if best.library:
        where += f", or eager, torch.compile, Liger or FlagGems in {best.library}"
    lines = textwrap.wrap(
        f"best peer {times(best.geomean)} geomean over {len(best.shapes)} "
        f"shape{'' if len(best.shapes) == 1 else 's'}, each against "
        f"the fastest peer measured there: {where}",
        WIDTH - 2,
        subsequent_indent="          ",
    )
    for f in best.shapes:
        lines.append(
            f"          {f.shape} {f.dtype}: {times(f.speedup)} vs {PEER_NAMES[f.peer]}"
            + (" (library bench)" if f.source == "library" else "")
        )
    return lines


def render_header(
    p: Provenance,
    dispatch: dict[str, dict[str, Any]] | None = None,
    best: BestPeer | None = None,
    public: str | None = None,
) -> str:
    """`public`: the name the library calls it by (kernelgen_ops.<op> where None)."""
    lines = [
        f"{public or f'kernelgen_ops.{p.op}'}: written by `kernelgen promote`; do not edit, "
        "promote again.",
        "The source below is the candidate as judged, except for this header, the two config",
        f"loads (TUNED, DEFAULT_CONFIG come from configs/{p.op}.json) and the last line (lean",
        "launches, see _launch.py); ruff leaves it as it is.",
        "",
        f"source    {p.source}",
        f"record    {p.record or 'none: promoted without a run'}",
        f"proposer  {p.proposer} (model {p.model or '-'}, round {dash(p.round)}, "
        f"parent {p.parent or '-'})",
    ]
    if p.measured:
        lines.append(
            f"device    {p.device} (driver {p.driver or '-'}, CUDA {p.cuda or '-'}, "
            f"torch {p.torch or '-'}, Triton {p.triton or '-'})"
        )
        if best is not None:
            lines += _best_peer_lines(best)
        lines.append(
            f"speedups  geomean {times(p.geomean_eager)} vs eager, {times(p.geomean_compile)} vs "
            f"torch.compile, {times(p.geomean_seed)} vs seed"
        )
        lines += textwrap.wrap(
            f"peers     eager = {peer_name(p)}; torch.compile of the same",
            WIDTH - 2,
            subsequent_indent="          ",
        )
        for s in p.speedups or []:
            lines.append(
                f"          {s.shape} {s.dtype}: {s.median_us:.1f} us, {times(s.eager)} eager, "
                f"{times(s.compile)} compile, {times(s.seed)} seed"
            )
        if dispatch:
            won = [str(r["shape"]) for r in dispatch.values() if r["kernel"]]
            lost = [str(r["shape"]) for r in dispatch.values() if not r["kernel"]]
            lines += textwrap.wrap(
                "dispatch  per call (host time counted at launch-bound shapes), against eager: "
                f"the kernel at {', '.join(won) or 'no shape'}; torch's op at "
                f"{', '.join(lost) or 'no shape'}",
                WIDTH - 2,  # "# " comes before each line
                subsequent_indent="          ",
            )
    else:
        lines.append("device    none: NOT MEASURED on any GPU")
        lines.append("speedups  none: NOT MEASURED")
    lines += [f"sha256    {p.sha256}", f"promoted  {p.promoted}"]
    if p.note:
        first, *rest = textwrap.wrap(p.note, WIDTH - 12)
        lines += [f"note      {first}", *(f"          {line}" for line in rest)]
    # Candidates are kept as judged (their hash is their provenance), so no linter or formatter
    # may rewrite them.
    lines += ["", "ruff: noqa", "fmt: off"]
    return "\n".join(f"# {line}".rstrip() for line in lines) + "\n"
