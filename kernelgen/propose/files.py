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

    def __init__(self, folder: Path, skip: int = 0):
        if folder.is_file() and folder.suffix == ".py":
            self.files = [folder]  # one source: a run's accepted one judged again, say
        elif folder.is_dir():
            self.files = sorted(folder.glob("*.py"))
            if not self.files:
                raise UsageError(f"--from {folder}: no *.py files there")
        else:
            raise UsageError(f"--from {folder}: not a folder nor a .py file")
        self.next = skip  # on resume, the files already taken
        self.usage = Usage()

    def propose(self, ctx: Context, k: int) -> list[Proposal]:
        batch = self.files[self.next : self.next + k]
        self.next += len(batch)
        return [Proposal(source=p.read_text(errors="replace"), name=p.name) for p in batch]

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        return None  # a file is what it is
