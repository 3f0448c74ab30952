"""A Hypothesis state machine for inbox ownership, run against ``impl`` and ``oracle``.

Every rule performs one caller operation or one driver micro-step on both implementations
and compares the outcome (result or error code); after every rule the logs, captured
requests, notifications, inbox state and prompt-submit trace must agree, and the seed's
invariants are checked on the implementation's data with independent code
(``agent_support``): a message and its contexts share fate, prefix contexts never become
context messages, exactly one delimiter follows all prefix blocks, displayContent is the
effective prompt, accepted records never change (even when the caller mutates its inputs
afterwards), a blocked prompt leaves no user or context message, and replay equals the
captured requests.

Rule arguments are short names so a shrunk failure prints as a readable program, e.g.
``state.send(recipe='prefix+separate')``; tools/add_inbox_regression.py turns that program
into a permanent case in conformance/cases/inbox_regressions.json.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from typing import Any, Final

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from dsh_conformance.adapters.client import Implementation, ImplementationError
from dsh_conformance.conformance.agent_support import (
    DELIM,
    expected_prompt_data,
    plugin,
    replay,
    text,
)

RECIPES: Final = (
    "none",
    "separate",
    "prefix",
    "prefix+separate",
    "two-prefix+meta",
    "meta-separate",
    "odd-placement",
)
LISTENERS: Final = {
    "pass": {"kind": "pass"},
    "allow": {"kind": "allow"},
    "allow-content": {"kind": "allow", "content": text("ALLOWED")},
    "rewrite": {"kind": "rewrite", "content": text("REWRITTEN")},
    "add-prefix": {
        "kind": "add-contexts",
        "contexts": [
            {"source": plugin("hook"), "content": text("HOOKP"), "placement": "prompt-prefix"}
        ],
    },
    "add-separate": {
        "kind": "add-contexts",
        "contexts": [{"source": plugin("hook"), "content": text("HOOKS")}],
        "position": "append",
    },
    "drop-contexts": {"kind": "drop-contexts"},
    "block-once": {"kind": "block", "reason": "blocked by test", "once": True},
    "throw-once": {"kind": "throw", "message": "listener failed", "once": True},
    "turn-stop-once": {"event": "turn-stop", "kind": "stop", "once": True},
}
#: Recipes and listeners that involve no prompt-prefix context (placement-free machine).
PLAIN_RECIPES: Final = ("none", "separate", "meta-separate", "odd-placement")
PLAIN_LISTENERS: Final = tuple(sorted(set(LISTENERS) - {"add-prefix"}))
DROPS_CONTEXTS: Final = {"allow", "allow-content", "drop-contexts"}
CHANGES_CONTENT: Final = {"allow-content", "rewrite"}
SCRIPTS: Final = {
    "text": [{"text": "answer"}],
    "one-tool": [{"toolCalls": [{"name": "t", "arguments": {"q": 1}}]}],
    "two-tools": [{"toolCalls": [{"name": "t"}, {"name": "missing"}], "text": "calling"}],
    "error": [{"error": "model failed", "code": "E_MODEL"}],
}
HOSTILE: Final = ("NaN", "Infinity", "-0", "undefined", "cycle", "non-string-key", "bigint")
OPTIONS: Final = {"tools": [{"name": "t", "description": "a scripted tool"}]}

_machine_ids = itertools.count(1)


def record_source(n: int) -> dict[str, str]:
    return plugin(f"rec-{n}")


def build_contexts(n: int, recipe: str) -> list[dict[str, Any]]:
    """Contexts for record *n*; every source names its record and role."""

    def ctx(role: str, **extra: Any) -> dict[str, Any]:
        return {"source": plugin(f"rec-{n}/{role}"), "content": text(f"{role} of {n}"), **extra}

    return {
        "none": [],
        "separate": [ctx("sep-1")],
        "prefix": [ctx("pfx-1", placement="prompt-prefix")],
        "prefix+separate": [ctx("sep-1"), ctx("pfx-1", placement="prompt-prefix"), ctx("sep-2")],
        "two-prefix+meta": [
            ctx("pfx-1", placement="prompt-prefix", meta={"i": 1}),
            ctx("pfx-2", placement="prompt-prefix"),
        ],
        "meta-separate": [ctx("sep-1", meta=None), ctx("sep-2", meta={"deep": [n]})],
        "odd-placement": [ctx("sep-1", placement="separate"), ctx("sep-2", placement="prefix")],
    }[recipe]


def _outcome(impl: Implementation, op: str, args: Mapping[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", impl.call(op, **args)
    except ImplementationError as exc:
        return "error", exc.code


class InboxMachine(RuleBasedStateMachine):
    """Lockstep driver of one agent in *impl* and in the reference *oracle*.

    With ``prefix=False`` no prompt-prefix context is ever used (recipes and listeners are
    mapped onto their plain counterparts), so the run checks ownership independently of
    the placement requirements.
    """

    def __init__(self, impl: Implementation, oracle: Implementation, prefix: bool = True) -> None:
        super().__init__()
        self.prefix = prefix
        self.impl = impl
        self.oracle = oracle
        self.agent = f"inbox-machine-{next(_machine_ids)}"
        self.records = 0
        self.pristine: dict[int, dict[str, Any]] = {}
        self.passed: list[Any] = []  # the very objects handed to impl (mutated later)
        self.installed: list[str] = []
        self.ops = 0
        self.both("agent.create", id=self.agent, options=OPTIONS)

    # --- plumbing ------------------------------------------------------------------------

    def both(self, op: str, /, **args: Any) -> Any:
        """Run *op* on impl (with *args*) and oracle (with a deep copy); outcomes must agree."""
        theirs = _outcome(self.oracle, op, copy.deepcopy(args))
        ours = _outcome(self.impl, op, args)
        assert ours == theirs, f"{op}: implementation {ours!r} != reference {theirs!r}"
        return ours[1] if ours[0] == "ok" else None

    def on_agent(self, op: str, /, **args: Any) -> Any:
        self.ops += 1
        return self.both(op, agent=self.agent, **args)

    def read(self, op: str) -> Any:
        return self.impl.call(op, agent=self.agent)

    def message(self, verb: str, recipe: str) -> None:
        if not self.prefix and recipe not in PLAIN_RECIPES:
            recipe = PLAIN_RECIPES[RECIPES.index(recipe) % len(PLAIN_RECIPES)]
        self.records += 1
        n = self.records
        content = text(f"message {n}")
        source = record_source(n)
        contexts = build_contexts(n, recipe)
        args = {"content": content, "source": source, "contexts": contexts}
        before = self.read("agent.notifications")
        self.on_agent(verb, **args)
        if len(self.read("agent.notifications")) > len(before):
            self.pristine[n] = copy.deepcopy(args)
            self.passed.append(args)

    # --- caller operations -----------------------------------------------------------------

    @rule(recipe=st.sampled_from(RECIPES))
    def send(self, recipe: str) -> None:
        self.message("agent.send", recipe)

    @rule(recipe=st.sampled_from(RECIPES))
    def steer(self, recipe: str) -> None:
        self.message("agent.steer", recipe)

    @rule(meta=st.booleans())
    def inject(self, meta: bool) -> None:
        args: dict[str, Any] = {"content": text("injected"), "source": plugin("injector")}
        if meta:
            args["meta"] = {"model-hidden": True}
        self.on_agent("agent.inject", **args)

    @rule(
        verb=st.sampled_from(["agent.send", "agent.steer", "agent.inject"]),
        kind=st.sampled_from(HOSTILE),
    )
    def send_hostile(self, verb: str, kind: str) -> None:
        before = (
            self.read("agent.state"),
            self.read("agent.notifications"),
            self.read("agent.log"),
        )
        self.on_agent(verb, content=[{"type": "text", "text": "bad", "v": {"$hostile": kind}}])
        after = (self.read("agent.state"), self.read("agent.notifications"), self.read("agent.log"))
        assert after == before, "a rejected message changed the agent"

    @rule(parent=st.booleans())
    def cancel(self, parent: bool) -> None:
        self.on_agent("agent.cancel", cause={"kind": "parent" if parent else "user"})

    @precondition(lambda self: len(self.installed) < 4)
    @rule(name=st.sampled_from(sorted(LISTENERS)))
    def listen(self, name: str) -> None:
        if not self.prefix and name == "add-prefix":
            name = "add-separate"
        self.installed.append(name)
        self.on_agent("agent.listen", listener=LISTENERS[name])

    @rule(name=st.sampled_from(sorted(SCRIPTS)))
    def script(self, name: str) -> None:
        self.on_agent("agent.script", responses=SCRIPTS[name])

    @rule()
    def mutate_inputs(self) -> None:
        """The caller scribbles over everything it ever passed (INBOX-003)."""
        for args in self.passed:
            args["content"][0]["text"] = "MUTATED"
            args["source"]["plugin"] = "MUTATED"
            for context in args["contexts"]:
                context["content"].append({"type": "text", "text": "MUTATED"})
                context["placement"] = "prompt-prefix"
            args["contexts"].append({"source": plugin("MUTATED"), "content": text("MUTATED")})

    # --- the driver ----------------------------------------------------------------------

    @rule()
    def step(self) -> None:
        self.on_agent("agent.step")

    @rule()
    def run(self) -> None:
        self.on_agent("agent.run")

    @precondition(lambda self: self.ops >= 12)
    @rule()
    def dispose(self) -> None:
        """Terminal, so only late in a program (an early disposal makes the rest moot)."""
        self.on_agent("agent.dispose")

    # --- invariants ----------------------------------------------------------------------

    @invariant()
    def implementations_agree(self) -> None:
        for op in (
            "agent.log",
            "agent.requests",
            "agent.notifications",
            "agent.state",
            "agent.submissions",
        ):
            ours = self.impl.call(op, agent=self.agent)
            theirs = self.oracle.call(op, agent=self.agent)
            assert ours == theirs, f"{op} differs from the reference"

    @invariant()
    def seed_invariants(self) -> None:
        check_invariants(
            self.read("agent.log")["events"],
            self.read("agent.requests"),
            self.read("agent.notifications"),
            self.pristine,
            self.installed,
            self.agent,
        )


def check_invariants(
    events: list[dict[str, Any]],
    requests: list[dict[str, Any]],
    notifications: list[dict[str, Any]],
    pristine: Mapping[int, Mapping[str, Any]],
    installed: list[str],
    agent_id: str,
) -> None:
    """The seed's inbox invariants, stated on plain JSON (no model code)."""
    assert replay(events, agent_id) == requests, "replay differs from the captured requests"

    queued = [n for n in notifications if n["event"] == "agent/queued"]
    for note in queued:
        n = int(note["source"]["plugin"].removeprefix("rec-"))
        sent = pristine[n]
        assert (note["content"], note["source"], note["contexts"]) == (
            sent["content"],
            sent["source"],
            sent["contexts"],
        ), "an accepted record changed"

    statuses = [n["status"] for n in notifications if n["event"] == "agent/status"]
    assert all(a != b for a, b in itertools.pairwise(statuses)), "repeated status"

    turns = [e["data"]["turn"] for e in events if e["type"] == "turn/start"]
    assert turns == list(range(1, len(turns) + 1)), "turn numbers must be 1, 2, 3, …"

    prompt_at: dict[int, int] = {}
    blocked: set[int] = set()
    for index, event in enumerate(events):
        data = event["data"]
        source = data.get("source") if isinstance(data, dict) else None
        plugin_name = source.get("plugin", "") if isinstance(source, dict) else ""
        if event["type"] in {"user/message", "steering/message", "prompt/blocked"}:
            n = int(plugin_name.removeprefix("rec-"))
            assert n not in prompt_at, f"record {n} has two fates"
            assert n not in blocked, f"record {n} has two fates"
            if event["type"] == "prompt/blocked":
                blocked.add(n)
                assert data["content"] == pristine[n]["content"], "prompt/blocked is un-rewritten"
                continue
            prompt_at[n] = index
            check_prompt_event(event, pristine[n], installed)
        if event["type"] == "context/message" and plugin_name.startswith("rec-"):
            n = int(plugin_name.split("/")[0].removeprefix("rec-"))
            assert "/pfx-" not in plugin_name, "a prefix context became a context message"
            assert n in prompt_at, "a context outlived (or preceded) its message"
            between = events[prompt_at[n] + 1 : index]
            assert all(e["type"] == "context/message" for e in between), (
                "separate contexts must follow their own prompt event"
            )
    for n, at in prompt_at.items():
        steering = events[at]["type"] == "steering/message"
        if steering or not set(installed) & DROPS_CONTEXTS:
            expected = [
                {k: v for k, v in c.items() if k != "placement"}
                for c in pristine[n]["contexts"]
                if c.get("placement") != "prompt-prefix"
            ]
            written = [
                e["data"]
                for e in events[at + 1 :]
                if e["type"] == "context/message"
                and e["data"]["source"].get("plugin", "").startswith(f"rec-{n}/")
            ]
            assert written == expected, "a message was written without all of its contexts"


def check_prompt_event(
    event: Mapping[str, Any], sent: Mapping[str, Any], installed: list[str]
) -> None:
    data = event["data"]
    content = data["content"]
    steering = event["type"] == "steering/message"
    listeners_apply = not steering and bool(installed)
    if "envelope" in data:
        envelope = data["envelope"]
        delimiters = [i for i, block in enumerate(content) if block == DELIM]
        assert len(delimiters) == 1, "exactly one delimiter"
        display = envelope["displayContent"]
        assert content[delimiters[0] + 1 :] == display, "the delimiter precedes the display content"
        for entry in envelope["prefixContexts"]:
            name = entry["source"]["plugin"]
            assert name == "hook" or "/pfx-" in name, "only prefix contexts are baked"
    else:
        display = content
    if not listeners_apply or not (set(installed) & CHANGES_CONTENT):
        assert display == sent["content"], "displayContent is the effective prompt"
    if not listeners_apply:
        expected, _ = expected_prompt_data(sent["content"], sent["source"], sent["contexts"])
        assert {k: v for k, v in data.items() if k != "turn"} == expected, (
            "the prompt event is not the placement split of the accepted record"
        )
