"""Reference operation ``side.scenario.run``: a side session on the reference's own loop.

The script is validated completely before anything runs (DSH_SCENARIO_*), then the parent
and, once forked, the child run it in their natural schedule (model/side_scenario.py,
docs/side-scenario.md).  Schema: spec/schemas/ops/side_scenario.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dsh_conformance.adapters.reference import State, op
from dsh_conformance.model import side_scenario

CAPABILITY: Final = "side.scenario"


@op("side.scenario.run", CAPABILITY)
def _run(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    del state  # every run builds its own agents
    return side_scenario.run(args)
