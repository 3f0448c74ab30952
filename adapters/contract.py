"""The adapter contract: the only way a conformance test touches an implementation.

An implementation declares who it is and what it can do in a handshake, then answers
JSON-shaped operations: an op name and JSON arguments in, a JSON result or a typed error
``{code, message}`` out.  Because every call is plain JSON, the same test runs against an
in-process adapter or a process on the other end of a pipe (spec/schemas/protocol.json).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from attrs import field, frozen

#: Version of the adapter protocol (spec/schemas/protocol.json).  Bumped when a capability
#: is renamed or split or a field changes meaning (D-290; docs/protocol-changelog.md).
PROTOCOL_VERSION = 2

#: Every version the harness still runs, newest first: the handshake offers them in this
#: order (D-291); src/dsh_conformance/protocol_versions.py tells an older host what it misses.
SUPPORTED_PROTOCOLS: tuple[int, ...] = (2, 1)

#: Every capability an implementation may declare, with the ops it unlocks.
CAPABILITIES: Mapping[str, str] = {
    "uri": "encode, decode and format dsh-session: URIs",
    "mention": "parse text for Markdown mentions and bare URIs",
    "serialization": "tag-safe JSON serialization",
    "projection": "project a session surface to conversation items",
    "retention": "per-source byte retention of a projected snapshot",
    "retention.truncate": "the head/tail slice of one text with its notice, on its own",
    "prepare": "prepare() of references into one prompt-prefix context",
    "candidates": "candidate discovery for mention completion",
    "agent": "an agent with an inbox, a scripted model and captured requests",
    "agent.submit": "the host flow: prepare, then send or steer the prepared message",
    "agent.display": "the host view of a session: display content, source lists, a title",
    "agent.release-placement": "the published release's separate-message placement",
    "scenario": "run one scripted conversation on the agent's own loop (docs/scenario.md)",
    "side": "side sessions: fork, advisor framing, merge-back",
    "side.deny-gate": "a tools pre-execute deny gate for read-only side sessions",
    "side.scenario": "run one side session on the agent's own loop (docs/side-scenario.md)",
}


def _frozen_strings(items: Iterable[str]) -> frozenset[str]:
    return frozenset(items)


def _pairs(items: Mapping[str, str] | Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    pairs = items.items() if isinstance(items, Mapping) else items
    return tuple(sorted((str(k), str(v)) for k, v in pairs))


@frozen
class ImplementationInfo:
    """Who an implementation is, as reported in its handshake.

    ``components`` (optional, D-187): the version of every package the implementation
    loaded, for an implementation assembled from several (the upstream release is ~26
    npm packages whose versions move independently); ``version`` stays the headline one.
    """

    name: str
    language: str
    version: str = ""
    homepage: str = ""
    components: tuple[tuple[str, str], ...] = field(default=(), converter=_pairs)

    @property
    def component_versions(self) -> dict[str, str]:
        return dict(self.components)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "language": self.language,
            "version": self.version,
            "homepage": self.homepage,
        }
        if self.components:
            data["components"] = self.component_versions
        return data


@frozen
class Handshake:
    """The reply to ``handshake``: protocol version, identity and declared capabilities."""

    implementation: ImplementationInfo
    capabilities: frozenset[str] = field(converter=_frozen_strings)
    protocol: int = PROTOCOL_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "implementation": self.implementation.to_json(),
            "capabilities": sorted(self.capabilities),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Handshake:
        impl = data["implementation"]
        return cls(
            implementation=ImplementationInfo(
                name=str(impl["name"]),
                language=str(impl["language"]),
                version=str(impl.get("version", "")),
                homepage=str(impl.get("homepage", "")),
                components=dict(impl.get("components") or {}),
            ),
            capabilities=frozenset([str(c) for c in data["capabilities"]]),
            protocol=int(data["protocol"]),
        )


class ImplementationError(Exception):
    """The implementation answered an operation with a typed error (a *caught* failure)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message


def call_each(
    call: Callable[[str, Mapping[str, Any]], Any], calls: Sequence[tuple[str, Mapping[str, Any]]]
) -> list[Any]:
    """*calls* one by one through *call*: each result, or the ``ImplementationError`` it
    answered with, in order.  What ``call_many`` means for an adapter that has no batch of
    its own; an ``AdapterFault`` still ends the whole batch."""
    out: list[Any] = []
    for op, args in calls:
        try:
            out.append(call(op, args))
        except ImplementationError as exc:
            out.append(exc)
    return out


class AdapterFault(Exception):
    """The adapter itself broke: crash, timeout, garbage or protocol violation (*uncaught*).

    ``kind`` is one of ``crash``, ``timeout``, ``garbage``, ``protocol``; ``code``, when
    the transport can name the violation, is a stable ``DSH_*`` code for it (a reply out
    of request order, a reply to no request in flight, a line nested too deeply).
    """

    def __init__(self, kind: str, message: str, code: str = "") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.code = code


@runtime_checkable
class Adapter(Protocol):
    """What the suite needs from an implementation."""

    def handshake(self) -> Handshake:
        """Identity and capabilities (called once, before any operation)."""
        ...

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        """Run one operation; raise ImplementationError or AdapterFault on failure."""
        ...

    def close(self) -> None:
        """Release the implementation (end the process, drop state)."""
        ...


class UnreadableResult(Exception):
    """A result a check cannot read for its meaning: it breaks the op's result schema, or
    lacks what the check must read.  A protocol problem of the run, never a requirement's
    failure (issue 36): the check names the op, the arguments, the result and why."""

    def __init__(self, op: str, args: object, result: object, reason: str) -> None:
        super().__init__(f"the result of {op} cannot be read: {reason}")
        self.op = op
        #: Not ``args``: that is BaseException's own tuple of constructor arguments.
        self.arguments = args
        self.result = result
        self.reason = reason
