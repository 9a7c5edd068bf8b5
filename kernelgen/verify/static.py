"""Static rules for a candidate module: the first gate, read from the AST before any of it runs.

A candidate does its work in `@triton.jit` kernels; everything else (the "launcher": undecorated
functions and module level) may only check arguments, allocate, take views, make layout copies,
compute grids and launch. The rules below (read from the tree by rules/) reject what the contract
forbids wherever it can be seen in the source: foreign imports, fallbacks, hidden state,
monkeypatching, escape hatches (streams, graphs, compile), torch compute in the launcher, a
launcher that branches on the device it runs on (rules/device.py: the CPU verdict must judge the
program the H200 runs), and a module whose entry never launches a kernel.

Every name is checked against closed lists (`allowlist.py`): a dotted path into a module must be
listed in full, a builtin must be listed, an attribute of a value must be listed (one list for the
launcher, a narrower one inside kernels). A module root is never enough: modules re-export other
modules, and `typing.sys._getframe(1).f_back` was how candidates reached the judge's frames.
Names are resolved through the module's imports, so `tl.exp` reads as `triton.language.exp`;
rebinding an imported name or a builtin is itself a violation, which keeps that reading sound.

Module state is followed under other names too (`cache = _BUF; cache[k] = y`, a cached function's
result, a parameter it was passed to): see rules/state.py.

What static rules cannot see: binary operators (`x * y` is legitimate on the ints that make grids
and strides and looks the same on tensors, in the launcher, in a grid callable, or on a constexpr
that is a torch tensor under the interpreter), tensors reached through containers, string
annotations (never evaluated by the harness or by Triton), and anything decided at run time. The
run-time checks (dispatch guard, fresh buffers, a second call) catch what slips through; these
rules are never the only gate.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kernelgen import syntax
from kernelgen.verify.rules import walk

# Every rule's reason is a constant (as in KernelBench's static checker); a violation prefixes it
# with what was found.
RULES: dict[str, str] = {
    "forbidden-import": "only torch, triton, triton.language (tl.math, "
    "triton.language.extra.libdevice), math, functools, typing, itertools, operator and "
    "kernelgen_ops._runtime (nearest_bucket) may be "
    "imported, and from them only listed names; anything else reaches the OS, the harness or the "
    "reference",
    "unlisted-name": "only listed names may be used: the allocation and query API of torch, "
    "triton's jit/autotune/heuristics/Config/cdiv/next_power_of_2, the triton.language API, "
    "libdevice, math, a few names of functools/typing/itertools/operator, and names the module "
    "defines; any other path can be a module reached through another (triton.language.core, "
    "typing.sys) that leads to the OS, the interpreter's frames or the judge",
    "try": "try/except is a fallback path: a kernel that fails must fail, not fall back to torch",
    "global": "global/nonlocal state survives between calls (cached outputs, call counters)",
    "module-state": "a function may not change module-level values: state that survives "
    "between calls lets a kernel cache outputs or behave differently once it is being timed",
    "default": "a default is evaluated once at import and shared by every call: only literal "
    "constants (numbers, strings, booleans, None, tuples of them) may be defaults",
    "generator": "yield, async and await make resumable frames that carry state from one call "
    "to the next and expose frames (gi_frame, cr_frame); a candidate needs none",
    "class-def": "classes make tensor subclasses, autograd Functions and stateful objects; a "
    "candidate needs none",
    "decorator": "only @triton.jit, @triton.autotune and @triton.heuristics (on a module-level "
    "kernel) and @functools.lru_cache/@functools.cache (on a config lookup) may decorate: any "
    "other decorator replaces the function with code the rules never read",
    "cache": "a cache may only wrap a module-level config lookup: not the entry, every parameter "
    "annotated `int`, no torch, no kernel, no other module function, no new list/dict/set/"
    "generator returned; a cached launcher returns the same output object on every call",
    "forbidden-builtin": "only listed builtins may be named, called or not (len, range, min, "
    "max, int, float, isinstance, sorted, zip... and exceptions): the others run code (eval, "
    "exec, compile), open files, reach attributes by name (getattr, setattr, hasattr, vars), "
    "make classes (type), carry state (iter, next) or print into the judge's logs",
    "dunder": "dunder names and attributes (__class__, __globals__, __builtins__) reach the "
    "interpreter's internals",
    "frame": "frame, generator, traceback, code and cell attributes (f_back, f_globals, "
    "gi_frame, tb_frame, cell_contents) walk up the stack into the caller's frames",
    "monkeypatch": "assigning or deleting an attribute, or changing an item of an import or a "
    "module-level function, rewires torch, triton, a kernel or a tensor the harness relies on",
    "import-alias": "an imported name may not be rebound, and a module may only be used as "
    "`module.attr`: an alias would hide what actually runs",
    "escape-hatch": "streams, graphs, compilers, extensions, runtime internals and global "
    "settings escape the harness's control",
    "launcher-torch": "outside kernels torch may only allocate (empty*, zeros*), name dtypes "
    "and query devices; any other torch API computes outside the candidate's kernels",
    "launcher-arithmetic": "outside kernels a tensor may only be queried, viewed or "
    "layout-copied (.contiguous, .reshape); this method computes or moves data",
    "attribute": "outside kernels only listed attributes of a value may be used (tensor "
    "queries and views; dict, list and str methods; dtype, device and device-property fields): "
    "others reach a kernel's internals, a function's globals, or (str.format) anything by name",
    "kernel-torch": "a @triton.jit kernel is device code with no torch; torch there runs only "
    "under the CPU interpreter, as plain Python",
    "kernel-name": "a @triton.jit kernel may name only triton.language (with libdevice), math, "
    "its own parameters and locals, module-level kernels and constants, and range/len/min/max/"
    "int/float/isinstance: anything else is host Python that runs only under the interpreter",
    "kernel-attribute": "inside a kernel only listed tl.tensor and dtype attributes may be used "
    "(to, reshape, trans, permute, view, dtype, shape, element_ty...) and no item assigned: under "
    "the CPU interpreter a tl.constexpr argument can be a real torch tensor, whose .sum(), "
    ".copy_() or item assignment computes or writes outside any kernel",
    "device-branch": "the launcher branches on the device it runs on: the CPU verdict would "
    "judge another program. A device or backend query (x.device, x.is_cuda, x.get_device(), "
    "x.type(), torch.cuda.is_available/device_count/current_device/get_device_name, a board's "
    "name, uuid or memory size) may only name the device of an allocation "
    "(torch.empty(..., device=x.device)) or of torch.cuda.get_device_properties(...), be stored "
    "in a name or handed to a helper that does no more, or name the device in a raised error; "
    "never tested, compared, computed with, indexed with, returned or passed to a kernel. The SM "
    "count and the other architecture fields of get_device_properties (major, minor, warp_size, "
    "register and shared-memory sizes) may size a grid: the interpreter answers them with the "
    "H200's figures, so a persistent grid from the SM count is the H200's grid on both",
    "top-level-code": "module level may hold only a docstring, imports, functions and constant "
    "assignments (literals, names, arithmetic, math's constants and functions of them, "
    "tl.constexpr(...), triton.Config(...)): nothing else may run at import",
    "no-entry": "the module must define the operator's function at top level",
    "no-kernel-launch": "the operator's function must launch a module-level @triton.jit kernel "
    "(`K[grid](...)`), directly or through module-level helpers",
}


class Violation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule: str
    line: int
    reason: str


def check_source(source: str, entry: str) -> list[Violation]:
    """Every rule violation in `source`, by line. A SyntaxError from parsing propagates."""
    found = [
        Violation(rule=rule, line=line, reason=f"{what}: {RULES[rule]}")
        for rule, line, what in walk.find(syntax.parse(source), entry)
    ]
    return sorted(found, key=lambda v: v.line)  # stable: on one line, as found
