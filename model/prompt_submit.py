"""The ``agent/prompt-submit`` waterfall, with declarative listeners.

Seed 000, "Message ownership": a claimed ordinary message exposes its attached contexts as
the default additional contexts; a block writes neither user message nor contexts; the
waterfall's returned allow is authoritative, so a listener wrapping ``next()`` preserves
downstream content and contexts unless it intentionally replaces them (INBOX-010..INBOX-016).

Listeners are JSON specs (so the same chain can be installed in any implementation through
the adapter).  The first installed listener is outermost; ``next()`` calls the next one and
finally the default thunk.  Kinds (D-66):

``pass``           return ``next()`` unchanged
``allow``          return ``{kind: allow, content?, additionalContexts?}`` without ``next()``
``rewrite``        ``d = next()``; an allow becomes ``{...d, content}`` (contexts kept)
``add-contexts``   ``d = next()``; an allow gains ``contexts`` (``position`` prepend|append)
``drop-contexts``  ``d = next()``; an allow keeps only its content
``block``          return ``{kind: block, reason}`` without ``next()``
``throw``          fail (the turn ends ``error`` at step 0)

``once: true`` removes a listener after its first invocation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.inbox import snapshot

KINDS: Final = frozenset(
    {"pass", "allow", "rewrite", "add-contexts", "drop-contexts", "block", "throw"}
)
TURN_STOP_KINDS: Final = frozenset({"stop", "none"})


@frozen
class Allow:
    """``{kind: 'allow', content?, additionalContexts?}`` (None = key absent)."""

    content: Any = None
    additional_contexts: tuple[Any, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        from dsh_conformance.model.frozen import thaw

        out: dict[str, Any] = {"kind": "allow"}
        if self.content is not None:
            out["content"] = thaw(self.content)
        if self.additional_contexts is not None:
            out["additionalContexts"] = thaw(self.additional_contexts)
        return out


@frozen
class Block:
    """``{kind: 'block', reason}``."""

    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "block", "reason": self.reason}


Decision = Allow | Block


class ListenerFailure(Exception):
    """A ``throw`` listener fired; caught by the driver, never escapes the model."""

    def __init__(self, message: str, code: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@frozen
class Listener:
    """One installed listener: an event name and its frozen JSON spec."""

    event: str
    spec: FrozenDict

    @property
    def kind(self) -> str:
        return str(self.spec["kind"])

    @property
    def once(self) -> bool:
        return bool(self.spec.get("once", False))

    def to_json(self) -> dict[str, Any]:
        from dsh_conformance.model.frozen import thaw

        out: dict[str, Any] = thaw(self.spec)
        return out


def _bad(message: str) -> DshError:
    return DshError(ErrorCode.INVALID_ARGUMENT, message)


def parse_listener(spec: object) -> Listener:
    """Validate and freeze a listener spec ``{event?, kind, ...}`` (INVALID_ARGUMENT)."""
    frozen_spec = snapshot(spec)
    if not isinstance(frozen_spec, Mapping):
        raise _bad("a listener spec must be an object")
    event = frozen_spec.get("event", "prompt-submit")
    kind = frozen_spec.get("kind")
    if event == "prompt-submit":
        if kind not in KINDS:
            raise _bad(f"unknown prompt-submit listener kind {kind!r}")
        if kind in {"rewrite"} and "content" not in frozen_spec:
            raise _bad("a rewrite listener needs content")
        if kind == "add-contexts" and not isinstance(frozen_spec.get("contexts"), tuple):
            raise _bad("an add-contexts listener needs a contexts array")
        if kind == "block" and not isinstance(frozen_spec.get("reason"), str):
            raise _bad("a block listener needs a string reason")
    elif event == "turn-stop":
        if kind not in TURN_STOP_KINDS:
            raise _bad(f"unknown turn-stop listener kind {kind!r}")
    else:
        raise _bad(f"unknown listener event {event!r}")
    return Listener(str(event), FrozenDict(frozen_spec))


def run_waterfall(
    listeners: Sequence[Listener],
    default: Decision,
    on_invoke: Callable[[Listener], None],
) -> Decision:
    """Compose *listeners* (first = outermost) around the *default* decision.

    ``on_invoke`` is told about each listener that actually runs (``once`` bookkeeping).
    Raises ``ListenerFailure`` for a ``throw`` listener.
    """

    def call(index: int) -> Decision:
        if index == len(listeners):
            return default
        listener = listeners[index]
        on_invoke(listener)
        spec = listener.spec
        kind = listener.kind
        if kind == "pass":
            return call(index + 1)
        if kind == "allow":
            contexts = spec.get("additionalContexts")
            return Allow(spec.get("content"), None if contexts is None else tuple(contexts))
        if kind == "block":
            return Block(str(spec["reason"]))
        if kind == "throw":
            code = spec.get("code")
            raise ListenerFailure(
                str(spec.get("message", "prompt-submit listener failed")),
                None if code is None else str(code),
            )
        downstream = call(index + 1)
        if not isinstance(downstream, Allow):
            return downstream
        if kind == "rewrite":
            return Allow(spec["content"], downstream.additional_contexts)
        if kind == "drop-contexts":
            return Allow(downstream.content, None)
        # add-contexts
        own = tuple(spec["contexts"])
        rest = downstream.additional_contexts or ()
        merged = rest + own if spec.get("position") == "append" else own + rest
        return Allow(downstream.content, merged)

    return call(0)
