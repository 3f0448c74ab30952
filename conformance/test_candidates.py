"""HOST-*: candidate discovery for mention completion.

Seed checks (HOST-002..HOST-005) state the note's sentences: title matches, another way
to match a query, another tie order, the target listed, another escape spelling or
cancellation code pass them.  The decisions' pins are checked apart: id/cwd-only
filtering HOST-011 (D-48), order HOST-009 (D-49), empty and non-string titles HOST-012
(D-50), the \\xHH spelling HOST-013 (D-51), codes HOST-014/HOST-009 (D-52).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect, expect_equal, expect_error
from dsh_conformance.conformance.side_by_side import both
from dsh_conformance.conformance.strategies import js_strings

#: Generation of whole session logs is legitimately slow on a loaded CI machine.
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]
pytestmark = pytest.mark.capability("candidates")
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
#: External terminal controls to any reading of the note: C0 but tab/LF/CR, and C1.
TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x80-\x9f]")
#: Printable text that every escaping leaves as it is.
PRINTABLE = re.compile(r"[ -\[\]-~]*")


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


def listed(got: list[dict[str, Any]]) -> list[str]:
    return [c["sessionId"] for c in got]


def expect_id_cwd_matches(
    got: list[dict[str, Any]],
    sessions: dict[str, Any],
    target: dict[str, Any],
    query: str,
    limit: int,
) -> None:
    """HOST-003 at the sentence's level: "v1 discovery filters only id and cwd" does not
    say how a query matches (substring, prefix, token, fuzzy, any case: D-48, D-253), so
    the seed check holds what every reading keeps: a session whose id or cwd *is* the
    query is offered while the limit leaves room, and only existing sessions are offered.
    The substring, case-insensitive reading is HOST-011's."""
    found = listed(got)
    with check("HOST-003", query=query, limit=limit, listed=found):
        assert set(found) <= {s["header"]["id"] for s in sessions.values()}, "unknown session"
        matches = {
            s["header"]["id"]
            for s in sessions.values()
            if s["header"]["id"] != target["id"]
            and query in (s["header"]["id"], s["header"].get("cwd"))
        }
        if len(found) < limit:
            assert matches <= set(found), "a session whose id or cwd is the query is missing"
        if matches:
            assert found, "a session's id or cwd is the query but nothing is offered"


def expect_label(label: object, titles: list[Any], sid: str, **inputs: object) -> None:
    """HOST-002 at the sentence's level (string titles only): the latest title, else the
    id; an empty latest title may show as '' or fall back to the id."""
    latest = titles[-1] if titles else None
    allowed = {sid} if latest is None else ({latest, sid} if latest == "" else {latest})
    expect("HOST-002", label in allowed, "not the latest title or the id", label=label, **inputs)


@pytest.mark.req("HOST-002", "HOST-009")
def test_upstream_ranking_vector(impl: Implementation) -> None:
    """Research note A §5.8: same cwd, then no cwd, then other cwd; titles label."""
    got = impl.call("candidates.list", target={"id": "target", "cwd": "/same"}, sessions=UPSTREAM)
    # HOST-002 judges the label of each candidate offered; which are offered (the target
    # excluded) and their order are the profile's (D-49: HOST-009, HOST-011).
    for c in got:
        if c["sessionId"] in UPSTREAM:
            titles = [e["data"]["title"] for e in UPSTREAM[c["sessionId"]]["events"]]
            expect_label(c["label"], titles, c["sessionId"], sessionId=c["sessionId"])
    expect_equal(
        "HOST-009",
        {c["sessionId"]: c["label"] for c in got},
        {"same-later": "Latest title", "same": "same", "none": "none", "other": "other"},
        what="labels",
    )
    with check("HOST-009", got=got):
        assert listed(got) == ["same-later", "same", "none", "other"]
        assert got[0]["cwd"] == "/same"
        assert "cwd" not in got[2]
        assert got[0]["createdAt"] == 25


@pytest.mark.req("HOST-003", "HOST-009", "HOST-011")
def test_query_and_limit(impl: Implementation) -> None:
    target = {"id": "target", "cwd": "/same"}
    got = impl.call("candidates.list", target=target, sessions=UPSTREAM, query="els", limit=1)
    expect_id_cwd_matches(got, UPSTREAM, target, "els", 1)
    expect_equal("HOST-009", listed(got), ["other"], what="candidates", query="els")
    got = impl.call("candidates.list", target=target, sessions=UPSTREAM, query="SAME")
    expect_equal("HOST-011", listed(got), ["same-later", "same"], what="candidates", query="SAME")
    # v1 discovery does not search titles (D-48); the target never lists itself.
    got = impl.call("candidates.list", target=target, sessions=UPSTREAM, query="latest")
    expect_equal("HOST-011", listed(got), [], what="candidates", query="latest")
    got = impl.call("candidates.list", target=target, sessions=UPSTREAM, query="target")
    expect_equal("HOST-009", listed(got), [], what="candidates", query="target")


@pytest.mark.req("HOST-003")
@pytest.mark.parametrize("query", ["other", "/else", "same-later", "/same"])
def test_a_whole_id_or_cwd_finds_its_session(impl: Implementation, query: str) -> None:
    """HOST-003 on its own: whatever way a query matches (D-253), the whole id or cwd of
    a session finds it."""
    target = {"id": "target", "cwd": "/same"}
    got = impl.call("candidates.list", target=target, sessions=UPSTREAM, query=query)
    expect_id_cwd_matches(got, UPSTREAM, target, query, 50)


@pytest.mark.req("HOST-009")
@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "2"])
def test_invalid_limit(impl: Implementation, limit: Any) -> None:
    """The note has no limit: its validation and code are the reference profile's (D-52)."""
    args = {"target": {"id": "t"}, "sessions": UPSTREAM, "limit": limit}
    expect_error("HOST-009", impl, "candidates.list", args, codes={INVALID})


@pytest.mark.req("HOST-005", "HOST-014")
def test_lookup_follows_cancellation(impl: Implementation) -> None:
    target = {"id": "target"}
    for extra in ({"cancelAt": "before"}, {"listDelay": "never", "cancelAt": 3}):
        args = {"target": target, "sessions": UPSTREAM, **extra}
        code = expect_error("HOST-005", impl, "candidates.list", args)
        if code is not None:  # it failed: which code is judged apart
            expect_equal(
                "HOST-014", code, "SESSION_REFERENCE_CANCELLED", what="error code", **extra
            )
    got = impl.call("candidates.list", target=target, sessions=UPSTREAM, listDelay=2, cancelAt=3)
    expect("HOST-005", got, "a listing that settles before the cancellation is returned")


@pytest.mark.req("HOST-002", "HOST-012")
def test_label_falls_back_to_the_id(impl: Implementation) -> None:
    sessions = {
        "plain": sess("plain", 3),
        "titled": sess("titled", 2, None, "first", "second"),
        "empty-title": sess("empty-title", 1, None, "first", ""),
    }
    got = impl.call("candidates.list", target={"id": "t"}, sessions=sessions)
    labels = {c["sessionId"]: c["label"] for c in got}
    for sid, session in sessions.items():
        if sid not in labels:  # whether it is offered is HOST-003's, not the label's
            continue
        titles = [e["data"]["title"] for e in session["events"]]
        expect_label(labels[sid], titles, sid, sessionId=sid)
    expect_equal("HOST-012", labels.get("empty-title"), "", what="label of an empty title")


@pytest.mark.req("HOST-012")
def test_non_string_title_is_skipped(impl: Implementation) -> None:
    """The note does not speak of malformed titles: skipping them is the profile's (D-50)."""
    sessions = {
        "bad-title": sess("bad-title", 2, None, "kept", {"not": "a string"}),
        "only-bad": sess("only-bad", 1, None, 7),
    }
    got = impl.call("candidates.list", target={"id": "t"}, sessions=sessions)
    labels = [(c["sessionId"], c["label"]) for c in got]
    expect_equal("HOST-012", labels, [("bad-title", "kept"), ("only-bad", "only-bad")])


@st.composite
def session_sets(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(js_strings(max_size=6), min_size=1, max_size=7, unique=True))
    out = {}
    for sid in ids:
        cwd = draw(st.none() | st.sampled_from(["/a", "/b", "/A/x", "/b\x1b[31m"]))
        titles = draw(st.lists(js_strings(max_size=6), max_size=2))
        out[sid] = sess(sid, draw(st.integers(0, 5)), cwd, *titles)
    return out


INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"


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


@pytest.mark.req("HOST-003", "HOST-009", "HOST-011")
@settings(suppress_health_check=SLOW)
@given(
    session_sets(),
    st.none() | st.sampled_from(["/a", "/b"]),
    st.sampled_from(["", "a", "/B", "x"]),
    st.integers(1, 8),
)
# Only the title contains the query: the seed's v1 discovery filters on id and cwd alone.
@example({"t": sess("t", 0), "s1": sess("s1", 1, None, "xa")}, None, "x", 8)
# A createdAt tie: UTF-16 code-unit order puts "B" first, ICU collation "a" (D-49).
@example({"t": sess("t", 0), "a": sess("a", 1), "B": sess("B", 1)}, None, "", 8)
def test_filter_rank_and_limit(
    impl: Implementation, sessions: dict[str, Any], cwd: str | None, query: str, limit: int
) -> None:
    target: dict[str, Any] = {"id": next(iter(sessions))}
    if cwd is not None:
        target["cwd"] = cwd
    got = impl.call("candidates.list", target=target, sessions=sessions, query=query, limit=limit)
    expect_id_cwd_matches(got, sessions, target, query, limit)
    expected = expected_order(sessions, target, query)
    filtered = set(listed(got)) <= set(expected) and len(got) == min(limit, len(expected))
    with check("HOST-011", query=query, limit=limit, listed=listed(got), matches=expected):
        assert set(listed(got)) <= set(expected), "a session that matches neither id nor cwd"
        assert len(got) == min(limit, len(expected)), "a matching session is missing"
    if filtered:  # the order of what another filter lists is not comparable
        expect_equal("HOST-009", listed(got), expected[:limit], what="order", query=query)


@pytest.mark.req("HOST-002", "HOST-004", "HOST-012", "HOST-013")
@settings(suppress_health_check=SLOW)
@given(session_sets())
def test_display_strings_escape_terminal_controls(
    impl: Implementation, sessions: dict[str, Any]
) -> None:
    got = impl.call("candidates.list", target={"id": "\0none"}, sessions=sessions, limit=50)
    for c in got:
        header = sessions[c["sessionId"]]["header"]
        titles = [e["data"]["title"] for e in sessions[c["sessionId"]]["events"]]
        expect_label(c["label"], titles, header["id"])
        raw = {"sessionId": c["sessionId"], "label": c["label"], "cwd": header.get("cwd")}
        with check("HOST-004", candidate=c):
            display = c["display"]
            for field, value in display.items():
                assert value is None or not TERMINAL_CONTROLS.search(value), field
                original = raw[field]
                if original is not None and PRINTABLE.fullmatch(original):
                    assert value == original, f"printable {field} changed"
            assert not TERMINAL_CONTROLS.search(c["mention"]), "a raw control in the mention"
            # The canonical URI (alone and inside the mention) keeps the original id.
            assert uri_id(c["uri"]) == c["sessionId"]
            assert c["mention"].endswith("](" + c["uri"] + ")")
        expect_equal("HOST-012", c["label"], titles[-1] if titles else header["id"], what="label")
        expected = {
            "sessionId": escape(c["sessionId"]),
            "label": escape(c["label"]),
            "cwd": None if "cwd" not in header else escape(header["cwd"]),
        }
        with check("HOST-013", candidate=c):  # a candidate without display fields: unjudged
            shown = c["display"]
            expect_equal("HOST-013", shown, expected, what="display strings", candidate=c)


@pytest.mark.req("HOST-004", "HOST-013")
def test_escape_vector(impl: Implementation) -> None:
    sessions = {"id\x1b[2J\nx": sess("id\x1b[2J\nx", 1, "/w\x07\n", "ti\x9btle\n")}
    (c,) = impl.call("candidates.list", target={"id": "t"}, sessions=sessions)
    with check("HOST-004", candidate=c):
        assert c["sessionId"] == "id\x1b[2J\nx"
        assert uri_id(c["uri"]) == c["sessionId"]
        for value in [*c["display"].values(), c["mention"]]:
            assert not TERMINAL_CONTROLS.search(value), value
    expected = {"sessionId": "id\\x1b[2J\\x0ax", "label": "ti\\x9btle\\x0a", "cwd": "/w\\x07\\x0a"}
    expect_equal("HOST-013", c["display"], expected, what="display strings")
    # The mention label is the escaped label, with mention escaping (\ -> \\) on top.
    mention = "@[ti\\\\x9btle\\\\x0a](" + c["uri"] + ")"
    expect_equal("HOST-013", c["mention"], mention, what="mention")


@pytest.mark.differential
@pytest.mark.req("REF-006")
@settings(suppress_health_check=SLOW)
@given(session_sets(), st.none() | st.sampled_from(["/a", "/b"]), st.sampled_from(["", "a", "x"]))
def test_matches_reference_model(
    impl: Implementation,
    oracle: Implementation,
    sessions: dict[str, Any],
    cwd: str | None,
    query: str,
) -> None:
    """Identity with the model (profile); the seed's sentences are checked above."""
    target: dict[str, Any] = {"id": next(iter(sessions))}
    if cwd is not None:
        target["cwd"] = cwd
    args = {"target": target, "sessions": sessions, "query": query}
    got, want = both(impl, oracle, "candidates.list", args)
    expect_equal("REF-006", got, want, what="candidates", **args)
