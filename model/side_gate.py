"""Side sessions, read-only enforcement: a tools pre-execute deny gate (SIDE-028, SIDE-066).

"Read-only behavior is advisory until a tools/pre-execute deny gate enforces it; the
interception point can add that gate without changing these mechanics." (seed 004).  The
gate is optional (capability ``side.deny-gate``, D-108): a child forked with a deny list
does not execute calls to the listed tools; each such call still gets its ``tool/call`` and
a paired error ``tool/result`` (so the log stays balanced), and nothing else changes.

The gate answers the agent's tools pre-execute seam (``Agent.pre_execute``), so a denied
call is written exactly like any other call and result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from dsh_conformance.model import jsstr
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.session import Event, SessionHeader
from dsh_conformance.model.system_prompt import AgentOptions
from dsh_conformance.model.turn import ToolOutcome

#: The error code of a denied call's ``tool/result`` (D-108).
TOOL_DENIED: Final = "SIDE_TOOL_DENIED"


def denied_text(name: str) -> str:
    """The text of a denied call's result (D-108)."""
    return f"Error: side session is read-only; tool {jsstr.quote(name)} denied"


class GatedAgent(Agent):
    """An agent whose listed tools are denied before execution (D-108)."""

    def __init__(
        self,
        header: SessionHeader,
        seed: Iterable[Event] = (),
        options: AgentOptions | None = None,
        deny: Iterable[str] = (),
    ) -> None:
        super().__init__(header, seed, options)
        self.deny: frozenset[str] = frozenset(deny)

    def pre_execute(self, name: str, call: Mapping[str, Any]) -> ToolOutcome | None:
        if name not in self.deny:
            return super().pre_execute(name, call)
        return ToolOutcome(
            content=({"type": "text", "text": denied_text(name)},),
            is_error=True,
            error={"name": name, "code": TOOL_DENIED},
        )
