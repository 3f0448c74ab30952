"""Docs, schemas and real messages agree (issue 37 item 2).

The reference page is generated from the schemas and must equal the committed one; every
example in docs/protocol.md, docs/scenario.md and docs/examples is sent to the reference
model over the subprocess transport, and each request and each reply read back through the
pipe validates against its operation's schema (a documented typed error must be one the
operation lists).  Catches: a schema edit without a regenerated page, a documented message
the schemas reject, a documented result that is not what the suite's reference answers,
and a schema that rejects what the reference really sends.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.model.jsstr import canonical_value
from dsh_conformance.model.session import Event, Replace, fold_surface
from dsh_conformance.spec.compiled import Compiled
from dsh_conformance.spec.examples import _expand, _steps, pages
from dsh_conformance.spec.reference_doc import render

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "spec" / "schemas"
DOCS = ROOT / "docs"


def _documents() -> list[tuple[str, dict[str, Any]]]:
    paths = [SCHEMAS / "data.json", SCHEMAS / "protocol.json", *sorted((SCHEMAS / "ops").glob("*"))]
    return [(data["$id"], data) for data in (json.loads(p.read_text("utf-8")) for p in paths)]


def _registry() -> tuple[Registry, dict[str, tuple[str, dict[str, Any]]]]:
    resources, ops = [], {}
    for uri, data in DOCUMENTS:
        resources.append((uri, Resource.from_contents(data)))
        for name, spec in data.get("ops", {}).items():
            ops[name] = (uri, spec)
    return Registry().with_resources(resources), ops


DOCUMENTS = _documents()
REGISTRY, OPS = _registry()


@functools.cache
def _validator(op: str, part: str) -> Compiled:
    """One validator per op part, compiled once: jsonschema-rs says whether a message is
    valid, jsonschema words what is wrong with one that is not (spec/compiled.py, where
    tests/test_compiled_schemas.py holds the two to the same answers)."""
    base, _ = OPS[op]
    return Compiled({"$ref": f"{base}#/ops/{op}/{part}"}, DOCUMENTS)


def problems(op: str, part: str, value: object) -> list[str]:
    validator = _validator(op, part)
    return [
        f"{op} {part} /{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(value)
    ][:3]


@pytest.fixture(scope="module")
def served() -> Iterator[SubprocessAdapter]:
    adapter = SubprocessAdapter(
        [sys.executable, "-m", "dsh_conformance.adapters.serve"], timeout=60, validate=True
    )
    yield adapter
    adapter.close()


def exchange(adapter: SubprocessAdapter, op: str, args: dict[str, Any]) -> tuple[str, Any]:
    """One request over the pipe: ('result', value) or ('error', code); both checked."""
    assert not problems(op, "args", args), problems(op, "args", args)
    try:
        result = adapter.call(op, args)
    except ImplementationError as exc:
        code = exc.code
    else:
        code = ""
    if code:
        assert code in OPS[op][1].get("errors", ()), f"{op}: {code} is not listed"
        return "error", code
    assert not problems(op, "result", result), problems(op, "result", result)
    return "result", result


# --- the generated page ---------------------------------------------------------------------


def test_the_reference_page_is_current() -> None:
    on_disk = (DOCS / "protocol-reference.md").read_text(encoding="utf-8")
    assert render() == on_disk, (
        "docs/protocol-reference.md is stale: "
        "python -m dsh_conformance.spec.reference_doc --write docs/protocol-reference.md"
    )


def test_the_reference_page_lists_every_field_and_op() -> None:
    text = (DOCS / "protocol-reference.md").read_text(encoding="utf-8")
    for op, (_, spec) in OPS.items():
        assert f"### `{op}`" in text
        for field in spec["args"].get("properties", {}):
            assert f"| `{field}` |" in text, (op, field)
    assert "INBOX-005 (decision D-65)" in text  # a decision, never passed off as a sentence


# --- docs/protocol.md -----------------------------------------------------------------------


def sketch() -> list[tuple[str, dict[str, Any]]]:
    """The ``harness →`` / ``adapter ←`` messages of protocol.md's sketch, parsed."""
    text = (DOCS / "protocol.md").read_text(encoding="utf-8")
    block = text.split("## Messages", 1)[1].split("```", 2)[1]
    out: list[tuple[str, str]] = []
    for line in block.splitlines():
        found = re.match(r"(harness →|adapter ←)\s*(.*)", line)
        if found:
            out.append((found.group(1), found.group(2)))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + line)
    return [(who, json.loads(re.sub(r"\s*\(then exit 0\)$", "", body))) for who, body in out]


def test_the_protocol_sketch_is_what_the_reference_says(served: SubprocessAdapter) -> None:
    messages = sketch()
    assert [who for who, _ in messages] == ["harness →", "adapter ←"] * (len(messages) // 2)
    hello, answer = messages[0][1], messages[1][1]
    assert not wire.problems("handshake-request", hello)
    assert not wire.problems("handshake-response", answer)
    assert hello == wire.handshake_request(0)  # what the harness really sends first
    assert answer["result"]["protocol"] == served.handshake().protocol
    for (_, request), (_, reply) in zip(messages[2::2], messages[3::2], strict=True):
        assert not wire.problems("request", request)
        assert not wire.problems("reply", reply)
        assert request["id"] == reply["id"]
        if request["op"] == "shutdown":
            continue
        args = canonical_value(request["args"])
        kind, value = exchange(served, request["op"], args)
        if "error" in reply:
            assert (kind, value) == ("error", reply["error"]["code"])
        else:
            assert (kind, value) == ("result", canonical_value(reply["result"]))


# --- docs/scenario.md -----------------------------------------------------------------------


def test_the_scenario_script_example_runs_and_validates(served: SubprocessAdapter) -> None:
    text = (DOCS / "scenario.md").read_text(encoding="utf-8")
    script = json.loads(text.split("## The script", 1)[1].split("```json", 1)[1].split("```")[0])
    kind, outcome = exchange(served, "scenario.run", script)
    assert kind == "result"
    assert len(outcome["steps"]) == len(script["steps"])
    shown = text.split("## The result", 1)[1].split("```json", 1)[1].split("```")[0]
    for key in ("requests", "log", "steps", "status"):
        assert f'"{key}":' in shown
        assert key in outcome


# --- docs/examples --------------------------------------------------------------------------


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_every_documented_example_validates_over_the_wire(
    served: SubprocessAdapter, page: Any
) -> None:
    """A page's examples run in order on one implementation, as the page was generated."""
    served.call("reset", {})
    for example in page.examples:
        if "transcript" in example:  # recorded on the release (Node), not re-run here
            continue
        for step in _steps(example):
            args = canonical_value(_expand(step["args"], page.defs))
            where = f"{example['id']}: {step['op']}"
            if "error" in step:  # a documented failure: its code is one the op lists
                assert step["error"] in OPS[step["op"]][1].get("errors", ()), where
                with pytest.raises(ImplementationError) as caught:
                    served.call(step["op"], args)
                assert caught.value.code == step["error"], where
                continue
            kind, value = exchange(served, step["op"], args)
            assert kind == "result", (where, value)


# --- surfaceOp: seqs, never positions ---------------------------------------------------------


def test_the_surface_op_example_reads_seqs_not_positions(served: SubprocessAdapter) -> None:
    """data.json's example: replace {start: 1, end: 2} shadows seqs 1 and 2; the position
    reading {start: 0, end: 1} is refused by the reference (seq 0 is not on the surface)."""
    description = json.loads((SCHEMAS / "data.json").read_text(encoding="utf-8"))["$defs"][
        "surfaceOp"
    ]["description"]
    assert "SEQS, never positions" in description
    text = [{"type": "text", "text": "t"}]

    def log(replace: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
            {
                "type": "user/message",
                "seq": 1,
                "time": 0,
                "surfaceOp": "append",
                "data": {"content": text, "source": {"kind": "user"}},
            },
            {
                "type": "assistant/message",
                "seq": 2,
                "time": 0,
                "surfaceOp": "append",
                "data": {"content": text},
            },
            {"type": "turn/end", "seq": 3, "time": 0, "data": {"turn": 1}},
            {"type": "turn/start", "seq": 4, "time": 0, "data": {"turn": 2}},
            {
                "type": "user/message",
                "seq": 5,
                "time": 0,
                "surfaceOp": replace,
                "sourceEventSeqs": [1, 2],
                "data": {"content": text, "source": {"kind": "plugin", "plugin": "compact"}},
            },
            {"type": "turn/end", "seq": 6, "time": 0, "data": {"turn": 2}},
        ]

    by_seq = log({"op": "replace", "start": 1, "end": 2})
    surface = fold_surface([Event.from_json(e) for e in by_seq])
    assert [e.seq for e in surface] == [5]
    assert isinstance(surface[0].surface_op, Replace)
    session = {"header": {"id": "s"}, "events": by_seq}
    kind, result = exchange(served, "session.surface", {"session": session})
    assert (kind, [e["seq"] for e in result["events"]]) == ("result", [5])
    by_position = {"header": {"id": "s"}, "events": log({"op": "replace", "start": 0, "end": 1})}
    assert exchange(served, "session.surface", {"session": by_position}) == (
        "error",
        "DSH_INVALID_EVENT",
    )


def _examples(node: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("examples"), list):
            for example in node["examples"]:
                yield pointer, example
        for key, value in node.items():
            yield from _examples(value, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")


def schema_examples() -> Iterator[Any]:
    """Every ``examples`` entry in the schemas, with the JSON Pointer of its schema."""
    for path in [SCHEMAS / "data.json", SCHEMAS / "protocol.json", *(SCHEMAS / "ops").glob("*")]:
        data = json.loads(path.read_text(encoding="utf-8"))
        for pointer, example in _examples(data, ""):
            yield pytest.param(data["$id"], pointer, example, id=f"{path.name}{pointer}")


@pytest.mark.parametrize(("base", "pointer", "example"), list(schema_examples()))
def test_every_schema_example_is_valid_for_its_schema(
    base: str, pointer: str, example: Any
) -> None:
    validator = jsonschema.Draft202012Validator({"$ref": f"{base}#{pointer}"}, registry=REGISTRY)
    assert not list(validator.iter_errors(example)), (pointer, example)


# --- a real run: what the suite sends, what the reference answers -----------------------------


def test_every_message_of_a_real_run_validates(tmp_path: Path) -> None:
    """The whole suite (quick profile) against the reference served over the pipe, every
    request and reply captured by the server: each validates against its op schema, and
    every op the reference declares is exercised (release.run needs the release)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from harness_cli import cli

    capture = tmp_path / "capture.jsonl"
    server = ROOT / "tests" / "capturing_serve.py"
    done = cli(
        *("run", "--adapter", f"subprocess:{sys.executable} {server}"),
        *("--hypothesis-profile", "quick", "--report-dir", str(tmp_path / "out")),
        env={"DSH_CAPTURE": str(capture)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen: set[str] = set()
    found: list[str] = []
    for line in capture.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        op, reply = entry["op"], entry["reply"]
        if op not in OPS:  # handshake, reset, shutdown, smoke's unknown op
            continue
        seen.add(op)
        if "error" in reply:
            if reply["error"]["code"] not in OPS[op][1].get("errors", ()):
                found.append(f"{op}: error {reply['error']['code']} is not listed")
            continue
        found += problems(op, "args", entry["args"]) + problems(op, "result", reply["result"])
    assert not found, "\n".join(sorted(set(found))[:20])
    assert sorted(set(OPS) - seen) == ["release.run"]


def test_a_reply_with_text_then_tool_calls_is_a_valid_script(served: SubprocessAdapter) -> None:
    """docs/scenario.md allows {toolCalls, text?}; the schema's oneOf once matched it twice
    and the reference refused the script (DSH_SCENARIO_INVALID)."""
    script = {
        "agent": {"id": "t", "options": {"tools": [{"name": "ls"}]}},
        "replies": [
            {"text": "Listing.", "toolCalls": [{"id": "c1", "name": "ls"}]},
            {"text": "done"},
        ],
        "steps": [{"do": "send", "text": "hi"}],
    }
    kind, outcome = exchange(served, "scenario.run", script)
    assert kind == "result", outcome
    assert [e["type"] for e in outcome["log"]["events"]].count("tool/result") == 1
