"""The `files` proposer: every *.py in a folder, as candidates written elsewhere (a person,
another agent), in name order. Judged exactly like any other candidate."""

from __future__ import annotations

from pathlib import Path

from kernelgen.errors import UsageError
from kernelgen.propose.base import Context, Proposal
from kernelgen.records import Usage


class FilesProposer:
    name = "files"
    model = None

    def __init__(self, folder: Path, skip: int = 0):
        if not folder.is_dir():
            raise UsageError(f"--from {folder}: not a folder")
        self.files = sorted(folder.glob("*.py"))
        if not self.files:
            raise UsageError(f"--from {folder}: no *.py files there")
        self.next = skip  # on resume, the files already taken
        self.usage = Usage()

    def propose(self, ctx: Context, k: int) -> list[Proposal]:
        batch = self.files[self.next : self.next + k]
        self.next += len(batch)
        return [Proposal(source=p.read_text(errors="replace"), name=p.name) for p in batch]

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        return None  # a file is what it is
