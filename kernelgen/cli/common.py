"""What every `kernelgen` command shares: the typer app, the consoles, one clean line per error,
JSON on the last line, and the --device option."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from kernelgen.errors import KernelgenError, NoDeviceError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Generate, verify, profile and keep the best Triton kernel per operator.",
)
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

F = TypeVar("F", bound=Callable[..., Any])


def clean_errors(fn: F) -> F:
    """A KernelgenError becomes one red line and its exit code; no traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KernelgenError as e:
            # Escaped: a message may quote brackets (pip install 'kernelgen[ray]').
            err.print(f"[red]error:[/red] {escape(str(e))}", soft_wrap=True)
            raise typer.Exit(e.exit_code) from None

    return wrapper  # type: ignore[return-value]


def emit_json(obj: Any) -> None:
    """The last line of stdout: one JSON object."""
    print(json.dumps(obj, default=str))


class DeviceOpt(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


def _device(device: DeviceOpt | None, ray: str | None = None) -> str:
    from kernelgen.env import default_device

    if ray is not None:
        # The cluster's GPUs judge, not this host's: cuda unless asked otherwise.
        return device.value if device is not None else "cuda"
    if device is None:
        return default_device()
    if device.value == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise NoDeviceError("--device cuda: no CUDA device here (use --device cpu)")
    return device.value


JsonOpt = Annotated[bool, typer.Option("--json", help="JSON on the last line")]
