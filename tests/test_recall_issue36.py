"""Issue 36 item 7: what was only seen elsewhere is now caught where the note says it.

Reads that settle out of order must still give first-appearance order (PREP-001), and on a
host's own loop (``scenario.run``) the envelope must stay hidden from the model and its
display hold neither the snapshot nor the delimiter (ENV-051).  Each zoo member below is
killed by the purpose-built conformance test and blamed on its own id; the reference passes
the same tests.  In-process and example-based, so the kit costs about a second.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from zoo import placement, preparation

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.checks import blamed
from dsh_conformance.conformance import test_prepare, test_scenario
from dsh_conformance.conformance.scenario_oracle import envelope_hidden_from_the_model
from dsh_conformance.conformance.scenario_programs import AGENT_ID, PREFIX, hook_context, text

ORDERS = [("abc", {"a": 9, "b": 5, "c": 1}), ("cab", {"a": 0, "b": 4, "c": 8})]
SCRIPT: dict[str, Any] = {
    "agent": {"id": AGENT_ID},
    "replies": [{"text": "reply-1"}],
    "steps": [
        {
            "do": "send",
            "text": "msg-1",
            "contexts": [
                hook_context("snapshot-1", PREFIX, True),
                hook_context("sep-1", None, False),
            ],
        }
    ],
}


def settlement_order(impl: Implementation) -> None:
    for refs, delays in ORDERS:
        test_prepare.test_first_appearance_order_when_reads_finish_out_of_order(impl, refs, delays)


def envelope_hidden(impl: Implementation) -> None:
    """The check of test_the_envelope_stays_hidden_from_the_model, on one fixed script."""
    envelope_hidden_from_the_model(impl.call("scenario.run", **SCRIPT))


MEMBERS = {
    "SettlementOrder": (preparation.SettlementOrder, settlement_order, {"PREP-001"}),
    "EnvelopeSentToModel": (placement.EnvelopeSentToModel, envelope_hidden, {"ENV-051"}),
    "DataRegionInDisplay": (placement.DataRegionInDisplay, envelope_hidden, {"ENV-051"}),
    "DelimiterInDisplay": (placement.DelimiterInDisplay, envelope_hidden, {"ENV-051"}),
}


def marked(case: Any) -> set[str]:
    """The requirement ids the conformance test behind *case* cites (its only blame for a
    bare assertion)."""
    test = (
        test_prepare.test_first_appearance_order_when_reads_finish_out_of_order
        if case is settlement_order
        else test_scenario.test_the_envelope_stays_hidden_from_the_model
    )
    return {rid for mark in test.pytestmark if mark.name == "req" for rid in mark.args}


@pytest.mark.parametrize("member", sorted(MEMBERS))
def test_member_is_killed_on_its_own_id(member: str) -> None:
    factory, case, ids = MEMBERS[member]
    impl = Implementation(factory(), member)  # type: ignore[arg-type]
    with pytest.raises(AssertionError) as caught:
        case(impl)
    got = set(blamed(caught.value)) or marked(case)
    assert got == ids, f"{member}: blamed {sorted(got)}, expected {sorted(ids)}"


@pytest.mark.parametrize("case", [settlement_order, envelope_hidden], ids=lambda c: c.__name__)
def test_the_reference_passes(case: Any) -> None:
    case(Implementation(ReferenceAdapter(), "reference"))


def test_the_script_bakes_a_snapshot() -> None:
    """Positive control: the script's prompt event really carries a prefix context."""
    result = ReferenceAdapter().call("scenario.run", SCRIPT)
    prompts = [e for e in result["log"]["events"] if e["type"] == "user/message"]
    assert prompts, result
    assert "envelope" in prompts[0]["data"]
    assert any("snapshot-1" in t.get("text", "") for t in prompts[0]["data"]["content"])
    assert prompts[0]["data"]["envelope"]["displayContent"] == text("msg-1")
