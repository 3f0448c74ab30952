"""Variants of the side kit (tests/side_kit.py): each broken one breaks one sentence of
seed 004, each allowed one differs from the reference where the note leaves the choice to
the host.  tests/test_side_scenario_kits.py checks that every broken one fails exactly its
sentences and every allowed one none.  Selectable as ``python:side_kit_variants:<factory>``
with ``tests/`` on the path.
"""

from __future__ import annotations

import copy
from typing import Any

from side_kit import (
    ADVISOR,
    FRAMING,
    HEADING,
    SIDECHAT,
    USER,
    KitAgent,
    KitError,
    KitHost,
    balanced_end,
    fold,
    kit_factory,
    text_block,
)

# --- broken: each breaks one sentence of seed 004 ----------------------------------------------


class ForksTheOpenTurn(KitHost):
    """The child takes the parent's whole log, an in-flight turn included (SIDE-004)."""

    def seed(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.parent.events)


class StampsNoLineage(KitHost):
    """The child's header names no parent and no seed length (SIDE-005)."""

    def child_header(self, seed: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": self.plan.child, "cwd": self.parent.header.get("cwd")}


class MarksTheSource(KitHost):
    """The fork records the child in the parent's header (SIDE-020)."""

    def fork(self) -> dict[str, Any]:
        before = self.snapshot()
        super().fork()
        self.parent.header["sideSessions"] = [self.plan.child]
        return {"before": before, "after": self.snapshot()}


class NoFraming(KitHost):
    """The child is never framed (SIDE-007, SIDE-024)."""

    def frame(self, child: KitAgent) -> None:
        pass


class FramedTwice(KitHost):
    """Two framing contexts: one per concern (SIDE-024)."""

    def frame(self, child: KitAgent) -> None:
        child.add_context(text_block("Only answer and explain."), ADVISOR)
        child.add_context(text_block("Do not change anything or continue the task."), ADVISOR)


class FramingInTheSystemPrompt(KitHost):
    """The framing goes into the child's system prompt instead (SIDE-008, SIDE-017)."""

    def frame(self, child: KitAgent) -> None:
        plain = child.system
        child.system = lambda: plain() + "\n\n" + FRAMING  # type: ignore[method-assign]


class MistypedStampBesideABreach(FramingInTheSystemPrompt):
    """Issue 42 item 2: the child's seedLength is a string ("21") -- a field no check can
    read -- and the framing goes into the system prompt (a real breach of SIDE-008 and
    SIDE-017, which must still be caught): only the checks reading the stamp are unjudged."""

    def child_header(self, seed: list[dict[str, Any]]) -> dict[str, Any]:
        return {**super().child_header(seed), "seedLength": str(len(seed))}


class MergesOverTheCap(KitHost):
    """The handback is merged whole, whatever the cap (SIDE-025, SIDE-031)."""

    def capped(self, note: str, cap: int) -> str:
        return HEADING + note


class MergesIntoTheChild(KitHost):
    """The handback is injected into the side session, not the parent (SIDE-009)."""

    def merge(self, child: KitAgent, cap: int) -> None:
        if child.handback is None:
            raise KitError("DSH_SIDE_NO_HANDBACK", "no handback")
        child.add_context(text_block(self.capped(child.handback, cap)), SIDECHAT)


class MergesFromAnotherPlugin(KitHost):
    """The merge-back's source is the kit's own plugin, not sidechat (SIDE-025)."""

    def merge(self, child: KitAgent, cap: int) -> None:
        if child.handback is None:
            raise KitError("DSH_SIDE_NO_HANDBACK", "no handback")
        self.parent.add_context(text_block(self.capped(child.handback, cap)), ADVISOR)


class ConsolidatesNotes(KitHost):
    """Each merge replaces the earlier notes with one note holding them all (SIDE-031)."""

    notes: list[str]

    def merge(self, child: KitAgent, cap: int) -> None:
        if child.handback is None:
            raise KitError("DSH_SIDE_NO_HANDBACK", "no handback")
        self.notes = [*getattr(self, "notes", []), child.handback]
        earlier = [
            e for e in self.parent.events if e["type"] == "context/message"
            and e["data"]["source"] == SIDECHAT
        ]  # fmt: skip
        body = self.capped("\n".join(self.notes), cap)
        if not earlier:
            self.parent.add_context(text_block(body), SIDECHAT)
            return
        event = {
            "type": "context/message",
            "seq": len(self.parent.events),
            "time": self.clock(),
            "data": {"content": text_block(body), "source": SIDECHAT},
            "surfaceOp": {"op": "replace", "start": earlier[-1]["seq"], "end": earlier[-1]["seq"]},
        }
        self.parent.events.append(event)


class WritesSidechatEvents(KitHost):
    """A merge-back also logs a ``sidechat/merged`` event (SIDE-019)."""

    def merge(self, child: KitAgent, cap: int) -> None:
        super().merge(child, cap)
        self.parent.append("sidechat/merged", {"child": child.header["id"]})


class ChildDiesWithTheParent(KitHost):
    """Disposing of the parent disposes of its side session too (SIDE-015)."""

    def dispose(self, agent: KitAgent) -> None:
        super().dispose(agent)
        if agent is self.parent and self.child is not None:
            self.child.dispose()


class EchoesTheChild(KitHost):
    """The child's prompts are mirrored into the parent's log (SIDE-026)."""

    def fork(self) -> dict[str, Any]:
        result = super().fork()
        child = self.child
        assert child is not None
        plain = child.send

        def send(text: str, source: dict[str, Any] = USER) -> None:
            plain(text, source)
            if source == USER and not self.parent.disposed:
                self.parent.add_context(text_block(text), USER)

        child.send = send  # type: ignore[method-assign]
        return result


class ForksTheFullHistory(KitHost):
    """The child is also told the turns a compaction replaced, as contexts after its
    framing: the source's uncompacted history reaches its model (SIDE-029)."""

    def frame(self, child: KitAgent) -> None:
        super().frame(child)
        shown = {id(e) for e in fold(child.events)}
        for event in child.events:
            replaced = event.get("surfaceOp") == "append" and id(event) not in shown
            if replaced and event["type"] in {"user/message", "assistant/message"}:
                child.add_context(event["data"]["content"], USER)


class NeverAsks(KitHost):
    """The handback request never reaches the child (SIDE-009)."""

    def ask(self, child: KitAgent, cap: int) -> None:
        child.handback = child.handback or "nothing to report yet"


class StampsTheSeedShort(KitHost):
    """The child takes the balanced prefix but stamps one event fewer (SIDE-005)."""

    def child_header(self, seed: list[dict[str, Any]]) -> dict[str, Any]:
        return {**super().child_header(seed), "seedLength": max(0, len(seed) - 1)}


# --- allowed: differences the note leaves to the host ------------------------------------------


class KeepsTheTail(KitHost):
    """An over-cap note keeps its end, not its start."""

    def capped(self, note: str, cap: int) -> str:
        merged = HEADING + note
        units = merged.encode("utf-16-le", "surrogatepass")
        if len(units) // 2 <= cap:
            return merged
        room = (cap - len(HEADING) - 1) * 2
        return HEADING + "…" + units[len(units) - room :].decode("utf-16-le", "ignore")


class FramesInATurn(KitHost):
    """The framing and each note into an idle parent are one-shot injection turns with a
    meta of the kit's own (the reference's layout, the kit's words)."""

    def inject(self, agent: KitAgent, content: list[Any], source: dict[str, Any]) -> None:
        if agent.task is not None:
            agent.add_context(content, source)
            return
        number = agent.turns() + 1
        agent.append(
            "turn/start", {"turn": number, "trigger": {"kind": "injection", "source": source}}
        )
        data = {"content": content, "source": source, "meta": {"by": "kit"}}
        agent.append("context/message", data, True)
        agent.append("turn/end", {"turn": number, "reason": {"kind": "completed"}})

    def frame(self, child: KitAgent) -> None:
        self.inject(child, text_block(FRAMING), ADVISOR)

    def merge(self, child: KitAgent, cap: int) -> None:
        if self.parent.disposed:
            raise KitError("DSH_AGENT_DISPOSED", "the parent is disposed")
        if child.handback is None:
            raise KitError("DSH_SIDE_NO_HANDBACK", "the side session has not answered yet")
        self.inject(self.parent, text_block(self.capped(child.handback, cap)), SIDECHAT)


class RefusesLongNotes(KitHost):
    """A note over the cap is refused rather than cut (nothing is merged)."""

    def capped(self, note: str, cap: int) -> str:
        merged = HEADING + note
        if len(merged.encode("utf-8", "surrogatepass")) > cap:
            raise KitError("DSH_SIDE_HANDBACK_OVER_CAP", "the handback is over the cap")
        return merged


class FramesInItsFirstTurn(KitHost):
    """The framing is written inside the child's first turn of its own, right after its
    turn/start, and every event is stamped time 0: forked while the parent's turn is
    open, the child's first turn/start equals the parent's open one event for event, so
    only the seedLength stamp tells where the inherited history ends (D-443)."""

    def clock(self) -> int:
        return 0

    def frame(self, child: KitAgent) -> None:
        plain = child.append
        framed = False

        def append(kind: str, data: dict[str, Any], surface: bool = False) -> None:
            nonlocal framed
            plain(kind, data, surface)
            if kind == "turn/start" and not framed:
                framed = True
                plain("context/message", {"content": text_block(FRAMING), "source": ADVISOR}, True)

        child.append = append  # type: ignore[method-assign]


class LogsTelemetry(KitHost):
    """Each session logs a record of its own after every turn (a log-only ``host/turn-usage``
    event with the turn's prompt and answer), and a fork copies the parent's records that
    follow its last completed turn: the note's feature adds no event, the host may log
    more (D-444)."""

    def seed(self) -> list[dict[str, Any]]:
        """The balanced prefix and the host's own records right after it."""
        events = self.parent.events
        end = balanced_end(events)
        while end < len(events) and events[end]["type"].startswith("host/"):
            end += 1
        return copy.deepcopy(events[:end])

    def fork(self) -> dict[str, Any]:
        result = super().fork()
        assert self.child is not None
        self._telemetry(self.child)
        return result

    def __init__(self, plan: Any) -> None:
        super().__init__(plan)
        self._telemetry(self.parent)

    def _telemetry(self, agent: KitAgent) -> None:
        plain = agent.append

        def append(kind: str, data: dict[str, Any], surface: bool = False) -> None:
            plain(kind, data, surface)
            if kind == "turn/end":
                said = [
                    e["data"]["content"]
                    for e in agent.events
                    if e["type"] in {"user/message", "assistant/message"}
                ][-2:]
                plain("host/turn-usage", {"turn": data["turn"], "said": said, "tokens": 7})

        agent.append = append  # type: ignore[method-assign]


forks_the_open_turn = kit_factory(ForksTheOpenTurn, "forks the open turn")
stamps_no_lineage = kit_factory(StampsNoLineage, "stamps no lineage")
marks_the_source = kit_factory(MarksTheSource, "marks the source")
no_framing = kit_factory(NoFraming, "no framing")
framed_twice = kit_factory(FramedTwice, "framed twice")
framing_in_the_system_prompt = kit_factory(FramingInTheSystemPrompt, "framing in the system prompt")
mistyped_stamp_beside_a_breach = kit_factory(
    MistypedStampBesideABreach, "mistyped stamp beside a breach"
)
merges_over_the_cap = kit_factory(MergesOverTheCap, "merges over the cap")
merges_into_the_child = kit_factory(MergesIntoTheChild, "merges into the child")
merges_from_another_plugin = kit_factory(MergesFromAnotherPlugin, "merges from another plugin")
consolidates_notes = kit_factory(ConsolidatesNotes, "consolidates notes")
writes_sidechat_events = kit_factory(WritesSidechatEvents, "writes sidechat events")
child_dies_with_the_parent = kit_factory(ChildDiesWithTheParent, "child dies with the parent")
echoes_the_child = kit_factory(EchoesTheChild, "echoes the child")
forks_the_full_history = kit_factory(ForksTheFullHistory, "forks the full history")
never_asks = kit_factory(NeverAsks, "never asks")
keeps_the_tail = kit_factory(KeepsTheTail, "keeps the tail")
frames_in_a_turn = kit_factory(FramesInATurn, "frames in a turn")
refuses_long_notes = kit_factory(RefusesLongNotes, "refuses long notes")
stamps_the_seed_short = kit_factory(StampsTheSeedShort, "stamps the seed short")
frames_in_its_first_turn = kit_factory(FramesInItsFirstTurn, "frames in its first turn")
logs_telemetry = kit_factory(LogsTelemetry, "logs telemetry")


# --- hosts that log no step events (issue 42, D-446, D-447) -------------------------------------

STEP_EVENTS = frozenset({"step/start", "step/end", "request/header"})


class WritesNoSteps(KitHost):
    """Allowed: neither session logs step/start, step/end or request/header, events the
    notes never name; its turns are balanced by their turn/end and paired calls, its
    requests are the replay of some position of its log (D-446, D-447)."""

    def __init__(self, plan: Any) -> None:
        super().__init__(plan)
        self._no_steps(self.parent)

    def fork(self) -> dict[str, Any]:
        result = super().fork()
        assert self.child is not None
        self._no_steps(self.child)
        return result

    @staticmethod
    def _no_steps(agent: KitAgent) -> None:
        plain = agent.append

        def append(kind: str, data: dict[str, Any], surface: bool = False) -> None:
            if kind not in STEP_EVENTS:
                plain(kind, data, surface)

        agent.append = append  # type: ignore[method-assign]


class StepLessForksTheOpenTurn(WritesNoSteps, ForksTheOpenTurn):
    """Broken: logs no steps and the child takes the in-flight turn too (SIDE-004)."""


class StepLessHidesTheNote(WritesNoSteps):
    """Broken: logs no steps and the parent's requests leave the merged notes out, which
    its log holds (SIDE-010: the next request does not see it where it is logged)."""

    def __init__(self, plan: Any) -> None:
        super().__init__(plan)
        plain = self.parent.ask_model

        async def ask_model(number: int, step: int) -> dict[str, Any] | None:
            reply = await plain(number, step)
            request = self.parent.requests[-1]
            request["messages"] = [
                m for m in request["messages"] if HEADING.strip() not in str(m["content"])
            ]
            return reply

        self.parent.ask_model = ask_model  # type: ignore[method-assign]


writes_no_steps = kit_factory(WritesNoSteps, "writes no steps")
step_less_forks_the_open_turn = kit_factory(
    StepLessForksTheOpenTurn, "step-less, forks the open turn"
)
step_less_hides_the_note = kit_factory(StepLessHidesTheNote, "step-less, hides the note")
