"""Envelope and placement defects: the prepared context (ENV-001..ENV-012) and how an
admitted prompt bakes it (ENV-050..ENV-071)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from dsh_conformance.adapters.reference import prepare_ops
from dsh_conformance.model import agent_core as core_module
from dsh_conformance.model import envelope, jsstr
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.frozen import FrozenDict, freeze, thaw
from dsh_conformance.model.placement import (
    DELIMITER,
    PreparedPrompt,
    context_message_data,
    is_prefix,
    prepare_prompt_message,
)
from dsh_conformance.model.retention import RetainedSource
from dsh_conformance.model.session import Event, Replace, SessionLog
from dsh_conformance.model.snapshot import SessionSnapshot
from zoo import Area
from zoo._base import Broken, Patch

#: The stateful machines are left out: they cost most of an agent run and every member
#: here is killed by an example-based test.
AREA = Area(
    capabilities=["prepare", "agent"],
    requirements=["ENV-*"],
    keyword="not state_machine",
)

_reference_meta = envelope.reference_meta
_derive_message = core_module.derive_message


def _placement(replacement: Any) -> tuple[Patch, ...]:
    return ((Agent, "place_prompt", staticmethod(replacement)),)


def _rewrite(data: FrozenDict, **changes: Any) -> FrozenDict:
    return freeze({**data, **changes})


class WarningWithoutRepeatClause(Broken):
    name = "weakened warning"
    invariant = (
        "Drops 'unless the current user explicitly repeats them' from the untrusted-data warning."
    )
    #: What the warning means is a review (ENV-002, D-199): the report lists this text as
    #: a missing review; the verdicts see the profile's exact warning bytes.
    kills = frozenset({"ENV-009"})

    def patches(self) -> tuple[Patch, ...]:
        text = envelope.PROMPT_PREFIX.replace(
            " unless the current\nuser explicitly repeats them.", "."
        )
        assert text != envelope.PROMPT_PREFIX
        return ((envelope, "PROMPT_PREFIX", text),)


class StatsNotInMeta(Broken):
    name = "no retention metadata"
    invariant = (
        "Writes per-source metadata without the retention statistics (their fields zeroed: "
        "a result missing a field of the protocol is a protocol problem, D-251)."
    )
    kills = frozenset({"ENV-005"})
    collateral_ok = frozenset(
        {"ENV-008", "ENV-011", "ENV-012", "ENV-052", "PREP-011"}
    )  # the same defect breaks these too

    def patches(self) -> tuple[Patch, ...]:
        def reference_meta(source: Any, input_index: int) -> dict[str, Any]:
            meta = _reference_meta(source, input_index)
            kept = ("sessionId", "label", "capturedThroughSeq", "inputIndex")
            return {k: (v if k in kept else type(v)()) for k, v in meta.items()}

        return ((envelope, "reference_meta", reference_meta),)


class NoPlacementDeclared(Broken):
    name = "placement not declared"
    invariant = (
        "Returns the snapshot context without declaring prompt-prefix placement (it says "
        "'separate': a context without the field breaks the protocol, D-251)."
    )
    kills = frozenset({"ENV-004"})
    collateral_ok = frozenset(
        {
            "ENV-001",
            "ENV-003",
            "ENV-005",
            "ENV-007",
            "ENV-008",
            "ENV-010",
            "ENV-011",
            "ENV-059",  # declared 'separate', the snapshot becomes its own message
            "ENV-065",
            "ENV-072",
            "ENV-073",
            "PREP-011",
            "PROJ-003",
            "RET-001",
        }
    )  # the same defect breaks these too

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        out = self.reference.call("prepare", args)
        contexts = [{**c, "placement": "separate"} for c in out["contexts"]]
        return {**out, "contexts": contexts}


class DataRegionInDisplay(Broken):
    name = "data region in displayContent"
    invariant = "Sets the envelope's displayContent to the whole baked content, snapshot included."
    kills = frozenset({"ENV-051"})
    collateral_ok = frozenset(
        {"ENV-052", "ENV-060", "ENV-062", "ENV-065", "ENV-072"}
    )  # the same defect breaks these too

    def patches(self) -> tuple[Patch, ...]:
        def place(
            content: object, source: object, contexts: Sequence[Mapping[str, Any]]
        ) -> PreparedPrompt:
            out = prepare_prompt_message(content, source, contexts)
            envelope_ = out.data.get("envelope")
            if not isinstance(envelope_, Mapping):
                return out
            leaked = freeze({**envelope_, "displayContent": out.data["content"]})
            return PreparedPrompt(_rewrite(out.data, envelope=leaked), out.separate)

        return _placement(place)


class DelimiterInDisplay(Broken):
    name = "delimiter in displayContent"
    invariant = (
        "Sets the envelope's displayContent to the `## My request:` delimiter followed by the "
        "direct content, instead of the direct content alone."
    )
    kills = frozenset({"ENV-051"})
    collateral_ok = frozenset(
        {"ENV-052", "ENV-054", "ENV-060", "ENV-062", "ENV-065", "ENV-072"}
    )  # what a host renders is the same defect seen by these sentences

    def patches(self) -> tuple[Patch, ...]:
        def place(
            content: object, source: object, contexts: Sequence[Mapping[str, Any]]
        ) -> PreparedPrompt:
            out = prepare_prompt_message(content, source, contexts)
            envelope_ = out.data.get("envelope")
            if not isinstance(envelope_, Mapping):
                return out
            shown = freeze([DELIMITER, *thaw(envelope_["displayContent"])])
            leaked = freeze({**envelope_, "displayContent": shown})
            return PreparedPrompt(_rewrite(out.data, envelope=leaked), out.separate)

        return _placement(place)


class DelimiterPerPrefix(Broken):
    name = "a delimiter per prefix block"
    invariant = (
        "Writes the `## My request:` delimiter after every prefix context, not once after all."
    )
    #: One delimiter is the seed's (ENV-050: "the snapshot, ## My request: delimiter, and
    #: effective direct prompt"); ENV-053's layout check comes after it in the same test.
    kills = frozenset({"ENV-050"})
    collateral_ok = frozenset({"ENV-053", "ENV-060"})

    def patches(self) -> tuple[Patch, ...]:
        def place(
            content: object, source: object, contexts: Sequence[Mapping[str, Any]]
        ) -> PreparedPrompt:
            out = prepare_prompt_message(content, source, contexts)
            prefix = [c for c in contexts if is_prefix(c)]
            if len(prefix) < 2:
                return out
            baked: list[Any] = []
            for context in prefix:
                baked.extend(context.get("content") or ())
                baked.append(DELIMITER)
            baked.extend(content if isinstance(content, list | tuple) else ())
            return PreparedPrompt(_rewrite(out.data, content=baked), out.separate)

        return _placement(place)


class SnapshotAsSeparateMessage(Broken):
    name = "snapshot as a separate message"
    invariant = (
        "Writes a prompt-prefix context as its own after "
        "context/message the prompt instead of baking it."
    )
    # ENV-073, the title (a decision), is judged in ENV-072's test after it: moot once the
    # seed sentence failed there (D-250), so it may or may not be blamed
    kills = frozenset({"ENV-072"})
    collateral_ok = frozenset(  # the same defect breaks these too (ENV-050: nothing baked)
        {
            "ENV-073",
            "ENV-050",
            "ENV-051",
            "ENV-052",
            "ENV-053",
            "ENV-055",
            "ENV-057",
            "ENV-059",  # a separate user-role message for a prefix: its very sentence
            "ENV-060",
            "ENV-062",
            "ENV-065",
        }
    )

    def patches(self) -> tuple[Patch, ...]:
        def place(
            content: object, source: object, contexts: Sequence[Mapping[str, Any]]
        ) -> PreparedPrompt:
            data = FrozenDict({"content": content, "source": source})
            return PreparedPrompt(data, tuple(context_message_data(c) for c in contexts))

        return _placement(place)


class SourceNotKept(Broken):
    name = "baked prompt loses its source"
    invariant = (
        "Writes a baked prompt event with a plain user source instead of the record's source."
    )
    kills = frozenset({"ENV-064"})
    collateral_ok = frozenset({"ENV-062"})

    def patches(self) -> tuple[Patch, ...]:
        def place(
            content: object, source: object, contexts: Sequence[Mapping[str, Any]]
        ) -> PreparedPrompt:
            out = prepare_prompt_message(content, source, contexts)
            if "envelope" not in out.data:
                return out
            return PreparedPrompt(_rewrite(out.data, source={"kind": "user"}), out.separate)

        return _placement(place)


class SteeringDropsContexts(Broken):
    name = "steering drops its contexts"
    invariant = "Places drained steering without the contexts attached to its record."
    kills = frozenset({"ENV-060"})

    def patches(self) -> tuple[Patch, ...]:
        def drain(agent: Agent, turn: Any) -> bool:
            drained = list(agent.steering)
            agent.steering.clear()
            for record in drained:
                prepared = prepare_prompt_message(record.content, record.source, ())
                agent._append("steering/message", {"turn": turn.number, **prepared.data})
            return bool(drained)

        return ((Agent, "_drain_steering", drain),)


class EnvelopeSentToModel(Broken):
    name = "envelope sent to the model"
    invariant = "Derives a prompt's model message with its model-hidden envelope appended as text."
    kills = frozenset({"ENV-051"})
    #: What the model receives is the same defect seen by each sentence on the request.
    collateral_ok = frozenset({"ENV-052", "ENV-058", "ENV-059", "ENV-060", "ENV-062", "ENV-065"})

    def patches(self) -> tuple[Patch, ...]:
        def derive_message(event: Any) -> Any:
            message = _derive_message(event)
            data = event.data if isinstance(event.data, Mapping) else {}
            envelope = data.get("envelope")
            if message is None or envelope is None:
                return message
            leaked = {"type": "text", "text": jsstr.stringify(thaw(envelope))}
            return {**message, "content": [*message["content"], leaked]}

        return ((core_module, "derive_message", derive_message),)


class LabelsInTheWarning(Broken):
    name = "labels in the warning's heading"
    invariant = (
        "Names the referenced sessions' labels in the warning's heading, so the warning "
        "changes with what is referenced."
    )
    kills = frozenset({"ENV-001"})
    # the profile's exact warning bytes; and the rendering holds more bytes than the typed
    # claims count (sources plus the reference's fixed framing, D-442): RET-001
    collateral_ok = frozenset({"ENV-009", "RET-001"})

    def patches(self) -> tuple[Patch, ...]:
        def prompt_text(sources: Sequence[RetainedSource]) -> str:
            labels = ", ".join(str(s.data["label"]) for s in sources)
            heading = envelope.PROMPT_PREFIX.replace(
                "## Referenced sessions\n", f"## Referenced sessions: {labels}\n", 1
            )
            return heading + _prompt_text(sources).removeprefix(envelope.PROMPT_PREFIX)

        return ((envelope, "prompt_text", prompt_text),)


_prompt_text = envelope.prompt_text


class PlainJsonInThePrompt(Broken):
    name = "prompt data not tag-safe"
    invariant = (
        "Writes the data region with plain JSON.stringify, so a referenced text can spell "
        "the closing </referenced-sessions> tag."
    )
    kills = frozenset({"ENV-007"})
    # the profile's data region without '<'; and the rendering holds fewer bytes than the
    # typed claims count on the tag-safe serializer (D-442): SER-006
    collateral_ok = frozenset({"ENV-003", "SER-006"})

    def patches(self) -> tuple[Patch, ...]:
        return ((envelope, "stringify_tag_safe", jsstr.stringify),)


class CompactionRangeEndExclusive(Broken):
    name = "compaction range read end-exclusive"
    invariant = (
        "Folds a source's compaction with the reference service's own fold, reading a "
        "replace range's end as exclusive, so the last replaced message stays in the snapshot."
    )
    kills = frozenset({"ENV-012"})
    # The same sentence's captured-request half (ENV-065) and what projection keeps of the
    # revived message (PROJ-001, PROJ-003) break with it.
    collateral_ok = frozenset({"ENV-065", "PROJ-001", "PROJ-003"})

    def patches(self) -> tuple[Patch, ...]:
        def read_log(log: SessionLog) -> SessionSnapshot:
            snapshot = _read_log(log)
            by_seq = {e.seq: e for e in log.events}
            kept: list[Event] = []
            for event in snapshot.events:
                op = event.surface_op
                last = by_seq.get(op.end) if isinstance(op, Replace) and op.end > op.start else None
                if last is not None and last.surface_op == "append":
                    kept.append(last)
                kept.append(event)
            return attrs.evolve(snapshot, events=tuple(kept))

        return ((prepare_ops, "read_log", read_log),)


_read_log = prepare_ops.read_log


MEMBERS = (
    WarningWithoutRepeatClause,
    StatsNotInMeta,
    NoPlacementDeclared,
    DataRegionInDisplay,
    DelimiterInDisplay,
    DelimiterPerPrefix,
    SnapshotAsSeparateMessage,
    SourceNotKept,
    SteeringDropsContexts,
    EnvelopeSentToModel,
    LabelsInTheWarning,
    PlainJsonInThePrompt,
    CompactionRangeEndExclusive,
)
