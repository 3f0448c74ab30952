"""The upstream adapter's Node shim speaks the protocol (needs Node and node_modules).

Skipped locally with the reason when Node or ``adapters/upstream/node_modules`` is missing;
under CI (``CI=true``) a missing install fails instead (D-141).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_conformance.adapters import upstream
from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.adapters.upstream import UpstreamUnavailable

CAPABILITIES = {
    "agent.release-placement",
    "candidates",
    "mention",
    "prepare",
    "scenario",
    "projection",
    "retention",
    "serialization",
    "uri",
}


def shim_command() -> tuple[list[str], Path]:
    try:
        return upstream.command(install=False)
    except UpstreamUnavailable as exc:
        reason = f"upstream adapter unavailable ({exc.reason}): {exc.message}; {exc.hint}"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def adapter() -> Iterator[SubprocessAdapter]:
    argv, folder = shim_command()
    adapter = SubprocessAdapter(argv, cwd=folder, timeout=30.0, name="upstream", validate=True)
    yield adapter
    adapter.close()


def raw_exchange(lines: list[str]) -> tuple[list[str], int]:
    """Write *lines* to a fresh shim, close stdin, return its stdout lines and exit code."""
    argv, folder = shim_command()
    done = subprocess.run(
        argv,
        cwd=folder,
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    return done.stdout.splitlines(), done.returncode


def test_handshake_declares_only_what_it_supports(adapter: SubprocessAdapter) -> None:
    hello = adapter.handshake()
    assert hello.protocol == 2
    assert hello.implementation.name == "@deepseek-ai/dsh-session-reference"
    assert hello.implementation.version == "0.1.0-rc.8"
    assert hello.implementation.language == "typescript"
    assert hello.capabilities == CAPABILITIES
    assert "agent" not in hello.capabilities  # D-149


def test_meta_info_reports_the_pinned_versions(adapter: SubprocessAdapter) -> None:
    info = adapter.call("meta.info", {})
    assert info["packages"] == upstream.pinned_versions()
    assert info["node"].startswith("v")


def test_unknown_operation_is_unsupported(adapter: SubprocessAdapter) -> None:
    with pytest.raises(ImplementationError) as caught:
        adapter.call("no.such.op", {})
    assert caught.value.code == "DSH_UNSUPPORTED_OPERATION"


def test_pipelined_calls_answer_in_order(adapter: SubprocessAdapter) -> None:
    ids = [f"s-{i}" for i in range(200)]
    uris = adapter.call_many([("uri.encode", {"sessionId": sid}) for sid in ids])
    decoded = adapter.call_many([("uri.decode", {"uri": u}) for u in uris])
    assert decoded == ids


def test_lone_surrogates_travel_both_ways(adapter: SubprocessAdapter) -> None:
    uri = adapter.call("uri.encode", {"sessionId": "a\ud800b"})
    assert uri == "dsh-session:ImFcdWQ4MDBiIg"
    assert adapter.call("uri.decode", {"uri": uri}) == "a\ud800b"


def test_error_codes_are_mapped_by_code_and_class(adapter: SubprocessAdapter) -> None:
    impl = Implementation(adapter)
    assert impl.error_code("uri.decode", uri="dsh-session:IiJ") == (
        "SESSION_REFERENCE_INVALID_REFERENCE"
    )
    with pytest.raises(ImplementationError) as caught:
        adapter.call("uri.decode", {"uri": 7})
    assert caught.value.code == "DSH_INVALID_ARGUMENT"
    assert "[TypeError]" in caught.value.message  # the original class is kept (D-143)
    assert impl.error_code("json.tagSafe") == "DSH_JSON_NOT_SERIALIZABLE"
    assert impl.error_code("uri.encode") == "DSH_INVALID_ARGUMENT"  # missing argument


def test_message_ids_are_deterministic(adapter: SubprocessAdapter) -> None:
    scenario = {
        "target": {"id": "t"},
        "sources": {},
        "actions": [{"do": "followup", "text": "hello"}, {"do": "whenIdle"}],
    }
    first = adapter.call("release.run", scenario)
    adapter.call("reset", {})
    second = adapter.call("release.run", scenario)
    assert first["requests"] == second["requests"]
    [request] = first["requests"]
    assert request["messages"][-1]["id"] == "00000000-0000-4000-8000-000000000001"


def test_stdout_carries_only_protocol_lines_and_shutdown_exits() -> None:
    requests = [
        {"id": 0, "op": "handshake", "args": {"protocol": 2}},
        {"id": 1, "op": "meta.info", "args": {}},
        {"id": 2, "op": "release.run", "args": {"target": {"id": "t"}, "actions": []}},
        {"id": 3, "op": "shutdown", "args": {}},
        {"id": 4, "op": "uri.encode", "args": {"sessionId": "after shutdown"}},
    ]
    lines, code = raw_exchange([json.dumps(r) for r in requests])
    replies = [json.loads(line) for line in lines]
    assert [r["id"] for r in replies] == [0, 1, 2, 3]
    assert replies[-1] == {"id": 3, "result": None}
    assert code == 0


def test_a_garbage_line_is_answered_and_the_process_survives() -> None:
    lines, code = raw_exchange(
        ["not json", json.dumps({"id": 1, "op": "uri.encode", "args": {"sessionId": "a"}})]
    )
    first, second = (json.loads(line) for line in lines)
    assert first["id"] is None
    assert first["error"]["code"] == "DSH_ADAPTER_FAILURE"
    assert second == {"id": 1, "result": "dsh-session:ImEi"}
    assert code == 0


def test_a_wrong_protocol_version_is_refused() -> None:
    lines, _ = raw_exchange([json.dumps({"id": 0, "op": "handshake", "args": {"protocol": 1}})])
    [reply] = (json.loads(line) for line in lines)
    assert reply["error"]["code"] == "DSH_UNSUPPORTED_OPERATION"


def _event(
    seq: int, type_: str, data: dict[str, object], op: object = "append"
) -> dict[str, object]:
    out: dict[str, object] = {"type": type_, "seq": seq, "time": 100 + seq, "data": data}
    if op is not None:
        out["surfaceOp"] = op
    return out


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def test_seed_logs_are_folded_by_the_real_store(adapter: SubprocessAdapter) -> None:
    """D-145: seqs, times and the caller's events survive translation; the release folds."""
    user = {"kind": "user"}
    events = [
        _event(0, "user/message", {"content": _text("old"), "source": user}),
        _event(1, "assistant/message", {"turn": 1, "step": 1, "content": _text("old answer")}),
        _event(2, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}, op=None),
        {
            **_event(
                3,
                "user/message",
                {"content": _text("summary"), "source": {"kind": "plugin", "plugin": "compact"}},
            ),
            "surfaceOp": {"op": "replace", "start": 0, "end": 1},
            "sourceEventSeqs": [0, 1],
        },
        _event(
            4,
            "context/message",
            {"content": _text("injected"), "source": {"kind": "plugin", "plugin": "x"}},
        ),
        _event(
            5,
            "user/message",
            {
                "content": _text("BAKED PREFIX\n\n## My request:\nreal prompt"),
                "source": user,
                "envelope": {"displayContent": _text("real prompt"), "prefixContexts": []},
            },
        ),
    ]
    session = {"header": {"id": "src", "createdAt": 7, "cwd": "/w"}, "events": events}
    surface = adapter.call("session.surface", {"session": session})
    assert surface["session"] == {"version": 0, "id": "src", "createdAt": 7, "cwd": "/w"}
    assert surface["capturedThroughSeq"] == 5
    assert [e["seq"] for e in surface["events"]] == [3, 4, 5]
    assert surface["events"][1] == events[4]  # the caller's own event, time included
    items = adapter.call("projection.project", {"session": session})
    assert items == [
        {"role": "user", "text": "summary", "checkpoint": True},
        {"role": "user", "text": "real prompt", "checkpoint": False},
    ]


def test_a_log_the_release_rejects_is_an_unreadable_source(adapter: SubprocessAdapter) -> None:
    bad = {
        "header": {"id": "bad", "createdAt": 0},
        "events": [
            {
                **_event(0, "user/message", {"content": _text("x"), "source": {"kind": "user"}}),
                "surfaceOp": {"op": "replace", "start": 9, "end": 9},
                "sourceEventSeqs": [],
            },
        ],
    }
    impl = Implementation(adapter)
    code = impl.error_code(
        "prepare",
        target={"id": "t"},
        content=[],
        references=[{"sessionId": "bad"}],
        sessions={"bad": bad},
    )
    assert code == "SESSION_REFERENCE_READ_FAILED"
    assert impl.error_code("session.surface", session=bad) == "DSH_INVALID_EVENT"


def test_scenario_runs_on_the_real_loop(adapter: SubprocessAdapter) -> None:
    """A send, a steer while request 1 is held, then an injection once idle: the release's
    loop drains the steer into the same turn, and the log reads in the seed vocabulary."""
    script = {
        "agent": {"id": "scn"},
        "replies": [{"text": "r1"}, {"text": "r2"}],
        "steps": [
            {"do": "send", "text": "hello"},
            {"on": {"request": 1}, "do": "steer", "text": "also"},
            {"on": {"request": 1}, "do": "send", "text": "ctx", "contexts": []},
            {"on": {"idle": 1}, "do": "inject", "text": "later"},
        ],
    }
    result = adapter.call("scenario.run", script)
    assert result["status"] == "idle"
    first, second = result["requests"]
    assert [m["content"] for m in first["messages"]] == [_text("hello")]
    assert first["sessionId"] == "scn"
    assert first["provider"] == "mock"
    assert _text("also") in [m["content"] for m in second["messages"]]
    types = [e["type"] for e in result["log"]["events"]]
    assert [e["seq"] for e in result["log"]["events"]] == list(range(len(types)))
    assert types[0] == "turn/start"
    assert types[-1] == "turn/end"
    assert not [t for t in types if t.startswith("agent/")]
    users = [e["data"] for e in result["log"]["events"] if e["type"] == "user/message"]
    assert users == [
        {"content": _text("hello"), "source": {"kind": "user"}},
        {"content": _text("also"), "source": {"kind": "user"}},
    ]
    steps = result["steps"]
    assert steps[0] == {"fired": True, "status": "idle", "logLength": 0}
    assert steps[1]["status"] == "running"
    assert "error" not in steps[1]
    assert steps[2]["error"]["code"] == "DSH_UNSUPPORTED_OPTION"
    assert steps[3]["fired"]
    assert steps[3]["status"] == "idle"


def test_scenario_rejects_prompt_submit_listeners(adapter: SubprocessAdapter) -> None:
    """The release has no agent/prompt-submit: such a script is refused before it runs."""
    script = {
        "agent": {"id": "scn"},
        "listeners": [{"kind": "block", "reason": "no"}],
        "steps": [{"do": "send", "text": "hello"}],
    }
    with pytest.raises(ImplementationError) as caught:
        adapter.call("scenario.run", script)
    assert caught.value.code == "DSH_UNSUPPORTED_OPTION"
    assert str(caught.value).find("/listeners/0") >= 0
