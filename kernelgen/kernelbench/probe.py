"""What a problem is, found by running it for real at a small size on the CPU: its inputs and
their names, its parameters and buffers, and whether the operator contract can hold it.

Refused, each in one line naming the file (source.Refused):
- a forward that draws random tensors (dropout in training mode, a torch.randn): two runs on the
  same inputs and parameters under different seeds disagree, so no kernel can be judged
  against it;
- a forward that writes into its inputs or parameters (in-place modules on an input): the judge
  rejects any candidate that does, so the reference would be a rejected kernel itself;
- an output that does not depend on the inputs (a row's max minus its own mean): two draws of
  the judge's values give the same output, so a kernel that writes that constant would pass.
  Where only the problem's own inputs give a constant (a ReLU after a shift past their range),
  it is imported with a note: the judge's wider values tell kernels apart;
- inputs the contract has no dtype for, non-tensor inputs other than numbers, tensors the Model
  holds outside its parameters and buffers (no candidate could be given them), outputs other
  than tensors.
Integer and bool inputs are taken: they are drawn by the problem's own get_inputs() (its
targets stay below num_classes, its masks stay masks). Buffers the forward updates are kept
inside the reference (runtime.py says why).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelgen.kernelbench.runtime import PlanInput, PlanParam, seeded
from kernelgen.kernelbench.source import ProblemFile, Refused, bare_draws
from kernelgen.spec.inputs import values

# The dtypes the operator contract takes for a tensor input (spec.TensorDType, less fp8).
DTYPES = {
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.bool: "bool",
}


@dataclass
class Found:
    """The operator the problem becomes, less its sizes."""

    inputs: list[PlanInput]
    dtypes: list[str | None]  # per input: a tensor's dtype, None for a scalar
    scalars: dict[int, float | int | bool]
    params: list[PlanParam]
    param_dtypes: list[str]
    internal: list[str]
    notes: list[str] = field(default_factory=list)
    convolution: bool = False


def _clone(x: Any) -> Any:
    return x.clone() if isinstance(x, torch.Tensor) else x


def _same(a: Any, b: Any) -> bool:
    """Equal values, NaN equal to NaN."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_floating_point():
            return bool(((a == b) | (a.isnan() & b.isnan())).all())
        return bool(torch.equal(a, b))
    return a == b


def _outputs(out: Any, pf: ProblemFile) -> list[torch.Tensor]:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for o in outs:
        if not isinstance(o, torch.Tensor):
            raise Refused(pf.path, f"forward returns a {type(o).__name__}, not tensors")
    return outs


def _names(model: torch.nn.Module, n: int, pf: ProblemFile) -> list[str]:
    """The forward's parameter names for the n inputs (x0, x1... for *args)."""
    params = list(inspect.signature(model.forward).parameters.values())
    names: list[str] = []
    for p in params:
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            names += [f"x{i}" for i in range(len(names), n)]
            break
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
    if len(names) < n:
        raise Refused(pf.path, f"get_inputs() gives {n} inputs, forward takes {len(names)}")
    return names[:n]


def _state_names(keys: list[str], taken: set[str]) -> list[str]:
    """Argument names for state keys: `gemm.weight` -> `gemm_weight`, unique."""
    out = []
    for key in keys:
        name = key.replace(".", "_")
        while name in taken:
            name += "_"
        taken.add(name)
        out.append(name)
    return out


def _constant(a: torch.Tensor, b: torch.Tensor) -> float | None:
    """The one value a parameter's init fills it with (the same under two seeds), if any."""
    if not a.is_floating_point() or a.numel() == 0 or not torch.equal(a, b):
        return None
    first = a.reshape(-1)[0]
    return float(first) if bool((a == first).all()) else None


def probe(pf: ProblemFile, ns: dict[str, Any]) -> Found:
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not callable(ns.get(name)):
            raise Refused(
                pf.path,
                f"no {name} (a KernelBench problem defines Model, get_inputs and get_init_inputs)",
            )
    Model: Callable[..., torch.nn.Module] = ns["Model"]  # noqa: N806 - the problem's own name
    with seeded(0), torch.no_grad():
        model = Model(*ns["get_init_inputs"]())
        inputs = list(ns["get_inputs"]())
    with seeded(1), torch.no_grad():
        twin = Model(*ns["get_init_inputs"]())
    if not isinstance(model, torch.nn.Module):
        raise Refused(pf.path, "Model(...) is not a torch.nn.Module")

    dtypes: list[str | None] = []
    scalars: dict[int, float | int | bool] = {}
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            if x.dtype not in DTYPES:
                raise Refused(
                    pf.path,
                    f"input {i} is {x.dtype}: the contract takes {', '.join(DTYPES.values())}",
                )
            dtypes.append(DTYPES[x.dtype])
        elif isinstance(x, (bool, int, float)):
            scalars[i] = x
            dtypes.append(None)
        else:
            raise Refused(pf.path, f"input {i} is a {type(x).__name__}: tensors and numbers only")
    for mod_name, mod in model.named_modules():
        for attr, value in vars(mod).items():
            if isinstance(value, torch.Tensor):
                where = f"{mod_name}.{attr}" if mod_name else attr
                raise Refused(
                    pf.path,
                    f"the Model holds a tensor {where!r} that is neither a "
                    "parameter nor a buffer: no candidate could be given it",
                )

    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    state = {k: v.detach() for k, v in state.items()}
    parameters = {k for k, _ in model.named_parameters()}
    for key, t in state.items():
        if t.dtype not in DTYPES:
            raise Refused(
                pf.path, f"{key} is {t.dtype}: the contract takes {', '.join(DTYPES.values())}"
            )

    def run(args: list[Any], seed: int) -> tuple[Any, list[Any], dict[str, torch.Tensor]]:
        args = [_clone(a) for a in args]
        own = {k: v.clone() for k, v in state.items()}
        with seeded(seed), torch.no_grad():
            out = torch.func.functional_call(model, own, tuple(args))
        return out, args, own

    try:
        first, after, state_after = run(inputs, 1)
        second, _, _ = run(inputs, 2)
    except Exception as e:  # the problem's own code: anything can fail
        raise Refused(pf.path, f"forward failed: {type(e).__name__}: {e}") from None
    outs, again = _outputs(first, pf), _outputs(second, pf)
    if len(outs) != len(again) or not all(_same(a, b) for a, b in zip(outs, again, strict=True)):
        raise Refused(
            pf.path,
            "forward draws random tensors (two runs on the same inputs and "
            "parameters differ): no kernel can be judged against it",
        )
    names = _names(model, len(inputs), pf)
    for name, before, x in zip(names, inputs, after, strict=True):
        if not _same(before, x):
            raise Refused(
                pf.path,
                f"forward writes into its input {name!r} (in place): the "
                "judge rejects a kernel that does",
            )
    internal = []
    for key in state:
        if not _same(state[key], state_after[key]):
            if key in parameters:
                raise Refused(pf.path, f"forward writes into its parameter {key!r} (in place)")
            internal.append(key)

    found = Found(
        inputs=[],
        dtypes=dtypes,
        scalars=scalars,
        params=[],
        param_dtypes=[],
        internal=internal,
        convolution=any(isinstance(m, torch.nn.modules.conv._ConvNd) for m in model.modules()),
    )
    bare = bare_draws(pf.source)
    for i, (name, x) in enumerate(zip(names, inputs, strict=True)):
        if i in scalars:
            draw = "scalar"
        elif not x.is_floating_point() or not bare.get(i):
            draw = "problem"
            why = "integer values" if not x.is_floating_point() else "not a plain rand/randn"
            found.notes.append(f"{name}: drawn by the problem's own get_inputs() ({why})")
        else:
            draw = _domain(inputs, i, state, model, outs)
            if draw == "magnitude":
                found.notes.append(
                    f"{name}: drawn as magnitudes (signed values make the forward non-finite)"
                )
            elif draw == "problem":
                found.notes.append(
                    f"{name}: drawn by the problem's own get_inputs() (the "
                    "judge's values make the forward non-finite)"
                )
        found.inputs.append(PlanInput(name=name, draw=draw))  # type: ignore[arg-type]
    if _constant_output(ns, inputs, found.inputs, lambda args: _outputs(run(args, 1)[0], pf)):
        raise Refused(
            pf.path,
            "its output does not depend on its inputs (the same for two draws of the "
            "judge's values): a kernel that writes that constant would pass",
        )
    if _constant_output(ns, inputs, None, lambda args: _outputs(run(args, 1)[0], pf)):
        found.notes.append(
            "on the problem's own inputs its output is the same for two draws; the judge's "
            "wider values are what tell kernels apart"
        )
    twin_state = {**dict(twin.named_parameters()), **dict(twin.named_buffers())}
    keys = [k for k in state if k not in internal]
    for key, name in zip(keys, _state_names(keys, set(names)), strict=True):
        constant = None
        if key in parameters and key in twin_state:
            constant = _constant(state[key], twin_state[key].detach())
        found.params.append(PlanParam(name=name, state=key, constant=constant))
        found.param_dtypes.append(DTYPES[state[key].dtype])
    if internal:
        found.notes.append(
            f"buffers the forward updates, kept inside the reference: {', '.join(internal)}"
        )
    return found


def _constant_output(
    ns: dict[str, Any],
    inputs: list[Any],
    plan: list[PlanInput] | None,
    forward: Callable[[list[Any]], list[torch.Tensor]],
) -> bool:
    """Two draws of the inputs (as the judge draws them by `plan`, or all by the problem's own
    get_inputs() without one) that differ, and outputs that do not."""
    draws = []
    for seed in (3, 4):
        with seeded(seed), torch.no_grad():
            own = list(ns["get_inputs"]())
        gen = torch.Generator().manual_seed(seed)
        args = []
        for x, mine, item in zip(inputs, own, plan or [None] * len(inputs), strict=True):
            if item is None or item.draw in ("problem", "scalar"):
                args.append(mine)
                continue
            drawn = values(list(x.shape), "normal", gen).to(x.dtype)
            args.append(drawn.abs() if item.draw == "magnitude" else drawn)
        draws.append(args)
    if all(_same(a, b) for a, b in zip(*draws, strict=True)):
        return False  # the same inputs every time: nothing to tell
    first, second = forward(draws[0]), forward(draws[1])
    return all(_same(a, b) for a, b in zip(first, second, strict=True))


def _domain(
    inputs: list[Any],
    i: int,
    state: dict[str, torch.Tensor],
    model: torch.nn.Module,
    outs: list[torch.Tensor],
) -> str:
    """'judge' where signed values keep the forward finite where the problem's own draw does,
    'magnitude' where only their absolute values do, else 'problem'."""
    x = inputs[i]
    gen = torch.Generator().manual_seed(0)
    signed = values(list(x.shape), "normal", gen).to(x.dtype)
    for draw, value in (("judge", signed), ("magnitude", signed.abs())):
        args = [_clone(a) for a in inputs]
        args[i] = value
        own = {k: v.clone() for k, v in state.items()}
        try:
            with seeded(1), torch.no_grad():
                got = _outputs_plain(torch.func.functional_call(model, own, tuple(args)))
        except Exception:  # a value the problem cannot take: try the next, or its own draw
            continue
        if all(
            not bool((o.isfinite() & ~g.isfinite()).any())
            for o, g in zip(outs, got, strict=True)
            if o.is_floating_point()
        ):
            return draw
    return "problem"


def _outputs_plain(out: Any) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]
