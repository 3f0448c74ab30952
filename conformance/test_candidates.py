"""HOST-*: candidate discovery for mention completion."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.conformance.strategies import js_strings

#: Generation of whole session logs is legitimately slow on a loaded CI machine.
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]
pytestmark = pytest.mark.capability("candidates")
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def sess(sid: str, created: int, cwd: str | None = None, *titles: Any) -> dict[str, Any]:
    header: dict[str, Any] = {"version": 0, "id": sid, "createdAt": created}
    if cwd is not None:
        header["cwd"] = cwd
    events = [
        {"type": "session/title", "seq": i, "time": 0, "data": {"title": t}}
        for i, t in enumerate(titles)
    ]
    return {"header": header, "events": events}


def escape(text: str) -> str:
    """Independent statement of D-51: controls as literal \\xHH (LF too, fields are inline)."""
    return "".join(f"\\x{ord(c):02x}" if CONTROLS.fullmatch(c) else c for c in text)


def uri_id(uri: str) -> str:
    payload = uri.removeprefix("dsh-session:")
    return str(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


UPSTREAM = {
    "target": sess("target", 10, "/same"),
    "other": sess("other", 40, "/else"),
    "none": sess("none", 30),
    "same": sess("same", 20, "/same"),
    "same-later": sess("same-later", 25, "/same", "Earlier title", "Latest title"),
}


@pytest.mark.req("HOST-002", "HOST-009")
def test_upstream_ranking_vector(impl: Implementation) -> None:
    """Research note A §5.8: same cwd, then no cwd, then other cwd; titles label."""
    got = impl.call("candidates.list", target={"id": "target", "cwd": "/same"}, sessions=UPSTREAM)
    assert [(c["sessionId"], c["label"]) for c in got] == [
        ("same-later", "Latest title"),
        ("same", "same"),
        ("none", "none"),
        ("other", "other"),
    ]
    assert got[0]["cwd"] == "/same"
    assert "cwd" not in got[2]
    assert got[0]["createdAt"] == 25


@pytest.mark.req("HOST-003", "HOST-009")
def test_query_and_limit(impl: Implementation) -> None:
    target = {"id": "target", "cwd": "/same"}
    got = impl.call("candidates.list", target=target, sessions=UPSTREAM, query="els", limit=1)
    assert [c["sessionId"] for c in got] == ["other"]
    got = impl.call("candidates.list", target=target, sessions=UPSTREAM, query="SAME")
    assert [c["sessionId"] for c in got] == ["same-later", "same"]
    # v1 discovery does not search titles (D-48); the target never lists itself.
    assert impl.call("candidates.list", target=target, sessions=UPSTREAM, query="latest") == []
    assert impl.call("candidates.list", target=target, sessions=UPSTREAM, query="target") == []


@pytest.mark.req("HOST-009", "HOST-005")
@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "2"])
def test_invalid_limit(impl: Implementation, limit: Any) -> None:
    code = impl.error_code("candidates.list", target={"id": "t"}, sessions=UPSTREAM, limit=limit)
    assert code == "SESSION_REFERENCE_INVALID_REFERENCE"


@pytest.mark.req("HOST-005")
def test_lookup_follows_cancellation(impl: Implementation) -> None:
    target = {"id": "target"}
    cancelled = "SESSION_REFERENCE_CANCELLED"
    assert (
        impl.error_code("candidates.list", target=target, sessions=UPSTREAM, cancelAt="before")
        == cancelled
    )
    assert (
        impl.error_code(
            "candidates.list", target=target, sessions=UPSTREAM, listDelay="never", cancelAt=3
        )
        == cancelled
    )
    assert impl.call("candidates.list", target=target, sessions=UPSTREAM, listDelay=2, cancelAt=3)


@pytest.mark.req("HOST-002")
def test_label_falls_back_to_the_id(impl: Implementation) -> None:
    sessions = {
        "plain": sess("plain", 3),
        "empty-title": sess("empty-title", 2, None, "first", ""),
        "bad-title": sess("bad-title", 1, None, "kept", {"not": "a string"}),
    }
    got = impl.call("candidates.list", target={"id": "t"}, sessions=sessions)
    assert [(c["sessionId"], c["label"]) for c in got] == [
        ("plain", "plain"),
        ("empty-title", ""),
        ("bad-title", "kept"),
    ]


@st.composite
def session_sets(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(js_strings(max_size=6), min_size=1, max_size=7, unique=True))
    out = {}
    for sid in ids:
        cwd = draw(st.none() | st.sampled_from(["/a", "/b", "/A/x", "/b\x1b[31m"]))
        titles = draw(st.lists(js_strings(max_size=6), max_size=2))
        out[sid] = sess(sid, draw(st.integers(0, 5)), cwd, *titles)
    return out


def expected_order(sessions: dict[str, Any], target: dict[str, Any], query: str) -> list[str]:
    """Independent statement of D-48/D-49."""
    headers = [s["header"] for s in sessions.values() if s["header"]["id"] != target["id"]]
    needle = query.lower()
    if needle:
        headers = [
            h for h in headers if needle in h["id"].lower() or needle in h.get("cwd", "\0").lower()
        ]
    headers.sort(key=lambda h: h["id"].encode("utf-16-be", "surrogatepass"))
    headers.sort(key=lambda h: -h["createdAt"])

    def rank(h: dict[str, Any]) -> int:
        cwd = h.get("cwd")
        if cwd is not None and target.get("cwd") is not None and cwd == target["cwd"]:
            return 0
        return 1 if cwd is None else 2

    headers.sort(key=rank)
    return [h["id"] for h in headers]


@pytest.mark.req("HOST-003", "HOST-009")
@settings(suppress_health_check=SLOW)
@given(
    session_sets(),
    st.none() | st.sampled_from(["/a", "/b"]),
    st.sampled_from(["", "a", "/B", "x"]),
    st.integers(1, 8),
)
# Only the title contains the query: the seed's v1 discovery filters on id and cwd alone.
@example({"t": sess("t", 0), "s1": sess("s1", 1, None, "xa")}, None, "x", 8)
def test_filter_rank_and_limit(
    impl: Implementation, sessions: dict[str, Any], cwd: str | None, query: str, limit: int
) -> None:
    target: dict[str, Any] = {"id": next(iter(sessions))}
    if cwd is not None:
        target["cwd"] = cwd
    got = impl.call("candidates.list", target=target, sessions=sessions, query=query, limit=limit)
    assert [c["sessionId"] for c in got] == expected_order(sessions, target, query)[:limit]


@pytest.mark.req("HOST-004", "HOST-002")
@settings(suppress_health_check=SLOW)
@given(session_sets())
def test_display_strings_escape_terminal_controls(
    impl: Implementation, sessions: dict[str, Any]
) -> None:
    got = impl.call("candidates.list", target={"id": "\0none"}, sessions=sessions, limit=50)
    for c in got:
        header = sessions[c["sessionId"]]["header"]
        titles = [e["data"]["title"] for e in sessions[c["sessionId"]]["events"]]
        assert c["label"] == (titles[-1] if titles else header["id"])
        display = c["display"]
        assert display == {
            "sessionId": escape(c["sessionId"]),
            "label": escape(c["label"]),
            "cwd": None if "cwd" not in header else escape(header["cwd"]),
        }
        for value in display.values():
            assert value is None or not CONTROLS.search(value)
        # The canonical URI (alone and inside the mention) keeps the original id.
        assert uri_id(c["uri"]) == c["sessionId"]
        assert c["mention"].endswith("](" + c["uri"] + ")")


@pytest.mark.req("HOST-004")
def test_escape_vector(impl: Implementation) -> None:
    sessions = {"id\x1b[2J\nx": sess("id\x1b[2J\nx", 1, "/w\x07\n", "ti\x9btle\n")}
    (c,) = impl.call("candidates.list", target={"id": "t"}, sessions=sessions)
    assert c["display"] == {
        "sessionId": "id\\x1b[2J\\x0ax",
        "label": "ti\\x9btle\\x0a",
        "cwd": "/w\\x07\\x0a",
    }
    assert c["sessionId"] == "id\x1b[2J\nx"
    # The mention label is the escaped label, with mention escaping (\ -> \\) on top.
    assert c["mention"] == "@[ti\\\\x9btle\\\\x0a](" + c["uri"] + ")"
