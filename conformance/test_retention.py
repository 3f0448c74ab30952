"""RET-*: per-source byte retention, checked against independent oracles."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.conformance.preparation_oracles import (
    kept_items,
    tag_safe_bytes,
    truncation_of,
    upstream_fixture,
    utf8_len,
)
from dsh_conformance.conformance.strategies import js_strings
from dsh_conformance.conformance.strategies_sessions import (
    COMPACT,
    SLOW,
    USER,
    SessionCase,
    big_texts,
    session_cases,
    text_block,
)

pytestmark = pytest.mark.capability("retention")
BUDGET = "SESSION_REFERENCE_BUDGET_EXCEEDED"


def data_of(case: SessionCase, label: str, conversation: list[dict[str, Any]]) -> dict[str, Any]:
    """The data object the seed's fields describe, built independently (ENV-010, D-40)."""
    header = case.session["header"]
    return {
        "sessionId": header["id"],
        "label": label,
        "cwd": header.get("cwd"),
        "capturedThroughSeq": case.captured_through_seq,
        "conversation": [{"role": c["role"], "text": c["text"]} for c in conversation],
    }


def session(sid: str, *messages: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """A log of appended messages: (type, text, source)."""
    events = []
    for seq, (type_, text, source) in enumerate(messages):
        data: dict[str, Any] = {"content": [text_block(text)]}
        if type_ == "assistant/message":
            data.update(turn=0, step=seq)
        else:
            data["source"] = source
        events.append({"type": type_, "seq": seq, "time": 0, "data": data, "surfaceOp": "append"})
    return {"header": {"version": 0, "id": sid, "createdAt": 1}, "events": events}


@pytest.mark.req(
    "RET-001",
    "RET-002",
    "RET-003",
    "RET-005",
    "RET-006",
    "RET-007",
    "RET-008",
    "RET-011",
    "SER-006",
)
@settings(max_examples=150, suppress_health_check=SLOW)
@given(
    session_cases(texts=big_texts(), max_events=12),
    st.integers(min_value=60, max_value=1600),
    js_strings(max_size=8),
)
def test_retention_properties(
    impl: Implementation, case: SessionCase, cap: int, label: str
) -> None:
    full = data_of(case, label, case.expected)
    code = impl.error_code("retention.retain", session=case.session, label=label, maxBytes=cap)
    if code is not None:
        assert code == BUDGET
        assert tag_safe_bytes(full) > cap, "a source that fits must not fail"
        return
    out = impl.call("retention.retain", session=case.session, label=label, maxBytes=cap)
    data, stats = out["data"], out["stats"]
    conversation = data["conversation"]
    # RET-001 / SER-006: the tag-safe serialized data object is within its cap.
    assert tag_safe_bytes(data) <= cap
    assert data == data_of(case, label, conversation)
    # RET-008: nothing is lost when everything fits.
    if tag_safe_bytes(full) <= cap:
        assert data == full
        assert stats["truncated"] is False
    # RET-002 / RET-005 / RET-003: checkpoints + newest + a suffix, each kept or sliced.
    kept = kept_items(conversation, case.expected)
    assert kept is not None, "retained messages are not checkpoints + newest + newest others"
    kept_ids = {id(k) for k in kept}
    dropped = [e for e in case.expected if id(e) not in kept_ids]
    # RET-006: every truncated text carries its exact notice; nothing is emptied.
    omitted_in_texts = 0
    for c, e in zip(conversation, kept, strict=True):
        assert c["text"] != ""
        if c["text"] != e["text"]:
            n = truncation_of(c["text"], e["text"])
            assert n is not None
            assert n > 0
            omitted_in_texts += n
            # RET-011: slicing happens only once nothing droppable is left.
            assert all(k["checkpoint"] for k in kept[:-1])
    # RET-007: exact statistics.
    assert stats == {
        "compacted": any(e["checkpoint"] for e in case.expected),
        "originalMessages": len(case.expected),
        "retainedMessages": len(conversation),
        "omittedMessages": len(dropped),
        "omittedBytes": sum(utf8_len(e["text"]) for e in dropped) + omitted_in_texts,
        "truncated": bool(dropped) or omitted_in_texts > 0,
    }


@pytest.mark.req("RET-004")
@settings(suppress_health_check=SLOW)
@given(js_strings(max_size=8), st.integers(min_value=0, max_value=200))
def test_fixed_fields_that_cannot_fit_fail(impl: Implementation, label: str, extra: int) -> None:
    sid = "s" * (extra + 1)
    src = session(sid, ("user/message", "hello", USER))
    fixed = tag_safe_bytes(
        {"sessionId": sid, "label": label, "cwd": None, "capturedThroughSeq": 0, "conversation": []}
    )
    for cap in (1, fixed - 1):
        if cap >= 1:
            assert (
                impl.error_code("retention.retain", session=src, label=label, maxBytes=cap)
                == BUDGET
            )


@pytest.mark.req("RET-004")
def test_empty_source_over_a_tiny_cap_fails(impl: Implementation) -> None:
    """Upstream's pinned case: maxReferenceBytes 16 and an empty source."""
    src = {"header": {"id": "source", "createdAt": 0}, "events": []}
    assert impl.error_code("retention.retain", session=src, label="source", maxBytes=16) == BUDGET
    ok = impl.call("retention.retain", session=src, label="source", maxBytes=100)
    assert ok["data"] == {
        "sessionId": "source",
        "label": "source",
        "cwd": None,
        "capturedThroughSeq": None,
        "conversation": [],
    }


def latest_fixture() -> dict[str, Any]:
    """Research note A §4.3: fixture §2.2 plus an assistant 'latest-' + 界×400 at seq 14."""
    src = upstream_fixture()
    src["events"].append(
        {
            "type": "assistant/message",
            "seq": 14,
            "time": 0,
            "data": {"turn": 1, "step": 2, "content": [text_block("latest-" + "界" * 400)]},
            "surfaceOp": "append",
        }
    )
    return src


@pytest.mark.req("RET-001", "RET-002", "RET-003", "RET-007", "RET-009")
def test_upstream_exact_budget_vector(impl: Implementation) -> None:
    out = impl.call("retention.retain", session=latest_fixture(), label="source", maxBytes=360)
    assert out["data"]["conversation"] == [
        {"role": "user", "text": "<compacted-summary>checkpoint</compacted-summary>"},
        {"role": "assistant", "text": "latest-" + "界" * 36 + "\n[… omitted 1092 UTF-8 bytes …]"},
    ]
    assert tag_safe_bytes(out["data"]) == 358
    assert out["stats"] == {
        "compacted": True,
        "originalMessages": 5,
        "retainedMessages": 2,
        "omittedMessages": 3,
        "omittedBytes": 1128,
        "truncated": True,
    }


@pytest.mark.req("RET-001", "RET-002", "RET-003", "RET-009")
@pytest.mark.parametrize(
    ("sid", "runs", "omitted"), [("one", 58, 1026), ("two", 58, 1026), ("three", 56, 1032)]
)
def test_upstream_three_references_vector(
    impl: Implementation, sid: str, runs: int, omitted: int
) -> None:
    src = session(
        sid,
        ("user/message", sid + "-" + "界" * 400, COMPACT),
        ("user/message", sid + "-tail", USER),
    )
    out = impl.call("retention.retain", session=src, label=sid, maxBytes=360)
    assert out["data"]["conversation"] == [
        {
            "role": "user",
            "text": f"{sid}-" + "界" * runs + f"\n[… omitted {omitted} UTF-8 bytes …]",
        },
        {"role": "user", "text": f"{sid}-tail"},
    ]
    assert out["stats"]["omittedBytes"] == omitted
    assert out["stats"]["omittedMessages"] == 0


@pytest.mark.req("RET-009")
@pytest.mark.parametrize(
    ("text", "cap", "expected", "omitted"),
    [
        ("0123456789" * 10, 40, "0123789\n[… omitted 93 UTF-8 bytes …]", 93),
        ("x" * 100, 34, "x\n[… omitted 99 UTF-8 bytes …]", 99),
        ("x" * 100, 35, "xx\n[… omitted 98 UTF-8 bytes …]", 98),
    ],
)
def test_upstream_truncation_vectors(
    impl: Implementation, text: str, cap: int, expected: str, omitted: int
) -> None:
    out = impl.call("retention.truncate", text=text, maxBytes=cap)
    assert (out["text"], out["omittedBytes"], out["fits"]) == (expected, omitted, True)


@pytest.mark.req("RET-006", "RET-011")
def test_a_preserved_message_is_never_emptied(impl: Implementation) -> None:
    """D-37: where upstream would keep the newest message as '' the model fails instead."""
    src = session("s", ("user/message", "x" * 1000, USER))
    fixed = tag_safe_bytes(
        {"sessionId": "s", "label": "s", "cwd": None, "capturedThroughSeq": 0, "conversation": []}
    )
    item = len('{"role":"user","text":""}')
    # Upstream: target 20 < the 35-byte bare notice -> text "" with no notice, and it fits.
    assert (
        impl.error_code("retention.retain", session=src, label="s", maxBytes=fixed + item + 20)
        == BUDGET
    )
    # With room for a notice, the newest message survives as a slice plus exact notice.
    out = impl.call("retention.retain", session=src, label="s", maxBytes=fixed + item + 40)
    (only,) = out["data"]["conversation"]
    # Two passes: the notice's LF costs 2 escaped bytes, so the first 40-byte slice overflows.
    assert only["text"] == "xxx" + "xx" + "\n[… omitted 995 UTF-8 bytes …]"
    assert truncation_of(only["text"], "x" * 1000) == 995


@pytest.mark.req("RET-006")
def test_bare_notice_when_nothing_else_fits(impl: Implementation) -> None:
    out = impl.call("retention.truncate", text="0123456789" * 10, maxBytes=31)
    assert out == {"text": "\n[… omitted 100 UTF-8 bytes …]", "omittedBytes": 100, "fits": False}


@pytest.mark.req("RET-003", "RET-006")
@settings(suppress_health_check=SLOW)
@given(big_texts(max_repeat=40), st.integers(min_value=0, max_value=300))
@example("界a界", 2)
@example("\ud800" * 20, 40)
@example("😀" * 30, 45)
def test_truncation_is_an_exact_head_tail_slice(impl: Implementation, text: str, cap: int) -> None:
    out = impl.call("retention.truncate", text=text, maxBytes=cap)
    if utf8_len(text) <= cap:
        assert out == {"text": text, "omittedBytes": 0, "fits": True}
        return
    assert truncation_of(out["text"], text) == out["omittedBytes"]
    assert out["fits"] == (utf8_len(out["text"]) <= cap)


@pytest.mark.req("RET-009")
@settings(max_examples=80, suppress_health_check=SLOW)
@given(session_cases(texts=big_texts(), max_events=10), st.integers(min_value=60, max_value=1200))
def test_matches_reference_model_byte_for_byte(
    impl: Implementation, oracle: Implementation, case: SessionCase, cap: int
) -> None:
    args = {"session": case.session, "label": "L", "maxBytes": cap}
    code = oracle.error_code("retention.retain", **args)
    if code is not None:
        assert impl.error_code("retention.retain", **args) == code
    else:
        assert impl.call("retention.retain", **args) == oracle.call("retention.retain", **args)


@pytest.mark.req("RET-006", "RET-011")
def test_a_short_newest_message_that_cannot_fit_fails(impl: Implementation) -> None:
    """D-37: upstream keeps 'A2:<' as '' (it fits then); a bare notice would be longer than
    the text itself, so no slice can help and the source cannot fit."""
    src = session("source", ("user/message", "U1:a", USER), ("assistant/message", "A2:<", USER))
    assert impl.error_code("retention.retain", session=src, label="", maxBytes=120) == BUDGET
    ok = impl.call("retention.retain", session=src, label="", maxBytes=127)
    assert ok["data"]["conversation"] == [{"role": "assistant", "text": "A2:<"}]
    assert ok["stats"]["omittedMessages"] == 1
