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

Rules: ``configure`` (initial listener chain and script), ``send``/``steer``/
``send_and_run``/``inject``/``send_hostile``/``cancel``/``dispose``/``listen``/``script``/
``mutate_inputs`` (caller operations), and ``step``/``advance_to(point)``/``run`` (the driver,
so a caller operation can land at a chosen micro-step such as right after ``turn-stop``).
Beyond the per-event invariants, the machine tracks each record's fate: a record without a
fate when ``cancel``/``dispose`` ran never reaches the log, and at rest every other record
has one (unless a terminal stop or a throwing listener may have dropped it).

Rule arguments are short names so a shrunk failure prints as a readable program, e.g.
``state.advance_to(point='turn-stop')`` then ``state.steer(recipe='prefix+separate')``;
tools/add_inbox_regression.py turns that program into a permanent case in
conformance/cases/inbox_regressions.json.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping
from typing import Any, Final

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from dsh_conformance.adapters.client import Implementation, ImplementationError
from dsh_conformance.checks import check, expect
from dsh_conformance.conformance.agent_support import (
    DELIM,
    expected_prompt_data,
    plugin,
    replay,
    text,
)
from dsh_conformance.conformance.read_ahead import (
    act_then_read,
    read_ahead,
    reference_reads,
)

#: Every requirement a check of this machine may blame: a test that runs it cites them all.
BLAMES: Final = (
    "REF-007",
    "INBOX-001",
    "INBOX-002",
    "INBOX-004",
    "INBOX-010",
    "INBOX-013",
    "INBOX-021",
    "INBOX-022",
    "INBOX-023",
    "INBOX-031",
    "ENV-051",
    "ENV-053",
    "ENV-055",
    "ENV-056",
    "ENV-057",
    "ENV-058",
    "ENV-059",
    "ENV-062",
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
LISTENERS: Final[dict[str, dict[str, Any]]] = {
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
SCRIPTS: Final = {
    "text": [{"text": "answer"}],
    "one-tool": [{"toolCalls": [{"name": "t", "arguments": {"q": 1}}]}],
    "two-tools": [{"toolCalls": [{"name": "t"}, {"name": "missing"}], "text": "calling"}],
    "error": [{"error": "model failed", "code": "E_MODEL"}],
}
POINTS: Final = ("claim", "submit", "model", "tool", "post-step", "turn-stop", "flush")
HOSTILE: Final = ("NaN", "Infinity", "-0", "undefined", "cycle", "non-string-key", "bigint")
OPTIONS: Final = {"tools": [{"name": "t", "description": "a scripted tool"}]}

_machine_ids = itertools.count(1)


def record_source(n: int) -> dict[str, str]:
    return plugin(f"rec-{n}")


def build_contexts(n: int, recipe: str) -> list[dict[str, Any]]:
    """Contexts for record *n*; every source names its record and role."""

    def ctx(role: str, **extra: Any) -> dict[str, Any]:
        return {"source": plugin(f"rec-{n}/{role}"), "content": text(f"{role} of {n}"), **extra}

    # Caller objects carry array-index keys, which JavaScript lists first (D-12).
    indexed_block = {"type": "text", "text": f"sep-2 of {n}", "10": n, "2": "b", "01": "c"}

    return {
        "none": [],
        "separate": [ctx("sep-1")],
        "prefix": [ctx("pfx-1", placement="prompt-prefix")],
        "prefix+separate": [ctx("sep-1"), ctx("pfx-1", placement="prompt-prefix"), ctx("sep-2")],
        "two-prefix+meta": [
            ctx("pfx-1", placement="prompt-prefix", meta={"i": 1, "10": n, "2": [n]}),
            ctx("pfx-2", placement="prompt-prefix"),
        ],
        "meta-separate": [
            ctx("sep-1", meta=None),
            ctx("sep-2", meta={"deep": [n], "0": {"b": 1, "1": 2}}, content=[indexed_block]),
        ],
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
        self.installed_at: dict[int, tuple[str, ...]] = {}  # turn -> listeners when submitted
        self.steered: set[int] = set()  # records accepted as steering
        self.dropped: set[int] = set()  # records without a fate when cancel/dispose ran
        self.disposed: set[int] = set()  # those of them dispose dropped
        self.ops = 0
        # What impl answered to each read since its last other call (see ``read``), and
        # the reference's answers to the same reads, taken while the host computed.
        self.seen: dict[str, Any] = {}
        self.references: dict[str, Callable[[], Any]] = {}
        self.both("agent.create", id=self.agent, options=OPTIONS)

    # --- plumbing ------------------------------------------------------------------------

    def both(self, op: str, /, **args: Any) -> Any:
        """Run *op* on impl (with *args*) and oracle (with a deep copy); outcomes must agree."""
        return self._both(op, args, ())

    def _both(self, op: str, args: dict[str, Any], reads: tuple[str, ...]) -> Any:
        """``both``, asking impl the *reads* that follow the operation in the same batch
        (read_ahead.act_then_read: one round trip, the same requests).  impl's batch is
        sent first and read after the oracle's step: the host computes meanwhile."""
        copied = copy.deepcopy(args)
        batch = [(read, read, self.agent) for read in reads]
        sent = act_then_read(self.impl, self.seen, op, args, batch)
        theirs = _outcome(self.oracle, op, copied)
        self.references = reference_reads(self.oracle, batch)
        ours = sent()
        expect(
            "REF-007",
            ours == theirs,
            f"{op}: implementation differs from the reference",
            ours=ours,
            reference=theirs,
        )
        return ours[1] if ours[0] == "ok" else None

    def on_agent(self, op: str, /, **args: Any) -> Any:
        self.ops += 1
        return self._both(op, {"agent": self.agent, **args}, ())

    def last_on_agent(self, op: str, /, reads: tuple[str, ...] = (), **args: Any) -> Any:
        """``on_agent`` for a rule's last operation: the reads the rule and the invariants
        make after it (every one of READS, or *reads*) go in its batch."""
        self.ops += 1
        return self._both(op, {"agent": self.agent, **args}, reads or READS)

    def read(self, op: str) -> Any:
        """impl's answer to the read *op*, asked once between two operations (issue 44):
        the invariants after a step observe one state, so the reads they share are one
        read each.  Its callers never change what it returns."""
        if op not in self.seen:
            self.seen[op] = self.impl.call(op, agent=self.agent)
        return self.seen[op]

    def message(self, verb: str, recipe: str, reads: tuple[str, ...] = ()) -> None:
        """Send or steer record n; *reads* (default: READS) are what is read after it."""
        if not self.prefix and recipe not in PLAIN_RECIPES:
            recipe = PLAIN_RECIPES[RECIPES.index(recipe) % len(PLAIN_RECIPES)]
        self.records += 1
        n = self.records
        content = text(f"message {n}")
        source = record_source(n)
        contexts = build_contexts(n, recipe)
        args = {"content": content, "source": source, "contexts": contexts}
        before = self.read("agent.notifications")
        self.last_on_agent(verb, reads=reads, **args)
        after = self.read("agent.notifications")
        if len(after) > len(before):
            self.pristine[n] = copy.deepcopy(args)
            self.passed.append(args)
            if after[-1]["steering"]:
                self.steered.add(n)

    def unfated(self) -> set[int]:
        return set(self.pristine) - fated(self.read("agent.log")["events"])

    # --- caller operations -----------------------------------------------------------------

    @initialize(
        listeners=st.lists(st.sampled_from(sorted(LISTENERS)), max_size=2),
        script=st.sampled_from(sorted(SCRIPTS)),
    )
    def configure(self, listeners: list[str], script: str) -> None:
        """Every program starts from a listener chain and a scripted first response."""
        for name in listeners:
            self.install(name, last=False)
        self.script(script)

    @rule(recipe=st.sampled_from(RECIPES))
    def send(self, recipe: str) -> None:
        self.message("agent.send", recipe)

    @rule(recipe=st.sampled_from(RECIPES))
    def send_and_run(self, recipe: str) -> None:
        """The common host pattern in one rule: send, then drive the agent until idle."""
        self.message("agent.send", recipe, reads=("agent.notifications",))
        self.run()

    @rule(recipe=st.sampled_from(RECIPES))
    def steer(self, recipe: str) -> None:
        self.message("agent.steer", recipe)

    @rule(meta=st.booleans())
    def inject(self, meta: bool) -> None:
        args: dict[str, Any] = {"content": text("injected"), "source": plugin("injector")}
        if meta:
            args["meta"] = {"model-hidden": True, "1": "one", "0": "zero"}
        self.last_on_agent("agent.inject", **args)

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
        self.last_on_agent(verb, content=[{"type": "text", "text": "bad", "v": {"$hostile": kind}}])
        after = (self.read("agent.state"), self.read("agent.notifications"), self.read("agent.log"))
        expect("INBOX-002", after == before, "a rejected message changed the agent", kind=kind)

    # Rules without weights: throttled ones are enabled only on some operation counts, so
    # cancel and dispose do not drop most records before anything interesting happens.
    @precondition(lambda self: self.ops % 3 == 2)
    @rule(parent=st.booleans())
    def cancel(self, parent: bool) -> None:
        pending = self.unfated()
        self.last_on_agent("agent.cancel", cause={"kind": "parent" if parent else "user"})
        self.dropped |= pending

    @precondition(lambda self: len(self.installed) < 4)
    @rule(name=st.sampled_from(sorted(LISTENERS)))
    def listen(self, name: str) -> None:
        self.install(name, last=True)

    def install(self, name: str, last: bool) -> None:
        if not self.prefix and name == "add-prefix":
            name = "add-separate"
        self.installed.append(name)
        if last:
            self.last_on_agent("agent.listen", listener=LISTENERS[name])
        else:
            self.on_agent("agent.listen", listener=LISTENERS[name])

    @precondition(lambda self: self.ops % 2 == 1)
    @rule(name=st.sampled_from(sorted(SCRIPTS)))
    def script(self, name: str) -> None:
        self.last_on_agent("agent.script", responses=SCRIPTS[name])

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

    def note_submissions(self) -> None:
        """Remember which listeners were installed when each turn's prompt was submitted."""
        for submission in self.read("agent.submissions"):
            self.installed_at.setdefault(submission["turn"], tuple(self.installed))

    @rule()
    def step(self) -> None:
        self.last_on_agent("agent.step")
        self.note_submissions()

    @rule(point=st.sampled_from(POINTS))
    def advance_to(self, point: str) -> None:
        """Step the driver until micro-step *point* has just run (or the agent is quiescent),
        so the next caller operation lands exactly there (e.g. right after turn-stop)."""
        for _ in range(200):
            name = self.on_agent("agent.step")
            if name is None or name["step"] in {point, None}:
                break
        self.note_submissions()

    @rule()
    def run(self) -> None:
        self.last_on_agent("agent.run")
        self.note_submissions()

    @precondition(lambda self: self.ops >= 12 and self.ops % 5 == 4)
    @rule()
    def dispose(self) -> None:
        """Terminal, so only late in a program (an early disposal makes the rest moot)."""
        pending = self.unfated()
        self.last_on_agent("agent.dispose")
        self.dropped |= pending
        self.disposed |= pending

    # --- invariants ----------------------------------------------------------------------

    @invariant()
    def implementations_agree(self) -> None:
        reads = [(op, op, self.agent) for op in READS]
        sent = read_ahead(self.impl, self.seen, reads)
        references = reference_reads(self.oracle, reads, self.references)
        sent()
        for op in READS:
            ours = self.read(op)
            theirs = references[op]()
            expect(
                "REF-007",
                ours == theirs,
                f"{op} differs from the reference",
                ours=ours,
                reference=theirs,
            )

    @invariant()
    def records_share_fate(self) -> None:
        """Dropped records never come back; at rest every other record has a fate; queued
        and steering records are exactly what was accepted (INBOX-001, -003, -020, -021)."""
        events = self.read("agent.log")["events"]
        state = self.read("agent.state")
        done = fated(events)
        # That cancel and dispose drop what is pending is D-73/D-74's (INBOX-022/023); the
        # note's INBOX-021 is that a message and its contexts share their fate (below).
        expect(
            "INBOX-022",
            not ((self.dropped - self.disposed) & done),
            "a cancelled record reached the log",
            records=(self.dropped - self.disposed) & done,
        )
        expect(
            "INBOX-023",
            not (self.disposed & done),
            "a disposed record reached the log",
            records=self.disposed & done,
        )
        for record in state["queued"] + state["steering"]:
            n = int(record["source"]["plugin"].removeprefix("rec-"))
            sent = self.pristine[n]
            expect(
                "INBOX-001",
                record == {k: sent[k] for k in ("content", "source", "contexts")},
                "a retained record changed",
                record=record,
                accepted=sent,
            )
        if state["status"] == "idle" and not state["queued"] and not state["steering"]:
            unexplained = set(self.pristine) - done - self.dropped
            if "turn-stop-once" in self.installed:
                unexplained -= self.steered  # terminal discard
            expect(
                "INBOX-001",
                len(unexplained) <= self.installed.count("throw-once"),
                f"records {sorted(unexplained)} vanished without cancel, dispose or discard",
            )

    @invariant()
    def seed_invariants(self) -> None:
        check_invariants(
            self.read("agent.log")["events"],
            self.read("agent.requests"),
            self.read("agent.notifications"),
            self.pristine,
            self.installed_at,
            self.agent,
        )


#: What the implementation is asked after every step (one pipelined batch: read_ahead).
READS: Final = (
    "agent.log",
    "agent.requests",
    "agent.notifications",
    "agent.state",
    "agent.submissions",
)


def fated(events: list[dict[str, Any]]) -> set[int]:
    """Records whose prompt reached the log (user/steering message or prompt/blocked)."""
    out = set()
    for event in events:
        if event["type"] in {"user/message", "steering/message", "prompt/blocked"}:
            out.add(int(event["data"]["source"]["plugin"].removeprefix("rec-")))
    return out


def check_invariants(
    events: list[dict[str, Any]],
    requests: list[dict[str, Any]],
    notifications: list[dict[str, Any]],
    pristine: Mapping[int, Mapping[str, Any]],
    installed_at: Mapping[int, tuple[str, ...]],
    agent_id: str,
) -> None:
    """The seed's inbox invariants, stated on plain JSON (no model code)."""
    expect(
        "ENV-058", replay(events, agent_id) == requests, "replay differs from the captured requests"
    )

    queued = [n for n in notifications if n["event"] == "agent/queued"]
    for note in queued:
        n = int(note["source"]["plugin"].removeprefix("rec-"))
        sent = pristine[n]
        expect(
            "INBOX-004",
            (note["content"], note["source"], note["contexts"])
            == (sent["content"], sent["source"], sent["contexts"]),
            "agent/queued does not report the accepted record",
            note=note,
        )

    statuses = [n["status"] for n in notifications if n["event"] == "agent/status"]
    expect(
        "INBOX-031",
        all(a != b for a, b in itertools.pairwise(statuses)),
        "repeated status",
        statuses=statuses,
    )

    turns = [e["data"]["turn"] for e in events if e["type"] == "turn/start"]
    expect(
        "INBOX-031",
        turns == list(range(1, len(turns) + 1)),
        "turn numbers must be 1, 2, 3, …",
        turns=turns,
    )

    prompt_at: dict[int, int] = {}
    listeners_of: dict[int, tuple[str, ...]] = {}
    blocked: set[int] = set()
    turn = 0
    for index, event in enumerate(events):
        data = event["data"]
        if event["type"] == "turn/start":
            turn = data["turn"]
        source = data.get("source") if isinstance(data, dict) else None
        plugin_name = source.get("plugin", "") if isinstance(source, dict) else ""
        if event["type"] in {"user/message", "steering/message", "prompt/blocked"}:
            n = int(plugin_name.removeprefix("rec-"))
            expect(
                "INBOX-001", n not in prompt_at and n not in blocked, f"record {n} has two fates"
            )
            if event["type"] == "prompt/blocked":
                blocked.add(n)
                expect(
                    "INBOX-013",
                    data["content"] == pristine[n]["content"],
                    "prompt/blocked is not the un-rewritten prompt",
                    event=data,
                )
                continue
            prompt_at[n] = index
            steering = event["type"] == "steering/message"
            listeners_of[n] = () if steering else installed_at[turn]
            check_prompt_event(event, pristine[n], listeners_of[n])
        if event["type"] == "context/message" and plugin_name.startswith("rec-"):
            n = int(plugin_name.split("/")[0].removeprefix("rec-"))
            expect(
                "ENV-059",
                "/pfx-" not in plugin_name,
                "a prefix context became a context message",
                source=source,
            )
            expect(
                "INBOX-021",
                n in prompt_at,
                "a context outlived (or preceded) its message",
                source=source,
            )
            between = events[prompt_at[n] + 1 : index]
            expect(
                "ENV-056",
                all(e["type"] == "context/message" for e in between),
                "separate contexts must follow their own prompt event",
                source=source,
            )
    for n, at in prompt_at.items():
        if not set(listeners_of[n]) & DROPS_CONTEXTS:
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
            expect(
                "INBOX-010",
                written == expected,
                "a message was written without all of its contexts",
                expected=expected,
                written=written,
            )


def effective_content(listeners: tuple[str, ...], content: Any) -> Any:
    """The prompt content the listener chain admits (outermost first; once-kinds skipped).

    Only called for a prompt that was admitted, so a block/throw listener it passed through
    had already been used up; the first content-deciding listener settles it.
    """
    for name in listeners:
        if name == "rewrite" or name == "allow-content":
            return LISTENERS[name]["content"]
        if name == "allow":
            return content
    return content


def check_prompt_event(
    event: Mapping[str, Any], sent: Mapping[str, Any], listeners: tuple[str, ...]
) -> None:
    data = event["data"]
    content = data["content"]
    if "envelope" in data:
        envelope = data["envelope"]
        delimiters = [i for i, block in enumerate(content) if block == DELIM]
        expect("ENV-053", len(delimiters) == 1, "exactly one delimiter", content=content)
        display = envelope["displayContent"]
        expect(
            "ENV-051",
            content[delimiters[0] + 1 :] == display,
            "the delimiter precedes the display content",
            content=content,
            display=display,
        )
        for entry in envelope["prefixContexts"]:
            name = entry["source"]["plugin"]
            expect(
                "ENV-057",
                name == "hook" or "/pfx-" in name,
                "only prefix contexts are baked",
                source=entry["source"],
            )
    else:
        display = content
    expect(
        "ENV-062",
        display == effective_content(listeners, sent["content"]),
        "displayContent is the effective prompt",
        display=display,
        listeners=listeners,
    )
    if not listeners:
        expected, _ = expected_prompt_data(sent["content"], sent["source"], sent["contexts"])
        with check("ENV-055"):
            assert {k: v for k, v in data.items() if k != "turn"} == expected, (
                "the prompt event is not the placement split of the accepted record"
            )
