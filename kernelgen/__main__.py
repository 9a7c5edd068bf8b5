"""`python -m kernelgen`: the CLI, where the console script is not on PATH."""

from kernelgen.cli import app

app()
