"""What the judge and the candidate's process say to each other, one JSON line per message.

The judge (`verify/judge.py`, in kernelgen's own process) holds the reference, the float64 ground
truth, the comparisons and the verdict. The candidate's process (`verify/runner.py`, sandboxed)
holds only the candidate: it is told to load a file, to compile for some argument layouts, or to
call the entry on inputs, and it answers with what happened. On CUDA, tensors travel by CUDA IPC
(`Shared`: a storage's handle, the receiver copies device to device and lets it go); on the CPU,
and under compute-sanitizer, as `torch.save` files in the judge's scratch folder. Everything else
travels here.

Nothing a runner says is trusted for the values: the judge reads the outputs and compares them
itself. What it reports about the call (which aten ops ran, which kernels launched, where its
buffers live) comes from instruments installed before the candidate was imported and out of the
candidate's reach under the static rules; it is the one part of the verdict that rests on them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- judge -> runner ---------------------------------------------------------------------------


class TensorMeta(_Msg):
    """An argument's layout without its values: enough to compile the kernels it specializes."""

    shape: list[int]
    stride: list[int]
    offset: int
    storage: int = Field(description="elements in the underlying storage")
    dtype: str


class Load(_Msg):
    kind: Literal["load"] = "load"
    path: str
    entry: str
    arg_names: list[str]


class Compile(_Msg):
    """Run the launcher with every kernel launch turned into a compile (Triton's warmup): the
    compiled binaries land in the shared cache that the judging process then only loads from."""

    kind: Literal["compile"] = "compile"
    layouts: list[list[TensorMeta | float | int | bool]]


class Shared(_Msg):
    """A CUDA tensor lent to the other process through CUDA IPC (torch's storage sharing): its
    whole storage, and the view of it. The borrower copies the storage into memory of its own at
    once and drops the handle, so nothing it does later can read or write the lender's memory.
    torch counts the loan: the lender's block is not reused until the borrower has let it go.
    A runner killed with calls still queued never ends their loans of the judge's inputs: torch
    keeps those blocks (at most the judge's window of calls) until the judge's process exits.
    Host copies and torch.save cost 180 ms for 64 MB on the H200's host, a loan about 1 ms
    (scripts/transport_bench.py)."""

    device: int
    handle: str = Field(description="cudaIpcMemHandle of the allocation, base64")
    nbytes: int = Field(description="the storage's bytes")
    offset_bytes: int = Field(description="where the storage starts in the allocation")
    ref_counter: str = Field(description="torch's loan counter: its file, base64")
    ref_counter_offset: int
    event: str = Field(description="cudaIpcEventHandle the borrower waits on, base64")
    event_sync: bool
    dtype: str
    shape: list[int]
    stride: list[int]
    offset: int = Field(description="the view's offset in the storage, in elements")


# verify/fills.py: a poison (an unwritten entry fails the value check), finite values a kernel
# could have written, or nothing.
Fill = Literal["nan", "inf", "large", "bits", "random", "none"]


class Call(_Msg):
    kind: Literal["call"] = "call"
    inputs: str | None = Field(None, description="torch.save file of the argument list")
    shared: list[Shared | float | int | bool] | None = Field(
        None, description="the argument list, tensors lent by CUDA IPC (instead of `inputs`)"
    )
    outputs: str = Field(description="where to torch.save the result")
    share_outputs: bool = Field(
        False, description="CUDA: lend the result's tensors by IPC instead of saving them"
    )
    guard: bool = Field(True, description="dispatch guard and launch record on")
    fill: Fill = Field("nan", description="what new allocations and freed device memory hold")
    fill_seed: int = Field(0, description="the seed of the fill's values, drawn by the judge")
    repeat: int = Field(1, ge=1, description="calls in a row; the last one's result is returned")
    keep: str | None = Field(None, description="keep the result alive under this handle")
    report: list[str] = Field(
        default_factory=list, description="kept handles whose digests and spans to report"
    )
    profile: bool = Field(False, description="CUDA: record the kernels of the call")
    pin: dict[str, int] = Field(
        default_factory=dict,
        description="autotuned kernel (a Space's name) -> index of the config every launch of "
        "it runs in this call; every kernel not named runs its first",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Call:
        if (self.inputs is None) == (self.shared is None):
            raise ValueError("a call takes its arguments from `inputs` or `shared`, exactly one")
        return self


class Exit(_Msg):
    kind: Literal["exit"] = "exit"


Request = Load | Compile | Call | Exit


# ---- runner -> judge ---------------------------------------------------------------------------


class Space(_Msg):
    """An autotuned kernel of the candidate (of more than one config), for the judge to sweep."""

    kernel: str = Field(
        description="where the candidate holds it: its module-level name, `.fn` per wrapper "
        "(triton.heuristics, triton.autotune) it sits inside"
    )
    configs: list[str] = Field(description="each config it declares, in order, as written")
    interpreted_as: list[int] = Field(
        description="for each config, the first config the interpreter runs alike: one that "
        "differs only in what it ignores (warps, stages, CTAs, registers)"
    )


class Span(_Msg):
    """Where a tensor's storage lives, for aliasing checks across calls."""

    ptr: int
    nbytes: int


class Leaf(_Msg):
    """One output tensor as the runner saw it (type and device do not survive torch.save)."""

    type: str
    dtype: str | None = None
    shape: list[int] = Field(default_factory=list)
    device: str | None = None
    span: Span | None = None


class Failed(_Msg):
    """An exception the candidate's code raised, reduced to what classifies it."""

    type: str
    message: str
    line: int | None = Field(None, description="deepest line of the candidate's file")
    frontend: bool = Field(False, description="raised by triton.language's own checks")


class CallLog(_Msg):
    forbidden: list[str] = Field(default_factory=list, description="aten ops beyond the contract")
    launches: list[str] = Field(default_factory=list, description="the candidate's own kernels")
    foreign: list[str] = Field(default_factory=list, description="other Triton kernels")
    threads: list[str] = Field(default_factory=list)


class RunnerCosts(_Msg):
    """A call's time on the runner's side, in seconds (what the judge cannot see from its own)."""

    load: float = Field(0.0, description="the inputs onto the device: borrowed, or from a file")
    flood: float = Field(0.0, description="filling free device memory before each call")
    call: float = Field(0.0, description="the candidate's calls, synchronized")
    save: float = Field(0.0, description="the outputs handed back: lent, or saved to a file")
    digest: float = Field(0.0, description="digests and spans of inputs and kept outputs")


class Reply(_Msg):
    ok: bool
    error: Failed | None = None
    spaces: list[Space] = Field(
        default_factory=list, description="load: the candidate's autotuned kernels"
    )
    tuple_out: bool = False
    leaves: list[Leaf] = Field(default_factory=list)
    inputs: list[Span] = Field(default_factory=list)
    input_digests: list[str] = Field(
        default_factory=list, description="digest of each tensor input's storage after the call"
    )
    kept: dict[str, list[str]] = Field(
        default_factory=dict,
        description="handle -> digest of each reported kept output, after the call",
    )
    kept_spans: dict[str, list[Span]] = Field(default_factory=dict)
    log: CallLog | None = None
    cuda_kernels: list[str] | None = Field(None, description="profile: kernels the GPU ran")
    shared: list[Shared | None] | None = Field(
        None,
        description="call with share_outputs: each output leaf lent by IPC (None: not a tensor)",
    )
    seconds: float = 0.0
    costs: RunnerCosts | None = Field(None, description="call: where the runner's time went")
