"""The agent's seat in a run: a proposer that never proposes.

The other proposers are pulled: the loop asks them for candidates. An agent pushes its candidates
(`kernelgen agent submit`, or the MCP tool), so the loop finds nothing to ask it for, and a repair
is simply the agent's next submission. The agent's session is kernelgen/agent/session.py.
"""

from __future__ import annotations

from kernelgen.propose.base import Context, Proposal
from kernelgen.records import Usage

NO_PROPOSER = (
    "an agent run has no automatic proposer: its candidates come from "
    "`kernelgen agent submit RUN_ID FILE`"
)


class AgentProposer:
    name = "agent"
    note = NO_PROPOSER

    def __init__(self, model: str | None = None):
        self.model = model
        self.usage = Usage()  # the agent's tokens are spent outside kernelgen

    def propose(self, ctx: Context, k: int) -> list[Proposal]:
        return []

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        return None
