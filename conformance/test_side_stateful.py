"""SIDE-*: a stateful machine driving parents and their side sessions, in lockstep.

Hypothesis interleaves operations on two root agents and the side sessions forked from
them (and from each other): sends (text, tool batches, failing steps), steering,
micro-steps, runs, cancellation, forks with and without framing, late framing, handback
requests, merge-backs (valid and invalid caps, explicit texts, wrong parents), parent
compaction, child disposal.  Every operation runs on the implementation under test and on
the reference model; results, error codes, logs, requests and notifications must agree.

Independently of the model (side_invariants.py), after every operation:
- a child's seed is the parent's balanced completed-turn prefix at fork time and never
  changes; the fork left the parent untouched; header stamps parentSession/seedLength;
- a framed child has exactly one framing, the first surface event after its seed;
- every request names its session and is the replay of its log position, and every child
  request carries the parent's system prompt bytes;
- each successful merge added exactly one capped sidechat context at a position the
  replay reproduces, and failed operations changed no log;
- no agent's own history, requests or notifications carry another agent's markers.

Comparisons with the reference model blame REF-008 (so the test is differential); each
invariant above is its own check and blames only the requirement it proves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from dsh_conformance.adapters.client import Implementation, ImplementationError
from dsh_conformance.checks import check, expect
from dsh_conformance.conformance import side_invariants as inv
from dsh_conformance.conformance.js_objects import js_dumps, js_form, js_same
from dsh_conformance.conformance.read_ahead import (
    act_then_read,
    read_ahead,
    reference_reads,
)
from dsh_conformance.profiles import examples

pytestmark = [
    pytest.mark.capability("side"),
    pytest.mark.capability("agent"),
    pytest.mark.differential,
    pytest.mark.req(
        "REF-008",
        "SIDE-003",
        "SIDE-004",
        "SIDE-005",
        "SIDE-008",
        "SIDE-010",
        "SIDE-090",
        "SIDE-015",
        "SIDE-020",
        "SIDE-024",
        "SIDE-025",
        "SIDE-026",
        "SIDE-029",
        "SIDE-031",
        "SIDE-050",
        "SIDE-051",
        "SIDE-059",
        "SIDE-061",
        "SIDE-063",
        "SIDE-065",
        "SIDE-019",
        "SIDE-054",
        "SIDE-055",
        "SIDE-056",
        "SIDE-060",
        "SIDE-062",
    ),
]

#: The requirement a failed operation that changed a log breaks (D-102).
UNCHANGED_ON_FAILURE = {
    "side.fork": "SIDE-062",
    "side.frame": "SIDE-054",
    "side.askHandback": "SIDE-055",
    "side.mergeBack": "SIDE-061",
}

OPTIONS: dict[str, Any] = {
    "persona": "Project assistant in {{cwd}}.",
    "tools": [{"name": "read_file"}, {"name": "write_file"}],
}
ROOTS = ("P", 'Q "界"')
MAX_AGENTS = 6
HEADING = "## Side-session handback\n\n"
LOG = "agent.log"
#: What the lockstep invariant reads of every agent after every step (the other
#: invariants read subsets of it).
READS = (LOG, "agent.requests", "agent.notifications", "agent.state")


def dump(value: object) -> str:
    return js_dumps(value, ensure_ascii=False)


class SideMachine(RuleBasedStateMachine):
    def __init__(self, impl: Implementation, oracle: Implementation) -> None:
        super().__init__()
        self.targets = (impl, oracle)
        self.impl = impl
        self.tags: dict[str, str] = {}
        self.counter = 0
        # child id -> {parent, seed (JSON events), system, framed}
        self.children: dict[str, dict[str, Any]] = {}
        self.disposed: set[str] = set()
        # parent id -> list of (child, cap) of successful merges, in order
        self.merges: dict[str, list[tuple[str, int]]] = {}
        # What impl answered to each read (op, agent) since its last other call (``read``),
        # and each log's js_form.
        self.seen: dict[tuple[str, str], Any] = {}
        # The reference's answers to the reads of the last batch, taken meanwhile.
        self.references: dict[tuple[str, str], Callable[[], Any]] = {}
        self.forms: dict[str, bytes | str] = {}

    # --- plumbing ------------------------------------------------------------------------

    def both(self, op: str, **args: Any) -> Any:
        """Run *op* on both; results or error codes must agree; failures change no log."""
        return self._both(op, args, last=False)

    def last(self, op: str, **args: Any) -> Any:
        """``both`` for a rule's last operation: impl is asked the reads the invariants
        make after it (READS of every agent) in the operation's own batch
        (read_ahead.act_then_read: one round trip, the same requests)."""
        return self._both(op, args, last=True)

    def _both(self, op: str, args: dict[str, Any], last: bool) -> Any:
        before = self.all_logs()
        self.forms.clear()
        reads = [((read, aid), read, aid) for aid in self.tags for read in READS if last]
        # impl's batch goes first and is read once the reference has taken its step and
        # its reads: the host computes meanwhile (D-507).
        sent = act_then_read(self.impl, self.seen, op, args, reads)
        try:
            theirs: tuple[str, Any] = ("ok", self.targets[1].call(op, **args))
        except ImplementationError as exc:
            theirs = ("error", exc.code)
        self.references = reference_reads(self.targets[1], reads)
        outcomes = [sent(), theirs]
        expect(
            "REF-008",
            outcomes[0] == outcomes[1],
            f"{op} differs from the reference model",
            args=args,
            ours=outcomes[0],
            reference=outcomes[1],
        )
        kind, value = outcomes[0]
        if kind == "error":
            expect(
                UNCHANGED_ON_FAILURE.get(op, "SIDE-061"),
                self.all_logs() == before,
                f"failed {op} changed a log",
                args=args,
            )
            return ImplementationError(value, op)
        return value

    def all_logs(self) -> dict[str, bytes | str]:
        read_ahead(self.impl, self.seen, (((LOG, a), LOG, a) for a in self.tags))()
        out = {}
        for a in self.tags:
            if a not in self.forms:
                self.forms[a] = js_form(self.log(a))
            out[a] = self.forms[a]
        return out

    def read(self, op: str, aid: str) -> Any:
        """impl's answer to the read *op* of *aid*, asked once between two operations
        (issue 44): the invariants after a step observe one state, so the reads they
        share are one read each.  Its callers never change what it returns."""
        key = (op, aid)
        if key not in self.seen:
            self.seen[key] = self.impl.call(op, agent=aid)
        return self.seen[key]

    def log(self, aid: str) -> dict[str, Any]:
        result: dict[str, Any] = self.read("agent.log", aid)
        return result

    def marker(self, aid: str) -> str:
        self.counter += 1
        return f"\u27e6{self.tags[aid]}:{self.counter}\u27e7"

    def live(self) -> list[str]:
        return [a for a in self.tags if a not in self.disposed]

    # --- rules ---------------------------------------------------------------------------

    @initialize()
    def create_roots(self) -> None:
        self.seen.clear()
        self.forms.clear()
        for target in self.targets:
            target.call("reset")
        for n, root in enumerate(ROOTS):
            self.both("agent.create", id=root, header={"cwd": "/workspace"}, options=OPTIONS)
            self.tags[root] = f"R{n}"

    @rule(data=st.data(), kind=st.sampled_from(["text", "text", "tools", "error"]))
    def send(self, data: st.DataObject, kind: str) -> None:
        aid = data.draw(st.sampled_from(list(self.tags)))
        mark = self.marker(aid)
        responses: Any = {
            "text": [{"text": f"answer {mark}"}],
            "tools": [
                {"toolCalls": [{"name": "read_file"}, {"name": "write_file"}]},
                {"text": f"tools done {mark}"},
            ],
            "error": [{"error": f"failed {mark}"}],
        }[kind]
        self.both("agent.script", agent=aid, responses=responses)
        self.last("agent.send", agent=aid, content=[{"type": "text", "text": f"ask {mark}"}])

    @rule(data=st.data())
    def steer(self, data: st.DataObject) -> None:
        aid = data.draw(st.sampled_from(list(self.tags)))
        mark = self.marker(aid)
        self.last("agent.steer", agent=aid, content=[{"type": "text", "text": f"steer {mark}"}])

    @rule(data=st.data(), count=st.integers(min_value=1, max_value=4))
    def step(self, data: st.DataObject, count: int) -> None:
        aid = data.draw(st.sampled_from(list(self.tags)))
        for _ in range(count - 1):
            self.both("agent.step", agent=aid)
        self.last("agent.step", agent=aid)

    @rule(data=st.data())
    def run(self, data: st.DataObject) -> None:
        self.last("agent.run", agent=data.draw(st.sampled_from(list(self.tags))))

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        self.last("agent.cancel", agent=data.draw(st.sampled_from(list(self.tags))))

    def advance(self, aid: str, steps: int) -> None:
        """Give *aid* work with a tool batch and run it *steps* micro-steps into it."""
        if steps and aid not in self.disposed:
            mark = self.marker(aid)
            self.both(
                "agent.script",
                agent=aid,
                responses=[
                    {"toolCalls": [{"name": "read_file"}, {"name": "write_file"}]},
                    {"text": f"batch done {mark}"},
                ],
            )
            self.both("agent.send", agent=aid, content=[{"type": "text", "text": f"go {mark}"}])
            for _ in range(steps):
                self.both("agent.step", agent=aid)

    @precondition(lambda self: len(self.tags) < MAX_AGENTS)
    @rule(
        data=st.data(),
        frame=st.sampled_from([True, True, False]),
        advance=st.integers(min_value=0, max_value=7),
    )
    def fork(self, data: st.DataObject, frame: bool, advance: int) -> None:
        source = data.draw(st.sampled_from(list(self.tags)))
        self.advance(source, advance)
        child = f"{source}/side {len(self.tags)}"
        before = self.log(source)
        system = self.read("agent.system", source)["system"]
        result = self.last("side.fork", parent=source, child=child, frame=frame)
        if isinstance(result, ImplementationError):
            expect(
                "SIDE-062",
                source in self.disposed and result.code == "DSH_AGENT_DISPOSED",
                "side.fork of a live agent failed",
                parent=source,
                code=result.code,
            )
            return
        self.tags[child] = f"C{len(self.tags)}"
        after_child = self.log(child)
        inv.expect_fork(before, self.log(source), after_child, source)
        length = after_child["header"]["seedLength"]
        self.children[child] = {
            "parent": source,
            "seed": after_child["events"][:length],
            "system": system,
            "framed": frame,
        }
        expect(
            "SIDE-005",
            result["seedLength"] == length,
            "side.fork reports another seedLength",
            result=result,
            header=after_child["header"],
        )

    @precondition(lambda self: bool(self.children))
    @rule(data=st.data())
    def frame(self, data: st.DataObject) -> None:
        child = data.draw(st.sampled_from(sorted(self.children)))
        result = self.last("side.frame", child=child)
        if not isinstance(result, ImplementationError):
            self.children[child]["framed"] = True

    @precondition(lambda self: bool(self.children))
    @rule(
        data=st.data(),
        cap=st.sampled_from([None, 256, 300, 4096, 255]),
        size=st.sampled_from([10, 200, 5000]),
    )
    def ask_handback(self, data: st.DataObject, cap: int | None, size: int) -> None:
        child = data.draw(st.sampled_from(sorted(self.children)))
        note = f"HB {self.marker(child)} " + "n" * size + " end"
        self.both("agent.script", agent=child, responses=[{"text": note}])
        args: dict[str, Any] = {"child": child}
        if cap is not None:
            args["cap"] = cap
        self.last("side.askHandback", **args)

    @precondition(lambda self: bool(self.children))
    @rule(
        data=st.data(),
        cap=st.sampled_from([None, 256, 512, 4096, 512, 100, 70000]),
        size=st.sampled_from([10, 600, 5000]),
        advance=st.integers(min_value=0, max_value=7),
    )
    def ask_run_merge(self, data: st.DataObject, cap: int | None, size: int, advance: int) -> None:
        """The whole merge-back flow, with the parent *advance* micro-steps into a turn."""
        child = data.draw(st.sampled_from(sorted(self.children)))
        note = f"HB {self.marker(child)} " + "m" * size + " end"
        self.both("agent.script", agent=child, responses=[{"text": note}])
        args: dict[str, Any] = {"child": child}
        if cap is not None:
            args["cap"] = cap
        self.both("side.askHandback", **args)
        self.both("agent.run", agent=child)
        self.advance(self.children[child]["parent"], advance)
        self.merge_back(data, cap, None, wrong_parent=False, child=child)

    @precondition(lambda self: bool(self.children))
    @rule(
        data=st.data(),
        cap=st.sampled_from([None, 256, 512, 4096, 100, 70000]),
        explicit=st.sampled_from([None, None, 10, 300]),
        wrong_parent=st.booleans(),
    )
    def merge_back(
        self,
        data: st.DataObject,
        cap: int | None,
        explicit: int | None,
        wrong_parent: bool,
        child: str | None = None,
    ) -> None:
        if child is None:
            child = data.draw(st.sampled_from(sorted(self.children)))
        parent = self.children[child]["parent"]
        if wrong_parent:
            parent = data.draw(st.sampled_from(list(self.tags)))
        args: dict[str, Any] = {"parent": parent, "child": child}
        if cap is not None:
            args["cap"] = cap
        if explicit is not None:
            args["text"] = f"EX {self.marker(child)} " + "e" * explicit
        before = self.log(parent)
        result = self.last("side.mergeBack", **args)
        if isinstance(result, ImplementationError):
            return
        expect(
            "SIDE-061",
            parent == self.children[child]["parent"],
            "a merge into another session's child succeeded",
            parent=parent,
            child=child,
        )
        limit = 4096 if cap is None else cap
        self.merges.setdefault(parent, []).append((child, limit))
        merged = result["text"]
        expect(
            "SIDE-025",
            inv.length_capped(merged, limit),
            "the merge is not length-capped",
            cap=limit,
            text=merged,
        )
        expect(
            "SIDE-055",
            inv.utf8_len(merged) <= limit,
            "over the cap in UTF-8 bytes",
            cap=limit,
            text=merged,
        )
        expect(
            "SIDE-056", merged.startswith(HEADING), "the profile's heading is missing", text=merged
        )
        after = self.log(parent)
        new = after["events"][len(before["events"]) :]
        with check("SIDE-025", result=result, new=new):
            assert after["events"][: len(before["events"])] == before["events"]
            if result["deferred"]:
                assert new == []
                return
            assert [e["type"] for e in new] in (
                ["context/message"],
                ["turn/start", "context/message", "turn/end"],
            )
            context = inv.sidechat_contexts(new)
            assert len(context) == 1
            assert context[0]["seq"] == result["seq"]
            assert inv.text_of(context[0]["data"]["content"]) == merged

    @rule(data=st.data(), summary=st.sampled_from(["short", "a longer summary"]))
    def compact(self, data: st.DataObject, summary: str) -> None:
        aid = data.draw(st.sampled_from(list(self.tags)))
        self.last("side.compact", agent=aid, summary=f"{summary} {self.marker(aid)}")

    @precondition(lambda self: len(self.children) > len(self.disposed & set(self.children)))
    @rule(data=st.data())
    def dispose_child(self, data: st.DataObject) -> None:
        child = data.draw(st.sampled_from(sorted(set(self.children) - self.disposed)))
        self.last("agent.dispose", agent=child)
        self.disposed.add(child)

    # --- invariants ----------------------------------------------------------------------

    @invariant()
    def lockstep(self) -> None:
        reads = [((op, aid), op, aid) for aid in self.tags for op in READS]
        sent = read_ahead(self.impl, self.seen, reads)
        # The reference's reads are taken while the host answers impl's.
        references = reference_reads(self.targets[1], reads, self.references)
        sent()
        for key, op, aid in reads:
            a, b = self.read(op, aid), references[key]()
            expect(
                "REF-008",
                js_same(a, b),
                f"{op} of {aid!r} differs from the reference model",
                ours=a,
                reference=b,
            )

    @invariant()
    def children_keep_their_seed_and_framing(self) -> None:
        for child, info in self.children.items():
            session = self.log(child)
            length = session["header"]["seedLength"]
            expect(
                "SIDE-005",
                session["header"]["parentSession"] == info["parent"],
                "parentSession changed",
                child=child,
                header=session["header"],
            )
            expect(
                "SIDE-004",
                session["events"][:length] == info["seed"],
                "the child's seed changed",
                child=child,
            )
            if info["framed"]:
                problems = inv.framing_problems(session)
                expect("SIDE-024", problems == [], "; ".join(problems), child=child)
            for request in self.read("agent.requests", child):
                expect(
                    "SIDE-008",
                    request["system"] == info["system"],
                    "a child request's system prompt differs from the parent's",
                    child=child,
                )

    @invariant()
    def requests_replay_their_logs(self) -> None:
        for aid in self.tags:
            requests = self.read("agent.requests", aid)
            problems = inv.request_problems(requests, self.log(aid))
            expect("SIDE-010", problems == [], "; ".join(problems), agent=aid)
            exact = inv.request_problems(requests, self.log(aid), exact=True)
            expect("SIDE-090", exact == [], "; ".join(exact), agent=aid)

    @invariant()
    def merges_are_single_capped_contexts(self) -> None:
        for parent, merges in self.merges.items():
            session = self.log(parent)
            start = session["header"].get("seedLength") or 0  # inherited handbacks
            handbacks = [e for e in session["events"][start:] if inv.is_handback(e)]
            in_batch = self.read("agent.state", parent)["toolBatch"]
            counted = len(handbacks) <= len(merges) if in_batch else len(handbacks) == len(merges)
            expect(
                "SIDE-025",
                counted,
                "not one handback context per merge",
                parent=parent,
                handbacks=len(handbacks),
                merges=len(merges),
            )
            for event, (child, cap) in zip(handbacks, merges, strict=False):
                merged = inv.text_of(event["data"]["content"])
                expect(
                    "SIDE-060",
                    event["data"]["meta"]["sessionId"] == child,
                    "the handback meta does not name its child",
                    meta=event["data"]["meta"],
                )
                expect(
                    "SIDE-031",
                    inv.length_capped(merged, cap),
                    "a merge is not capped",
                    cap=cap,
                    text=merged,
                )
                expect(
                    "SIDE-055",
                    inv.utf8_len(merged) <= cap,
                    "over the cap in UTF-8 bytes",
                    cap=cap,
                    text=merged,
                )
        for aid in self.tags:
            types = [e["type"] for e in self.log(aid)["events"]]
            expect(
                "SIDE-019",
                not [t for t in types if t.startswith("sidechat/")],
                "a sidechat/* event",
                agent=aid,
                types=types,
            )

    @invariant()
    def no_cross_talk(self) -> None:
        for aid in self.tags:
            session = self.log(aid)
            start = session["header"].get("seedLength") or 0 if aid in self.children else 0
            own = [e for e in session["events"][start:] if not inv.is_handback(e)]
            notifications = self.read("agent.notifications", aid)
            expect(
                "SIDE-065",
                all(n["agent"] == aid for n in notifications),
                "a notification of another agent",
                agent=aid,
            )
            text = dump(own) + dump(notifications)
            for other, tag in self.tags.items():
                if other != aid:
                    expect(
                        "SIDE-026", f"\u27e6{tag}:" not in text, f"{other!r} leaked into {aid!r}"
                    )


def test_side_sessions_stateful(impl: Implementation, oracle: Implementation) -> None:
    run_state_machine_as_test(  # type: ignore[no-untyped-call, unused-ignore]
        # a factory, as Hypothesis documents; newer stubs name only the class
        cast(Any, lambda: SideMachine(impl, oracle)),
        settings=settings(
            max_examples=examples(30),
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
