"""PROJ-*: projection of a source session's current surface."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect, expect_equal
from dsh_conformance.conformance import fixed_examples
from dsh_conformance.conformance.strategies_sessions import (
    COMPACT,
    SLOW,
    USER,
    SessionCase,
    session_cases,
    text_block,
)
from dsh_conformance.profiles import examples

pytestmark = pytest.mark.capability("projection")
INVALID_EVENT = "DSH_INVALID_EVENT"


def log(*events: tuple[str, dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """A session from (type, data) pairs (surface types appended) or full event dicts."""
    out = []
    for seq, spec in enumerate(events):
        if isinstance(spec, dict):
            out.append({"seq": seq, "time": 0, **spec})
            continue
        type_, data = spec
        event: dict[str, Any] = {"type": type_, "seq": seq, "time": 0, "data": data}
        if type_ in {
            "user/message",
            "assistant/message",
            "tool/result",
            "context/message",
            "steering/message",
        }:
            event["surfaceOp"] = "append"
        out.append(event)
    return {"header": {"version": 0, "id": "source", "createdAt": 1}, "events": out}


def user(text: str, source: dict[str, Any] = USER) -> tuple[str, dict[str, Any]]:
    return ("user/message", {"content": [text_block(text)], "source": source})


def items(*pairs: tuple[str, str] | tuple[str, str, bool]) -> list[dict[str, Any]]:
    return [
        {"role": p[0], "text": p[1], "checkpoint": bool(p[2]) if len(p) > 2 else False}
        for p in pairs
    ]


def _squashed(text: str) -> str:
    return "".join(text.split())


def missing_in_order(got: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[Any]:
    """The expected messages *got* lacks, matched in order by role, checkpoint flag and
    text up to whitespace (how text blocks are joined is D-31's; text projected beside
    it, reasoning say, is PROJ-004's)."""
    rest = iter(got)
    missing = []
    for want in expected:
        role, flag, text = want["role"], want["checkpoint"], _squashed(want["text"])
        if not any(
            (i["role"], i["checkpoint"]) == (role, flag) and text in _squashed(i["text"])
            for i in rest
        ):
            missing.append(want)
            rest = iter(got)  # report each missing one, not the rest as well
    return missing


@pytest.mark.req("PROJ-001", "PROJ-004", "PROJ-006")
@settings(suppress_health_check=SLOW)
@given(session_cases())
@fixed_examples.examples(*fixed_examples.PROJECTION)
def test_projection_keeps_exactly_what_the_seed_keeps(
    impl: Implementation, case: SessionCase
) -> None:
    """The expected projection is computed by the generator while it builds the log."""
    got = impl.call("projection.project", session=case.session)
    texts = {item["text"] for item in got}
    # a hidden text is leaked whether projected alone or joined into a kept message
    leaked = sorted(h for h in set(case.hidden) if h and any(h in t for t in texts))
    expect(
        "PROJ-004", not leaked, "an excluded, shadowed or baked text was projected", leaked=leaked
    )
    # Each message the note keeps is there, in order, with its role and checkpoint flag,
    # its text however its blocks are joined (D-31 is PROJ-006's).  A message with no text
    # (an empty direct-user message, an assistant message of tool calls or reasoning only)
    # may be kept as '' or dropped (D-256, D-524); what else is projected is PROJ-004's.
    missing = missing_in_order(got, case.expected)
    expect("PROJ-001", not missing, "a kept message is missing", missing=missing, got=got)
    if not leaked and not missing:  # the exact texts, once the right messages are there
        expect_equal("PROJ-006", got, case.expected, what="projected messages")


@pytest.mark.req("PROJ-007", "PROJ-005")
@settings(suppress_health_check=SLOW)
@given(session_cases())
def test_surface_read_is_header_capture_seq_and_current_nodes(
    impl: Implementation, case: SessionCase
) -> None:
    got = impl.call("session.surface", session=case.session)
    with check("PROJ-007", session=case.session):
        assert got["capturedThroughSeq"] == case.captured_through_seq
        assert got["session"]["id"] == case.id
        assert got["session"].get("cwd") == case.session["header"].get("cwd")
        raw = {e["seq"]: e for e in case.events}
        for event in got["events"]:
            assert event == raw[event["seq"]], "surface nodes are the log's own events"
    # Projecting the read equals projecting the log: shadowed nodes are simply not there.
    expect_equal(
        "PROJ-005",
        impl.call("projection.project", snapshot=got),
        impl.call("projection.project", session=case.session),
        what="projection of the read",
    )


@pytest.mark.req("PROJ-001", "PROJ-004", "PROJ-007")
def test_upstream_fixture(impl: Implementation) -> None:
    """Research note A §2.2: the pinned upstream projection fixture."""
    session = log(
        user("old user"),
        ("assistant/message", {"turn": 0, "step": 0, "content": [text_block("old assistant")]}),
        {
            "type": "user/message",
            "data": {
                "content": [text_block("<compacted-summary>checkpoint</compacted-summary>")],
                "source": COMPACT,
            },
            "surfaceOp": {"op": "replace", "start": 0, "end": 1},
            "sourceEventSeqs": [0, 1],
        },
        user("recent user"),
        ("context/message", {"content": [text_block("workspace secret")], "source": COMPACT}),
        ("steering/message", {"turn": 1, "content": [text_block("human steer")], "source": USER}),
        (
            "steering/message",
            {
                "turn": 1,
                "content": [text_block("plugin steer")],
                "source": {"kind": "plugin", "plugin": "loop"},
            },
        ),
        (
            "tool/result",
            {"turn": 1, "step": 0, "callId": "c", "content": [text_block("out")], "isError": False},
        ),
        (
            "assistant/message",
            {
                "turn": 1,
                "step": 0,
                "content": [{"type": "reasoning", "text": "think"}, text_block("visible answer")],
            },
        ),
        user("plugin user", {"kind": "plugin", "plugin": "goal"}),
        ("user/message", {"content": [{"type": "reasoning", "text": "r"}], "source": USER}),
        (
            "steering/message",
            {"turn": 1, "content": [{"type": "reasoning", "text": "r"}], "source": USER},
        ),
        (
            "assistant/message",
            {"turn": 1, "step": 1, "content": [{"type": "reasoning", "text": "r"}]},
        ),
        ("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text", "text": "partial"}}),
    )
    got = impl.call("projection.project", session=session)
    kept = items(
        ("user", "<compacted-summary>checkpoint</compacted-summary>", True),
        ("user", "recent user"),
        ("user", "human steer"),
        ("assistant", "visible answer"),
    )
    excluded = {"workspace secret", "plugin steer", "out", "think", "plugin user", "r", "partial"}
    leaked = sorted({i["text"] for i in got} & (excluded | {"old user", "old assistant"}))
    expect("PROJ-004", not leaked, "an excluded text was projected", leaked=leaked)
    missing = missing_in_order(got, kept)
    expect("PROJ-001", not missing, "a kept message is missing", missing=missing, got=got)
    capture = impl.call("session.surface", session=session)["capturedThroughSeq"]
    expect_equal("PROJ-007", capture, 13, what="capturedThroughSeq")


@pytest.mark.req("PROJ-004")
def test_incomplete_assistant_output_is_not_projected(impl: Implementation) -> None:
    """D-57, in the note's words: an unfinished stream leaves assistant/chunk records and no
    assistant/message; its chunks are not projected."""
    delta = {"type": "text-delta", "index": 0, "text": "PART"}
    session = log(
        user("question"),
        ("assistant/chunk", {"turn": 0, "step": 0, "chunk": {"type": "block-start", "index": 0}}),
        ("assistant/chunk", {"turn": 0, "step": 0, "chunk": delta}),
        user("next"),
        ("assistant/message", {"turn": 1, "step": 0, "content": [text_block("done")]}),
    )
    got = impl.call("projection.project", session=session)
    texts = [i["text"] for i in got]
    expect(
        "PROJ-004",
        not any("PART" in t for t in texts),
        "incomplete assistant chunks were projected",
        texts=texts,
    )
    # an item without text may be kept as '' or dropped (D-256, D-524)
    kept = [t for t in texts if t != ""]
    expect_equal("PROJ-001", kept, ["question", "next", "done"], what="projected texts")


@pytest.mark.req("PROJ-012")
def test_an_assistant_message_marked_interrupted_is_not_projected(impl: Implementation) -> None:
    """D-57, D-166: the later release's flag (release profile: the note has no such flag)."""
    session = log(
        user("question"),
        (
            "assistant/message",
            {"turn": 0, "step": 0, "interrupted": True, "content": [text_block("PARTIAL")]},
        ),
        user("next"),
        ("assistant/message", {"turn": 1, "step": 0, "content": [text_block("done")]}),
    )
    got = impl.call("projection.project", session=session)
    texts = [i["text"] for i in got]
    expect(
        "PROJ-012",
        not any("PART" in t for t in texts),
        "an interrupted assistant message was projected",
        texts=texts,
    )


@pytest.mark.req("PROJ-003", "PROJ-009")
def test_baked_prompt_projects_only_its_display_content(impl: Implementation) -> None:
    """Upstream's pinned non-recursion case, for user and steering prompts."""
    for type_, extra in (("user/message", {}), ("steering/message", {"turn": 0})):
        data = {
            **extra,
            "content": [
                text_block("nested referenced snapshot must not propagate"),
                text_block("\n\n## My request:\n"),
                text_block("direct source question"),
            ],
            "source": USER,
            "envelope": {
                "displayContent": [text_block("direct source question")],
                "prefixContexts": [{"source": {"kind": "plugin", "plugin": "session-reference"}}],
            },
        }
        got = impl.call("projection.project", session=log((type_, data)))
        texts = [i["text"] for i in got]
        expect(
            "PROJ-003",
            not any("nested referenced snapshot" in t for t in texts),
            "a baked snapshot was re-exported",
            texts=texts,
        )
        expect_equal("PROJ-009", got, items(("user", "direct source question")), type=type_)


@pytest.mark.req("PROJ-003", "PROJ-009")
def test_empty_display_content_projects_nothing_and_the_delimiter_is_not_parsed(
    impl: Implementation,
) -> None:
    hidden = {
        "content": [text_block("snapshot"), text_block("request")],
        "source": USER,
        "envelope": {"displayContent": [], "prefixContexts": []},
    }
    plain = {"content": [text_block("a\n\n## My request:\nb")], "source": USER}
    got = impl.call(
        "projection.project", session=log(("user/message", hidden), ("user/message", plain))
    )
    texts = [i["text"] for i in got]
    expect("PROJ-003", "snapshot" not in texts, "a baked snapshot was projected", texts=texts)
    expect_equal("PROJ-009", got, items(("user", "a\n\n## My request:\nb")))


@pytest.mark.req("PROJ-006")
def test_text_blocks_join_with_lf_and_empty_items_vanish(impl: Implementation) -> None:
    blocks = [
        text_block(""),
        {"type": "reasoning", "text": "no"},
        text_block("a"),
        {"type": "tool-call", "id": "c", "name": "x", "arguments": "{}"},
        {"type": "text", "text": 5},
        text_block(" "),
    ]
    session = log(
        ("user/message", {"content": blocks, "source": USER}),
        ("assistant/message", {"turn": 0, "step": 0, "content": [text_block(""), text_block("")]}),
        ("assistant/message", {"turn": 0, "step": 0, "content": []}),
        ("user/message", {"content": [text_block("")], "source": USER}),
        ("user/message", {"content": [text_block("  ")], "source": USER}),
    )
    assert impl.call("projection.project", session=session) == items(
        ("user", "\na\n "), ("assistant", "\n"), ("user", "  ")
    )


@pytest.mark.req("PROJ-002", "PROJ-008")
def test_checkpoints_are_recognized_by_source_only(impl: Implementation) -> None:
    session = log(
        user("appended checkpoint", COMPACT),
        user(
            "backend fields", {"kind": "plugin", "plugin": "compact", "compactionId": "c1", "x": 1}
        ),
        user("other plugin", {"kind": "plugin", "plugin": "compact-basic"}),
        user("kind only", {"kind": "compact"}),
        (
            "steering/message",
            {"turn": 0, "content": [text_block("compact steer")], "source": COMPACT},
        ),
        ("context/message", {"content": [text_block("compact context")], "source": COMPACT}),
        user("extra user fields", {"kind": "user", "rpcId": 3}),
    )
    got = impl.call("projection.project", session=session)
    flags = {i["text"]: i["checkpoint"] for i in got}
    expect(
        "PROJ-002",
        flags.get("backend fields") is True,
        "a compact-sourced message with backend fields is not a checkpoint",
        got=got,
    )
    if flags.get("backend fields") is not True:
        return  # the rest is judged once checkpoints are recognized at all (PROJ-002)
    expect_equal(
        "PROJ-008",
        got,
        items(
            ("user", "appended checkpoint", True),
            ("user", "backend fields", True),
            ("user", "extra user fields"),
        ),
    )


@pytest.mark.req("PROJ-005")
def test_repeated_compaction_exposes_only_the_latest_lineage(impl: Implementation) -> None:
    """Research note A §3.3: a second compaction shadows the first checkpoint too."""
    session = log(
        user("first"),
        ("assistant/chunk", {"turn": 0, "step": 0, "chunk": {}}),
        {
            "type": "user/message",
            "data": {"content": [text_block("checkpoint one")], "source": COMPACT},
            "surfaceOp": {"op": "replace", "start": 0, "end": 0},
            "sourceEventSeqs": [0],
        },
        user("tail"),
        {
            "type": "user/message",
            "data": {"content": [text_block("checkpoint two")], "source": COMPACT},
            "surfaceOp": {"op": "replace", "start": 2, "end": 3},
            "sourceEventSeqs": [2, 3],
        },
        ("assistant/message", {"turn": 1, "step": 0, "content": [text_block("after")]}),
    )
    surface = impl.call("session.surface", session=session)
    assert [e["seq"] for e in surface["events"]] == [4, 5]
    assert surface["capturedThroughSeq"] == 5
    assert impl.call("projection.project", session=session) == items(
        ("user", "checkpoint two", True), ("assistant", "after")
    )


MALFORMED = {
    "non-contiguous seq": {"type": "turn/end", "seq": 1, "time": 0, "data": {}},
    "surfaceOp on a log-only type": {
        "type": "assistant/chunk",
        "seq": 0,
        "time": 0,
        "data": {},
        "surfaceOp": "append",
    },
    "unknown type on the surface": {
        "type": "mystery/message",
        "seq": 0,
        "time": 0,
        "data": {},
        "surfaceOp": "append",
    },
    "surface type without surfaceOp": {
        "type": "user/message",
        "seq": 0,
        "time": 0,
        "data": {"content": [], "source": USER},
    },
    "replace of a missing node": {
        "type": "user/message",
        "seq": 0,
        "time": 0,
        "data": {"content": [], "source": COMPACT},
        "surfaceOp": {"op": "replace", "start": 0, "end": 0},
        "sourceEventSeqs": [],
    },
    "content not an array": {
        "type": "user/message",
        "seq": 0,
        "time": 0,
        "data": {"content": "text", "source": USER},
        "surfaceOp": "append",
    },
    "data not an object": {
        "type": "assistant/message",
        "seq": 0,
        "time": 0,
        "data": ["x"],
        "surfaceOp": "append",
    },
    "block not an object": {
        "type": "assistant/message",
        "seq": 0,
        "time": 0,
        "data": {"content": ["text"]},
        "surfaceOp": "append",
    },
    "envelope without displayContent": {
        "type": "user/message",
        "seq": 0,
        "time": 0,
        "data": {"content": [], "source": USER, "envelope": {}},
        "surfaceOp": "append",
    },
    "event not an object": "user/message",
    "negative seq": {"type": "turn/end", "seq": -1, "time": 0, "data": {}},
    "missing data": {"type": "turn/end", "seq": 0, "time": 0},
}
DATA_SHAPE = {
    "block not an object",
    "content not an array",
    "data not an object",
    "envelope without displayContent",
}


@pytest.mark.req("PROJ-010")
@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_logs_are_invalid_event(impl: Implementation, name: str) -> None:
    session = {"header": {"id": "s", "createdAt": 0}, "events": [MALFORMED[name]]}
    assert impl.error_code("projection.project", session=session) == INVALID_EVENT
    if name not in DATA_SHAPE:  # the fold checks the log; data shapes matter to projection
        assert impl.error_code("session.surface", session=session) == INVALID_EVENT


@pytest.mark.req("REF-003")
@pytest.mark.differential
@settings(max_examples=examples(50), suppress_health_check=SLOW)
@given(session_cases())
def test_matches_reference_model(
    impl: Implementation, oracle: Implementation, case: SessionCase
) -> None:
    expect_equal(
        "REF-003",
        impl.call("session.surface", session=case.session),
        oracle.call("session.surface", session=case.session),
        what="surface read",
    )
