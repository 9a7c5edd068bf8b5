"""What the judge and the candidate's process say to each other, one JSON line per message.

The judge (`verify/judge.py`, in kernelgen's own process) holds the reference, the float64 ground
truth, the comparisons and the verdict. The candidate's process (`verify/runner.py`, sandboxed)
holds only the candidate: it is told to load a file, to compile for some argument layouts, or to
call the entry on inputs read from a file, and it answers with what happened. Tensors travel as
`torch.save` files in the candidate's work folder; everything else travels here.

Nothing a runner says is trusted for the values: the judge reads the outputs and compares them
itself. What it reports about the call (which aten ops ran, which kernels launched, where its
buffers live) comes from instruments installed before the candidate was imported and out of the
candidate's reach under the static rules; it is the one part of the verdict that rests on them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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


Fill = Literal["nan", "random", "none"]


class Call(_Msg):
    kind: Literal["call"] = "call"
    inputs: str = Field(description="torch.save file of the argument list")
    outputs: str = Field(description="where to torch.save the result")
    guard: bool = Field(True, description="dispatch guard and launch record on")
    fill: Fill = Field("nan", description="what new allocations and freed device memory hold")
    repeat: int = Field(1, ge=1, description="calls in a row; the last one's result is returned")
    keep: str | None = Field(None, description="keep the result alive under this handle")
    report: list[str] = Field(
        default_factory=list, description="kept handles whose digests and spans to report"
    )
    profile: bool = Field(False, description="CUDA: record the kernels of the call")


class Exit(_Msg):
    kind: Literal["exit"] = "exit"


Request = Load | Compile | Call | Exit


# ---- runner -> judge ---------------------------------------------------------------------------


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

    load: float = Field(0.0, description="reading the inputs file onto the device")
    flood: float = Field(0.0, description="filling free device memory before each call")
    call: float = Field(0.0, description="the candidate's calls, synchronized")
    save: float = Field(0.0, description="writing the outputs file")
    digest: float = Field(0.0, description="digests and spans of inputs and kept outputs")


class Reply(_Msg):
    ok: bool
    error: Failed | None = None
    configs: int = Field(1, description="load: the most configs of any autotuned kernel")
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
    seconds: float = 0.0
    costs: RunnerCosts | None = Field(None, description="call: where the runner's time went")
