"""Seed 000 on what a host observes of its own loop: listeners, observations, preparation
(capability scenario).

The generated scripts of conformance/scenario_programs.py, plus hand-picked ones per rule,
checked with conformance/scenario_observed.py: what each prompt-submit invocation and each
agent/queued observation received, injections, the listener waterfall's result and the
host's own prepare() steps.  Together with conformance/test_scenario.py this judges every
note-000 placement and inbox MUST but ENV-072 without the micro-step ``agent`` capability
(docs/scenario.md, "What the suite checks on it").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import pytest
from hypothesis import example, given, note
from hypothesis.control import currently_in_test_context

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check
from dsh_conformance.conformance import own_records
from dsh_conformance.conformance import scenario_observed as seen
from dsh_conformance.conformance.agent_support import prefix_text
from dsh_conformance.conformance.keyless import (
    CWD,
    READABLE,
    SOURCE_ID,
    source_session,
)
from dsh_conformance.conformance.scenario_oracle import records
from dsh_conformance.conformance.scenario_programs import (
    AGENT_ID,
    TOOLS,
    hook_context,
    replayable,
    scripts,
    text,
    with_examples,
)

pytestmark = pytest.mark.capability("scenario")


def run(impl: Implementation, script: dict[str, Any]) -> dict[str, Any]:
    if currently_in_test_context():
        note(replayable(script))
    result: dict[str, Any] = own_records.scenario_outcome(impl.call("scenario.run", **script))
    return result


def holds(requirement: str, script: dict[str, Any], rule: Callable[..., None], *args: Any) -> None:
    """Run *rule*, blaming *requirement*, with the replayable script in the failure."""
    with check(requirement, script=replayable(script)):
        rule(*args)


def _agent(**extra: Any) -> dict[str, Any]:
    return {"id": AGENT_ID, "options": {"tools": list(TOOLS)}, **extra}


def _send(owner: str, on: Any = "start", do: str = "send", **extra: Any) -> dict[str, Any]:
    return {"on": on, "do": do, "text": f"msg-{owner}", **extra}


# --- hand-picked scripts, per rule ------------------------------------------------------

#: INBOX-012: allow without next(), drop-contexts, pass, and add-contexts around a rewrite.
WATERFALLS: Final = tuple(
    {
        "agent": _agent(),
        "listeners": chain,
        "replies": [{"text": "reply-1"}],
        "steps": [
            _send(
                "1",
                contexts=[
                    hook_context("ctx-1-1", "prompt-prefix", False),
                    hook_context("ctx-1-2", None, True),
                ],
            )
        ],
    }
    for chain in (
        [{"kind": "allow"}],
        [{"kind": "allow", "content": text("allowed-1"), "additionalContexts": [
            hook_context("lctx-1", None, False)]}],
        [{"kind": "rewrite", "content": text("rewritten-1")}, {"kind": "drop-contexts"}],
        [{"kind": "pass"}, {"kind": "add-contexts", "contexts": [
            hook_context("lctx-2", "prompt-prefix", False)]},
         {"kind": "rewrite", "content": text("rewritten-2")}],
        [{"kind": "add-contexts", "position": "append", "contexts": [
            hook_context("lctx-3", None, False)]}, {"kind": "pass"}],
    )
)  # fmt: skip

#: INBOX-006: injections with a source and meta, idle and inside a turn.
INJECTS: Final = (
    {
        "agent": _agent(),
        "replies": [{"toolCalls": [{"id": "call-1-1", "name": "lookup"}]}, {"text": "reply-2"}],
        "steps": [
            {"do": "inject", "text": "inj-1", "source": {"kind": "plugin", "plugin": "p"},
             "meta": {"inj": "one"}},
            {"on": {"idle": 1}, "do": "send", "text": "msg-2"},
            {"on": {"toolCall": "call-1-1"}, "do": "inject", "text": "inj-3", "meta": [3]},
            {"on": {"request": 2}, "do": "inject", "text": "inj-4",
             "source": {"kind": "plugin", "plugin": "q"}, "meta": "four"},
        ],
    },
)  # fmt: skip

#: INBOX-001: values JSON cannot carry are refused with the whole record.
HOSTILE: Final = tuple(
    {"agent": _agent(), "replies": [{"text": "reply-1"}], "steps": [step, _send("2")]}
    for step in (
        {"do": "send", "content": [{"type": "text", "text": {"$hostile": "NaN"}}]},
        _send("1", contexts=[{"source": {"kind": "plugin", "plugin": "p"},
                              "content": text("ctx-1-1"), "meta": {"$hostile": "Infinity"}}]),
        _send("1", source={"kind": "plugin", "plugin": {"$hostile": "undefined"}}),
        _send("1", do="steer", contexts=[{"source": {"kind": "plugin", "plugin": "p"},
              "content": text("ctx-1-1"), "meta": {"$hostile": "cycle"}}]),
    )
)  # fmt: skip

#: INBOX-030: a mention of a session the host's store holds, sent without contexts.
MENTION: Final = {
    "agent": _agent(),
    "sessions": {SOURCE_ID: source_session()},
    "replies": [{"text": "reply-1"}],
    "steps": [
        {"do": "send", "text": "Use @[Source session](dsh-session:InNvdXJjZS1zZXNzaW9uIg) and "
         "dsh-session:InNvdXJjZS1zZXNzaW9uIg"},
    ],
}  # fmt: skip

_REFERENCE: Final = [{"sessionId": SOURCE_ID, "label": "Source session"}]


def _prepare(on: Any = "start", **extra: Any) -> dict[str, Any]:
    return {"on": on, "do": "prepare", "text": READABLE, "references": _REFERENCE, **extra}


#: INBOX-032, ENV-065: the host prepares, then sends (idle) or steers (running) the result.
PREPARED: Final = (
    {
        "agent": _agent(header={"cwd": CWD}),
        "sessions": {SOURCE_ID: source_session()},
        "replies": [{"text": "reply-1"}],
        "steps": [_prepare(), {"do": "send", "prepared": 0}],
    },
    {
        "agent": _agent(header={"cwd": CWD}),
        "sessions": {SOURCE_ID: source_session()},
        "replies": [{"toolCalls": [{"id": "call-1-1", "name": "lookup"}]}, {"text": "reply-2"}],
        "steps": [
            _prepare(),
            _send("2"),
            {"on": {"toolCall": "call-1-1"}, "do": "steer", "prepared": 0},
        ],
    },
)

#: INBOX-035: preparation alone, and between turns.
PREPARE_ONLY: Final = (
    {
        "agent": _agent(),
        "sessions": {SOURCE_ID: source_session()},
        "steps": [_prepare(), _prepare({"idle": 1})],
    },
    {
        "agent": _agent(),
        "sessions": {SOURCE_ID: source_session()},
        "replies": [{"text": "reply-1"}],
        "steps": [
            _send("1"),
            _prepare({"idle": 1}),
            _prepare({"idle": 1}, target="reader", references=[{"sessionId": AGENT_ID}]),
            _prepare({"idle": 2}),
        ],
    },
)


def _examples(*extra: dict[str, Any]) -> Callable[[Any], Any]:
    def apply(test: Any) -> Any:
        for script in reversed(extra):
            test = example(script=script)(test)
        return with_examples(test)

    return apply


# --- the tests -----------------------------------------------------------------------------


@pytest.mark.req("ENV-052")
@given(script=scripts())
@_examples(*WATERFALLS)
def test_a_prefix_adds_no_event_type_and_no_context_message(
    impl: Implementation, script: dict[str, Any]
) -> None:
    events = run(impl, script)["log"]["events"]
    holds("ENV-052", script, seen.prefix_adds_no_event, events)


@pytest.mark.req("ENV-061")
@given(script=scripts())
@with_examples
def test_prompt_submit_sees_only_the_direct_prompt(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    found = records(script, result)
    holds("ENV-061", script, seen.prompt_submit_sees_only_the_direct_prompt, result, found)


@pytest.mark.req("ENV-062")
@given(script=scripts())
@_examples(*WATERFALLS)
def test_a_rewrite_reaches_model_content_and_display_alike(
    impl: Implementation, script: dict[str, Any]
) -> None:
    events = run(impl, script)["log"]["events"]
    holds("ENV-062", script, seen.rewrite_reaches_content_and_display, events)


@pytest.mark.req("INBOX-001")
@given(script=scripts(listeners=False))
@with_examples
def test_each_send_and_steer_is_one_snapshot_record(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    found = records(script, result)
    holds("INBOX-001", script, seen.each_record_is_one_snapshot, script, result, found)


@pytest.mark.req("INBOX-001")
@pytest.mark.parametrize("index", range(len(HOSTILE)))
def test_a_record_json_cannot_carry_is_refused_whole(impl: Implementation, index: int) -> None:
    script = HOSTILE[index]
    result = run(impl, script)
    holds("INBOX-001", script, seen.refused_whole, script, result)


@pytest.mark.req("INBOX-004")
@given(script=scripts())
@with_examples
def test_agent_queued_reports_the_frozen_contexts(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    found = records(script, result)
    holds("INBOX-004", script, seen.queued_reports_the_frozen_contexts, result, found)


@pytest.mark.req("INBOX-006")
@given(script=scripts())
@_examples(*INJECTS)
def test_inject_accepts_a_source_and_model_hidden_meta(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    holds("INBOX-006", script, seen.inject_accepts_source_and_meta, script, result)


@pytest.mark.req("INBOX-012")
@given(script=scripts())
@_examples(*WATERFALLS)
def test_the_waterfalls_returned_allow_is_authoritative(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    found = records(script, result)
    holds("INBOX-012", script, seen.waterfall_allow_is_authoritative, script, result, found)


@pytest.mark.req("INBOX-034")
@given(script=scripts())
@with_examples
def test_only_the_queued_path_dispatches_prompt_submit(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    found = records(script, result)
    holds("INBOX-034", script, seen.only_the_queued_path_dispatches_prompt_submit, result, found)


@pytest.mark.req("INBOX-030")
def test_the_agent_carries_a_mention_verbatim(impl: Implementation) -> None:
    result = run(impl, MENTION)
    holds("INBOX-030", MENTION, seen.mentions_are_carried_verbatim, MENTION, result)


@pytest.mark.capability("prepare")
@pytest.mark.req("INBOX-032")
@pytest.mark.parametrize("index", range(len(PREPARED)))
def test_prepared_contexts_reach_the_agent_untouched(impl: Implementation, index: int) -> None:
    script = PREPARED[index]
    result = run(impl, script)
    holds("INBOX-032", script, seen.prepared_contexts_reach_the_agent, script, result)


@pytest.mark.capability("prepare")
@pytest.mark.req("INBOX-035")
@pytest.mark.parametrize("index", range(len(PREPARE_ONLY)))
def test_preparation_creates_no_turn(impl: Implementation, index: int) -> None:
    script = PREPARE_ONLY[index]
    result = run(impl, script)
    holds("INBOX-035", script, seen.preparation_creates_no_turn, script, result)


@pytest.mark.capability("prepare")
@pytest.mark.req("ENV-065")
def test_a_prepared_reference_reaches_the_model_as_one_prefixed_message(
    impl: Implementation,
) -> None:
    """V-21 on the implementation's own loop: the host prepares the compacted source
    session and sends the readable prompt; the captured request's last message is the
    snapshot, the delimiter and the prompt, without the shadowed history."""
    script = PREPARED[0]
    result = run(impl, script)
    with check("ENV-065", script=replayable(script), requests=result["requests"]):
        assert result["requests"], "the prepared prompt never reached the model"
        last = result["requests"][0]["messages"][-1]
        assert last["role"] == "user"
        # what the model reads: snapshot, delimiter, prompt, in any block layout (D-195)
        snapshot = prefix_text(last["content"], text(READABLE))
        assert snapshot is not None, f"not a snapshot, delimiter and prompt: {last['content']}"
        assert "Retained checkpoint." in snapshot
        assert "Recent retained question." in snapshot
        body = repr(result["requests"])
        assert "SHADOWED OLD USER" not in body
        assert "SHADOWED OLD ASSISTANT" not in body
