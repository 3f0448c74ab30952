"""A check that cannot read one field judges nothing; the others judge (issue 42 item 2,
issue 45 item 2; D-521, D-522).

Catches: a harness that turns the suite's own KeyError into "the adapter broke", one that
stops every check of a result at its first mistyped field, and a report that reads a
requirement as a plain pass when one of its paths could not be read.  Keeps: a host
whose result lacks a field its schema requires is still told it is its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_conformance import unjudged
from dsh_conformance.checks import blamed, check, collect, expect, take_passed
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import TestResult
from dsh_conformance.reporting.rows import (
    PASS,
    UNREADABLE,
    is_partly,
    requirement_status,
)
from dsh_conformance.unjudged import Unreadable, UnreadableField


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    unjudged.take()
    take_passed()
    yield
    unjudged.take()
    take_passed()


def test_a_reading_error_in_a_check_is_the_suites_and_the_next_check_runs() -> None:
    with collect():
        with check("INBOX-022"):
            _ = {"isError": True}["error"]
        expect("INBOX-021", True, "")
    [entry] = unjudged.take()
    assert entry["requirement"] == "INBOX-022"
    assert entry["by"] == "suite"
    assert "'error'" in entry["field"]
    assert take_passed() == ("INBOX-021",)  # judged; INBOX-022 is not


def test_a_missing_key_the_schema_requires_is_the_hosts() -> None:
    result = {"content": [], "contexts": [{"source": {"kind": "user"}, "content": []}]}
    unjudged.read_by_the_test("prepare", result)
    with collect(), check("ENV-004"):
        _ = result["contexts"][0]["placement"]  # type: ignore[index]
    [entry] = unjudged.take()
    assert entry["by"] == "host"
    assert entry["field"] == "prepare /contexts/0/placement"  # the key it left out


def test_an_unreadable_field_stops_only_the_check_that_uses_it() -> None:
    value = Unreadable("side.scenario.run", "/child/log/header/seedLength", "integer", "21")

    def body() -> None:
        with collect():
            with check("SIDE-005"):
                assert value == 21
            with check("SIDE-008"):
                raise AssertionError("the system prompt changed")

    with pytest.raises(AssertionError) as caught:
        body()
    assert blamed(caught.value) == ("SIDE-008",)  # the breach beside it is still caught
    [entry] = unjudged.take()
    assert entry == {
        "requirement": "SIDE-005",
        "field": "side.scenario.run /child/log/header/seedLength",
        "expected": "integer",
        "seen": '"21"',
        "reason": entry["reason"],
        "by": "host",
    }


@pytest.mark.parametrize(
    "use",
    [
        lambda v: v + 1,
        lambda v: v < 3,
        lambda v: v["a"],
        lambda v: v.get("a"),
        lambda v: len(v),
        lambda v: list(v),
        lambda v: bool(v),
        lambda v: {v},
        lambda v: f"{v}",
        lambda v: int(v),
    ],
)
def test_every_use_of_an_unreadable_field_raises(use: Any) -> None:
    with pytest.raises(UnreadableField):
        use(Unreadable("op", "/x", "integer", "1"))


def test_its_repr_and_json_show_the_value_seen_never_a_python_repr() -> None:
    from dsh_conformance.reporting.escape import show_value

    value = Unreadable("op", "/x", "integer", "21")
    assert show_value({"x": value}) == '{"x":"21"}'
    assert repr(value) == '<unreadable /x: "21">'


def result(outcome: str, *unread: str, blame: tuple[str, ...] = ()) -> TestResult:
    entries = [{"requirement": r, "field": "op /x", "reason": "", "by": "host"} for r in unread]
    return TestResult(
        nodeid="conformance/test_x.py::t",
        outcome=Outcome(outcome),
        requirements=("ENV-072",),
        blame=blame,
        unjudged=entries,
    )


def test_a_pass_on_one_path_and_unreadable_on_another_is_no_plain_pass() -> None:
    status = requirement_status([result("pass"), result("pass", "ENV-072")], "MUST", "ENV-072")
    assert status == "pass on 1 of 2 paths (1 unreadable)"
    assert is_partly(status)
    # a whole result unreadable is an unreadable path too (the micro-step test passed)
    status = requirement_status([result("pass"), result("protocol")], "MUST", "ENV-072")
    assert status == "pass on 1 of 2 paths (1 unreadable)"
    assert requirement_status([result("pass", "ENV-072")], "MUST", "ENV-072") == UNREADABLE
    assert requirement_status([result("pass")], "MUST", "ENV-072") == PASS
    # a failure elsewhere still fails
    failing = result("fail", blame=("ENV-072",))
    assert requirement_status([failing, result("pass", "ENV-072")], "MUST", "ENV-072") == "fail"


def test_the_seed_headline_counts_a_partly_judged_must() -> None:
    from dsh_conformance.reporting.verdict import Verdict

    verdict = Verdict(
        name="seed",
        title="seed conformance",
        failing=(),
        warnings=(),
        counts={},
        total=2,
        gating=2,
        passing=1,
        partly=("ENV-072",),
    )
    assert verdict.passed
    assert "1 partly judged" in verdict.headline
    assert "1 partly judged" in verdict.label
