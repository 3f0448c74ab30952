"""tools/add_inbox_regression.py turns a printed Hypothesis program into a replayable case."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "add_inbox_regression.py"
PRINTED = """\
E           Falsifying example:
E           state = InboxMachine()
E           state.implementations_agree()
E           state.seed_invariants()
E           state.listen(name='block-once')
E           state.send(recipe='prefix+separate')
E           state.cancel(parent=True)
E           state.run()
E           state.teardown()
"""


def load_tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("add_inbox_regression", TOOL)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parse_program_keeps_rules_and_drops_checks() -> None:
    assert load_tool().parse_program(PRINTED) == [
        {"rule": "listen", "args": {"name": "block-once"}},
        {"rule": "send", "args": {"recipe": "prefix+separate"}},
        {"rule": "cancel", "args": {"parent": True}},
        {"rule": "run", "args": {}},
    ]


def test_main_appends_a_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    target = tmp_path / "cases.json"
    target.write_text(json.dumps({"format": "dsh-agent-program/1", "cases": []}))
    monkeypatch.setattr("sys.stdin", io.StringIO(PRINTED))
    tool = load_tool()
    assert (
        tool.main(
            [
                "--id",
                "x",
                "--req",
                "INBOX-011",
                "--description",
                "d",
                "--plain",
                "--file",
                str(target),
            ]
        )
        == 0
    )
    (case,) = json.loads(target.read_text())["cases"]
    assert case["id"] == "x"
    assert case["req"] == ["INBOX-011"]
    assert case["prefix"] is False
    assert (case["description"], case["provenance"]) == ("d", "reference-model")
    assert len(case["program"]) == 4
