"""Every loaded package's version in the handshake, record, reports and badge; ``diff`` of
changed components and changed failures (D-187, D-189)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from dsh_conformance import badge
from dsh_conformance.adapters.contract import Handshake
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RecordWriter, TestResult, load_record
from dsh_conformance.reporting import html, jsonreport, junit, markdown
from dsh_conformance.reporting.diff import diff, render_markdown
from dsh_conformance.reporting.moves import normalised_message
from dsh_conformance.spec import schema

RC8 = {
    "@deepseek-ai/dsh-agent": "0.1.0-rc.8",
    "@deepseek-ai/dsh-session": "0.1.0-rc.8",
    "@deepseek-ai/dsh-session-reference": "0.1.0-rc.8",
    "@deepseek-ai/cordis": "4.0.4",
}
LATEST = {**RC8, "@deepseek-ai/dsh-agent": "0.1.1-rc.2", "@deepseek-ai/dsh-session": "0.1.1-rc.2"}


def _handshake(components: dict[str, str] | None) -> dict[str, object]:
    impl: dict[str, object] = {
        "name": "@deepseek-ai/dsh-session-reference",
        "language": "typescript",
        "version": "0.1.0-rc.8",
    }
    if components is not None:
        impl["components"] = components
    return {"protocol": 1, "implementation": impl, "capabilities": ["uri"]}


def test_components_are_optional_and_schema_checked() -> None:
    defs = schema("protocol.json")["$defs"]
    validator = jsonschema.Draft202012Validator({**defs["handshake-response"], "$defs": defs})
    for components in (None, {}, RC8):
        validator.validate({"id": 0, "result": _handshake(components)})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"id": 0, "result": _handshake({"x": 1})})  # type: ignore[dict-item]
    parsed = Handshake.from_json(_handshake(LATEST))
    assert parsed.implementation.component_versions == LATEST
    assert parsed.to_json()["implementation"]["components"] == LATEST
    assert "components" not in Handshake.from_json(_handshake(None)).to_json()["implementation"]


def _write(path: Path, components: dict[str, str] | None, tests: list[TestResult]) -> Path:
    writer = RecordWriter(path)
    writer.header(
        {
            "suite_version": "0",
            "spec_version": "s",
            "spec_profile": "seed",
            "adapter": {"name": "upstream", **_handshake(components)},
            "selected": len(tests),
        }
    )
    for test in tests:
        writer.test(test)
    writer.footer({"status": "complete", "expectation_problems": []})
    writer.close()
    return path


def _t(name: str, outcome: str, message: str = "", blame: tuple[str, ...] = ()) -> TestResult:
    return TestResult(
        f"conformance/test_scenario.py::{name}",
        Outcome(outcome),
        ("ENV-053", "INBOX-010"),
        ("scenario",),
        0.01,
        message,
        blame=list(blame),
    )


def test_every_report_names_every_component(tmp_path: Path) -> None:
    record = load_record(_write(tmp_path / "r.jsonl", LATEST, [_t("a", "pass")]))
    assert record.components == dict(sorted(LATEST.items()))
    text = record.components_text
    # grouped by version, so a partial release reads at a glance
    assert "@deepseek-ai/dsh-agent, @deepseek-ai/dsh-session 0.1.1-rc.2" in text
    assert "@deepseek-ai/cordis 4.0.4" in text
    md = markdown.render(record)
    page = html.render([record])
    report = json.loads(jsonreport.render(record))
    props = {
        p.get("name"): p.get("value") for p in ET.fromstring(junit.render(record)).iter("property")
    }
    tip = badge.tooltip(report)
    for name, version in LATEST.items():
        assert name in md
        assert name in page
        assert name in tip
        assert report["components"][name] == version
        assert props[f"component.{name}"] == version
    assert "0.1.1-rc.2" in badge.markdown(jsonreport.render(record))
    plain = load_record(_write(tmp_path / "p.jsonl", None, [_t("a", "pass")]))
    assert plain.components == {}
    assert "components" not in markdown.render(plain)


def test_diff_names_the_components_that_changed(tmp_path: Path) -> None:
    old = load_record(_write(tmp_path / "o.jsonl", RC8, [_t("a", "pass")]))
    new = load_record(_write(tmp_path / "n.jsonl", LATEST, [_t("a", "pass")]))
    result = diff(old, new)
    assert result.components == (
        ("@deepseek-ai/dsh-agent", "0.1.0-rc.8", "0.1.1-rc.2"),
        ("@deepseek-ai/dsh-session", "0.1.0-rc.8", "0.1.1-rc.2"),
    )
    assert "@deepseek-ai/dsh-agent 0.1.0-rc.8 → 0.1.1-rc.2" in render_markdown(result, old, new)
    assert result.to_json()["components"][0]["new"] == "0.1.1-rc.2"
    assert not result.regressed
    assert "components: unchanged" in render_markdown(diff(new, new), new, new)


CODE_X = "ImplementationError: [DSH_UNSUPPORTED_OPTION] prompt-submit listeners are not supported"
CODE_Y = "ImplementationError: [DSH_UPSTREAM_ERROR] Cannot read properties of undefined"


@pytest.mark.parametrize(
    ("old", "new", "what", "gates", "seed_gates"),
    [
        (("xfail", CODE_X, ("ENV-053",)), ("xfail", CODE_Y, ("ENV-053",)), "code", True, False),
        (
            ("xfail", "AssertionError: x", ("ENV-053",)),
            ("xfail", "AssertionError: x", ("INBOX-010",)),
            "blame",
            True,
            True,  # INBOX-010 is a seed MUST
        ),
        (
            ("fail", "AssertionError: a", ("ENV-053",)),
            ("fail", "AssertionError: b", ("ENV-053",)),
            "message",
            False,  # no seed in the headers: other examples may word it otherwise
            False,
        ),
        (("fail", CODE_X, ("ENV-053",)), ("xfail", CODE_Y, ("ENV-053",)), "code", True, False),
    ],
)
def test_diff_flags_a_changed_failure_reason(
    tmp_path: Path,
    old: tuple[str, str, tuple[str, ...]],
    new: tuple[str, str, tuple[str, ...]],
    what: str,
    gates: bool,
    seed_gates: bool,
) -> None:
    """A test that stays xfail for another reason is not "no change" (issue 24 item 4)."""
    before = load_record(_write(tmp_path / "o.jsonl", RC8, [_t("s", old[0], old[1], old[2])]))
    after = load_record(_write(tmp_path / "n.jsonl", RC8, [_t("s", new[0], new[1], new[2])]))
    result = diff(before, after)
    assert [c.nodeid for c in result.changed_failures] == ["conformance/test_scenario.py::s"]
    assert what in {w for w, _, _ in result.changed_failures[0].reasons}
    assert result.regressed is gates
    # ENV-053 is a decision (profile verdict): --fail-on profile gates it, seed does not
    assert result.regressed_on("profile") is gates
    assert result.regressed_on("seed") is seed_gates
    assert "### Changed failures" in render_markdown(result, before, after)
    assert result.to_json()["changed_failures"][0]["changed"]


def test_the_same_failure_is_no_change(tmp_path: Path) -> None:
    first = CODE_X + " at <object at 0x7faf90835fd0>\n  Falsifying example: one"
    again = CODE_X + " at <object at 0x7f0000000001>\n  Falsifying example: another"
    assert normalised_message(first) == normalised_message(again)
    before = load_record(_write(tmp_path / "o.jsonl", RC8, [_t("s", "xfail", first, ("E",))]))
    after = load_record(_write(tmp_path / "n.jsonl", RC8, [_t("s", "xfail", again, ("E",))]))
    assert diff(before, after).changed_failures == ()


def _seeded(path: Path, tests: list[TestResult], seed: int | None = 7) -> Path:
    """A record whose header names the Hypothesis seed (same examples on both sides)."""
    writer = RecordWriter(path)
    writer.header(
        {
            "suite_version": "0",
            "spec_version": "s",
            "spec_profile": "seed",
            "adapter": {"name": "upstream", **_handshake(RC8)},
            "hypothesis": {"profile": "ci", "seed": seed},
            "selected": len(tests),
        }
    )
    for test in tests:
        writer.test(test)
    writer.footer({"status": "complete", "expectation_problems": []})
    writer.close()
    return path


def _p(name: str, outcome: str, message: str = "", detail: str = "", **extra: object) -> TestResult:
    return TestResult(
        f"conformance/test_scenario_partial.py::{name}",
        Outcome(outcome),
        ("PROJ-004",),
        ("scenario",),
        0.01,
        message,
        detail=detail,
        blame=["PROJ-004"] if outcome in ("fail", "xfail") else [],
        expectation="PROJ-004" if outcome == "xfail" else "",
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        # pass -> expected failure: the manifest hides no move (issue 35)
        (_p("a", "pass"), _p("a", "xfail", "[PROJ-004] partial", "fail"), "new failure"),
        # pass -> fail although PROJ-004 already failed through another test
        (_p("a", "pass"), _p("a", "fail", "[PROJ-004] partial"), "new failure"),
        # pass -> unsupported: coverage lost
        (_p("a", "pass"), _p("a", "unsupported", "unsupported: not declared"), "coverage lost"),
        # a second failure reason after an unchanged first line, same examples
        (
            _p("a", "fail", "[PROJ-004] partial text shown"),
            _p("a", "fail", "[PROJ-004] partial text shown\nand the chunk is stored"),
            "changed failure",
        ),
    ],
)
def test_diff_gates_every_move_to_worse(
    tmp_path: Path, old: TestResult, new: TestResult, kind: str
) -> None:
    # PROJ-004 already fails on the old side through another test: the move still gates
    other = _p("other", "fail", "[PROJ-004] elsewhere")
    before = load_record(_seeded(tmp_path / "o.jsonl", [old, other]))
    after = load_record(_seeded(tmp_path / "n.jsonl", [new, other]))
    result = diff(before, after)
    assert [c.kind for c in result.worse] == [kind]
    assert result.regressed_on("seed")
    assert result.regressed_ids("seed") == ("PROJ-004",)
    text = render_markdown(result, before, after)
    assert "moves to worse**, on PROJ-004" in text


def test_a_reworded_failure_under_other_examples_is_reported_not_gated(tmp_path: Path) -> None:
    old = _p("a", "fail", "[PROJ-004] partial text shown")
    new = _p("a", "fail", "[PROJ-004] partial text shown\nand the chunk is stored")
    before = load_record(_seeded(tmp_path / "o.jsonl", [old], seed=1))
    after = load_record(_seeded(tmp_path / "n.jsonl", [new], seed=2))
    result = diff(before, after)
    assert result.changed_failures
    assert not result.worse
    assert not result.regressed_on("seed")


def test_a_fix_and_an_expected_move_to_a_crash_are_not_confused(tmp_path: Path) -> None:
    before = load_record(_seeded(tmp_path / "o.jsonl", [_p("a", "xfail", "x", "fail")]))
    after = load_record(_seeded(tmp_path / "n.jsonl", [_p("a", "pass")]))
    assert not diff(before, after).worse
    assert [c.nodeid for c in diff(before, after).fixed] == [
        "conformance/test_scenario_partial.py::a"
    ]
    crashed = load_record(_seeded(tmp_path / "c.jsonl", [_p("a", "crash", "crash: exit 3")]))
    assert diff(after, crashed).regressed_on("seed")  # a crash always gates
