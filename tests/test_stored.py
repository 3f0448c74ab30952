"""Preparation from stored logs (model/stored.py) against preparation from the same
session as data (the reference adapter's store): the same contexts, or the same error,
for valid logs, for logs with a flaw anywhere, and under every cap.  The streaming read
keeps only summaries of the source; these tests are what says it loses nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters.reference.prepare_ops import FaultStore
from dsh_conformance.conformance.strategies import js_strings, json_values
from dsh_conformance.conformance.strategies_sessions import big_texts, session_cases
from dsh_conformance.model import jsstr
from dsh_conformance.model.config import ReferenceConfig
from dsh_conformance.model.errors import DshError
from dsh_conformance.model.prepare import Reader, prepare
from dsh_conformance.model.stored import StoredLogs, write_log

CONTENT = [{"type": "text", "text": "what did @src decide?"}]


def _prepare(sid: str, read: Reader, cap: int | None) -> object:
    config = ReferenceConfig() if cap is None else ReferenceConfig(max_reference_bytes=cap)
    try:
        return prepare("target", CONTENT, [{"sessionId": sid}], read, config).to_json()
    except DshError as exc:
        return (exc.code, exc.message)


def _both(path: Path, session: Any, cap: int | None) -> tuple[object, object]:
    """(stored, as data) for *session*, which is written to *path* as its JSON Lines."""
    header = session.get("header")
    sid = header.get("id") if isinstance(header, dict) else None
    sid = sid if isinstance(sid, str) and sid != "target" else "src"
    as_json = jsstr.parse(jsstr.stringify(session))  # what the session is as JSON
    write_log(path, as_json)
    with StoredLogs({sid: path}) as store:
        stored = _prepare(sid, store.read, cap)
    return stored, _prepare(sid, FaultStore({sid: as_json}, None).read, cap)


def _user_log(texts: list[str]) -> dict[str, Any]:
    """A session "src" of direct-user messages, one per text."""
    return {
        "header": {"version": 0, "id": "src"},
        "events": [
            {
                "type": "user/message",
                "seq": i,
                "time": i,
                "data": {"content": [{"type": "text", "text": t}], "source": {"kind": "user"}},
                "surfaceOp": "append",
            }
            for i, t in enumerate(texts)
        ],
    }


caps = st.none() | st.integers(1, 600) | st.integers(600, 4096)
SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)


@SETTINGS
@given(session_cases(texts=st.one_of(js_strings(max_size=16), big_texts())), caps)
def test_a_stored_log_prepares_as_the_session_does_as_data(
    tmp_path: Path, case: Any, cap: int | None
) -> None:
    stored, as_data = _both(tmp_path / "log.jsonl", case.session, cap)
    assert stored == as_data


_FLAWS = st.sampled_from(
    [
        "event-not-object",
        "event-any-json",
        "content-not-array",
        "data-not-object",
        "seq-gap",
        "bad-surface-op",
        "unknown-field",
        "header-not-object",
        "bad-source-seqs",
        "drop-surface-op",
    ]
)


@SETTINGS
@given(session_cases(), _FLAWS, st.data(), caps)
def test_a_flaw_anywhere_in_a_stored_log_is_reported_as_for_the_session_as_data(
    tmp_path: Path, case: Any, flaw: str, data: st.DataObject, cap: int | None
) -> None:
    session = case.session
    events: list[Any] = session["events"]
    if flaw == "header-not-object":
        session["header"] = data.draw(json_values())
    elif events:
        at = data.draw(st.integers(0, len(events) - 1))
        event = events[at]
        if flaw == "event-not-object":
            events[at] = data.draw(st.sampled_from([None, 1, "x", []]))
        elif flaw == "event-any-json":
            events[at] = data.draw(json_values())
        elif flaw == "content-not-array":
            event["data"]["content"] = data.draw(st.sampled_from([None, "x", {"a": 1}, [1]]))
        elif flaw == "data-not-object":
            event["data"] = data.draw(st.sampled_from([None, 1, "x", [1]]))
        elif flaw == "seq-gap":
            event["seq"] += data.draw(st.integers(1, 3))
        elif flaw == "bad-surface-op":
            event["surfaceOp"] = data.draw(
                st.sampled_from(["insert", {"op": "replace", "start": 0, "end": 99}, None])
            )
        elif flaw == "unknown-field":
            event["extra"] = 1
        elif flaw == "bad-source-seqs":
            event["sourceEventSeqs"] = data.draw(st.sampled_from([[at + 5], [0, 0], "x"]))
        else:
            event.pop("surfaceOp", None)
    stored, as_data = _both(tmp_path / "log.jsonl", session, cap)
    assert stored == as_data


def test_a_session_without_a_log_is_not_found() -> None:
    with StoredLogs({}) as store:
        assert _prepare("src", store.read, None) == _prepare("src", FaultStore({}, None).read, None)


def test_a_malformed_message_shadowed_by_a_compaction_is_no_error(tmp_path: Path) -> None:
    """Projection reads the surface only: a flaw in a shadowed node never surfaces."""
    user = {"kind": "user"}
    compact = {"kind": "plugin", "plugin": "compact"}
    session = {
        "header": {"version": 0, "id": "src"},
        "events": [
            {"type": "user/message", "seq": 0, "time": 0, "surfaceOp": "append",
             "data": {"content": "not blocks", "source": user}},
            {"type": "user/message", "seq": 1, "time": 1, "sourceEventSeqs": [0],
             "surfaceOp": {"op": "replace", "start": 0, "end": 0},
             "data": {"content": [{"type": "text", "text": "summary"}], "source": compact}},
        ],
    }  # fmt: skip
    stored, as_data = _both(tmp_path / "log.jsonl", session, None)
    assert stored == as_data
    assert isinstance(stored, dict)
    assert "summary" in jsstr.stringify(stored["contexts"])


def test_a_line_that_is_not_json_fails_the_read(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"version":0,"id":"src"}\n{"type":\n')
    with StoredLogs({"src": path}) as store:
        outcome = store.read("src")
    assert outcome.error == f"invalid stored log {str(path)!r}: line 2 is not JSON"
    path.write_bytes(b"")
    with StoredLogs({"src": path}) as store:
        assert store.read("src").error == f"invalid stored log {str(path)!r}: no header line"


def test_a_log_deleted_after_its_read_still_gives_what_was_read(tmp_path: Path) -> None:
    """The read keeps its file open: the snapshot is what was read (PREP-008)."""
    texts = [f"message {i} " + "x" * 300 for i in range(6)]
    session = _user_log(texts)
    path = tmp_path / "log.jsonl"
    write_log(path, session)
    with StoredLogs({"src": path}) as store:
        outcome = store.read("src")
        os.unlink(path)
        assert [item.text for item in outcome.projected] == texts


def test_a_log_rewritten_under_an_open_read_is_refused(tmp_path: Path) -> None:
    session = _user_log(["abc"])
    path = tmp_path / "log.jsonl"
    write_log(path, session)
    with StoredLogs({"src": path}) as store:
        outcome = store.read("src")
        path.write_bytes(path.read_bytes().replace(b'"abc"', b'"abd"'))  # same inode
        with pytest.raises(RuntimeError, match="append-only"):
            _ = outcome.projected[0].text


@given(json_values())
@example({"b": 1, "0": 2})  # a key that starts with a digit: the exact parser reads it
@example([2**64 + 1, 1.5, -0.0])  # beyond 64 bits (orjson: a float), floats
@example(["\ud800", "\ud83d\ude00"])  # a lone surrogate (orjson refuses it), a pair
def test_parse_bytes_is_json_parse(value: object) -> None:
    line = jsstr.stringify_bytes(value)
    assert repr(jsstr.parse_bytes(line)) == repr(jsstr.parse(line.decode()))  # types and order too


def test_only_the_messages_retention_weighs_are_read_back(tmp_path: Path) -> None:
    """The bound on memory: a text is read again only for the messages retention keeps
    and the one it stops at, never for the hundreds it only counts."""
    from dsh_conformance.model.retention import retain

    text = "lorem ipsum 界 " * 150  # ~2.2 KB
    session = _user_log([f"{i}: {text}" for i in range(300)])
    path = tmp_path / "log.jsonl"
    write_log(path, session)
    with StoredLogs({"src": path}) as store:
        outcome = store.read("src")
        assert outcome.snapshot is not None
        kept = retain(outcome.snapshot, "src", 65_536, outcome.projected)
        read_back = [item for item in outcome.projected if item._text is not None]  # type: ignore[attr-defined]
    assert kept.stats.retained_messages < 40
    assert len(read_back) == kept.stats.retained_messages + 1
