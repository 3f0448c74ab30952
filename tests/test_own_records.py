"""Records a host logs for itself are set aside before the seed checks read an outcome
(conformance/own_records.py, D-444), every stated position renumbered; what a feature may
not add -- a message event of a new type, a ``sidechat/*`` event -- stays."""

from __future__ import annotations

from typing import Any

from dsh_conformance.conformance.own_records import is_own_record, scenario_outcome, side_outcome


def event(kind: str, seq: int, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "seq": seq, "time": 0, "data": {}, **extra}


def test_what_counts_as_the_hosts_own() -> None:
    assert is_own_record(event("host/usage", 0))
    assert not is_own_record(event("turn/end", 0))
    assert not is_own_record(event("prompt/prefix", 0, surfaceOp="append"))  # a message event
    assert not is_own_record(event("sidechat/merged", 0))  # named by note 004 (SIDE-019)


def test_a_scenario_outcome_is_renumbered() -> None:
    events = [event("turn/start", 0), event("host/usage", 1), event("turn/end", 2)]
    out = scenario_outcome(
        {"log": {"header": {}, "events": events}, "steps": [{"fired": True, "logLength": 3}]}
    )
    assert [e["type"] for e in out["log"]["events"]] == ["turn/start", "turn/end"]
    assert out["steps"] == [{"fired": True, "logLength": 2}]


def test_a_side_outcome_is_renumbered_seed_length_and_fork_view_included() -> None:
    parent = [event("turn/start", 0), event("turn/end", 1), event("host/usage", 2)]
    child = [*parent, event("context/message", 3, surfaceOp="append")]
    result = {
        "parent": {"log": {"header": {"id": "p"}, "events": parent}},
        "child": {"log": {"header": {"id": "c", "seedLength": 3}, "events": child}},
        "steps": [
            {
                "fired": True,
                "parent": {"status": "idle", "logLength": 3},
                "source": {"before": {"header": {}, "events": parent}},
            },
            {"fired": True, "parent": {"logLength": 3}, "child": {"logLength": 4}},
        ],
    }
    out = side_outcome(result)
    assert out["child"]["log"]["header"]["seedLength"] == 2
    assert len(out["child"]["log"]["events"]) == 3
    assert out["steps"][0]["parent"]["logLength"] == 2
    assert len(out["steps"][0]["source"]["before"]["events"]) == 2
    assert out["steps"][1]["child"] == {"logLength": 3}
    assert result["child"]["log"]["header"]["seedLength"] == 3  # the outcome is not changed
