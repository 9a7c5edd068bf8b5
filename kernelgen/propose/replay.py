"""The `replay` proposer: the candidates of an earlier run, in the order they were made, for
reproducible runs and tests. No model is called; each proposal carries the recorded transcript.
Repairs replay the recorded repair of the same candidate, when there was one."""

from __future__ import annotations

import re

from kernelgen import store
from kernelgen.propose.base import Context, Proposal
from kernelgen.records import Usage

_FIX = re.compile(r"-fix\d+$")


class ReplayProposer:
    name = "replay"
    model = None

    def __init__(self, op: str, run_id: str, skip: int = 0):
        records = [r for r in store.load_candidates(op, run_id) if not r.id.endswith("-tuned")]
        self.chains: list[list[Proposal]] = []
        for rec in records:
            transcript = store.load_transcript(op, run_id, rec.id)
            source = (
                store.candidate_source(op, run_id, rec.id)
                if store.candidate_path(op, run_id, rec.id).is_file()
                else None
            )
            item = Proposal(
                source=source,
                transcript=transcript,
                name=rec.id,
                error=None if source is not None else f"no_code: {rec.reason}",
            )
            if _FIX.search(rec.id) and self.chains:
                self.chains[-1].append(item)
            else:
                self.chains.append([item])
        self.next = skip  # on resume, the chains already replayed
        self.usage = Usage()

    def propose(self, ctx: Context, k: int) -> list[Proposal]:
        batch = self.chains[self.next : self.next + k]
        self.next += len(batch)
        return [chain[0] for chain in batch]

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        for chain in self.chains:
            names = [p.name for p in chain]
            if failed.name in names:
                i = names.index(failed.name)
                return chain[i + 1] if i + 1 < len(chain) else None
        return None
