"""The `kernelgen` command. Thin: each command parses, calls one function, prints with rich.

common.py holds the app and what the commands share; pipeline.py the pipeline's commands (ops,
new, verify, bench, optimize, promote, report); agent.py the agent's (agent ..., mcp); imports.py
`import kernelbench`; kbsuite.py `suite kernelbench` and `report kernelbench`; views.py the rich
renderables they print.
"""

# Each module registers its commands on the app as it is imported: the pipeline's first, so that
# `kernelgen --help` lists them in the order a user meets them.
from kernelgen.cli import pipeline  # noqa: I001, F401
from kernelgen.cli import agent  # noqa: F401
from kernelgen.cli import imports  # noqa: F401
from kernelgen.cli import kbsuite  # noqa: F401
from kernelgen.cli.common import app

__all__ = ["app", "main"]


def main() -> None:  # pragma: no cover - console script
    app()
