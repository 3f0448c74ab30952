"""Reference operation ``scenario.run``: a whole scripted conversation on the reference agent.

The script is validated completely before anything runs (DSH_SCENARIO_*), then the stepped
agent runs it in its natural schedule (model/scenario.py, docs/scenario.md).  Schema:
spec/schemas/ops/scenario.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dsh_conformance.adapters.reference import State, op
from dsh_conformance.adapters.reference.agent_ops import decode_hostile
from dsh_conformance.model import scenario

CAPABILITY: Final = "scenario"


@op("scenario.run", CAPABILITY)
def _run(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    del state  # every run builds its own agent
    return scenario.run(args, decode_hostile)


def uses_side(args: Mapping[str, Any]) -> bool:
    """Whether a script has fork/mergeBack steps (they need the side capability)."""
    steps = args.get("steps")
    return isinstance(steps, list) and any(
        isinstance(s, Mapping) and s.get("do") in {"fork", "mergeBack"} for s in steps
    )
