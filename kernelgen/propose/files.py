"""The `files` proposer: every *.py in a folder, as candidates written elsewhere (a person,
another agent), in name order; or one file. Judged exactly like any other candidate."""

from __future__ import annotations

from pathlib import Path

from kernelgen.errors import UsageError
from kernelgen.propose.base import Context, Proposal
from kernelgen.records import Usage


class FilesProposer:
    name = "files"
    model = None

    def __init__(self, source: Path, skip: int = 0):
        if source.is_file() and source.suffix == ".py":
            self.files = [source]  # one source: a run's accepted one judged again, say
        elif source.is_dir():
            self.files = sorted(source.glob("*.py"))
            if not self.files:
                raise UsageError(f"--from {source}: no *.py files there")
        else:
            raise UsageError(f"--from {source}: not a folder nor a .py file")
        self.next = skip  # on resume, the files already taken
        self.usage = Usage()

    def propose(self, ctx: Context, k: int) -> list[Proposal]:
        batch = self.files[self.next : self.next + k]
        self.next += len(batch)
        return [Proposal(source=p.read_text(errors="replace"), name=p.name) for p in batch]

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        return None  # a file is what it is
