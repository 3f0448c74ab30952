"""Protocol versions: what changed between them, and what a host on an older one misses.

A host written against an older protocol keeps running when a capability is renamed or
split, but the tests that moved to the new name go ``unsupported`` without a trace
(issue 37: 19 tests left ``retention`` for ``retention.truncate`` and nothing told the
adapters).  So such a change bumps the version (decision D-290), the handshake negotiates
it (D-291), and a host that answers an older version is told, by ``smoke`` and at the top
of ``run``, which tests it now misses and what to declare (D-292).  The history is
docs/protocol-changelog.md.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from attrs import frozen

from dsh_conformance.adapters.contract import PROTOCOL_VERSION, Handshake


@frozen
class Change:
    """A capability renamed or split in ``version``: its tests moved from ``before``."""

    version: int
    before: str
    after: str
    kind: str  # split | rename
    decision: str


#: Every rename or split, oldest first (docs/protocol-changelog.md tells the whole story).
CHANGES: tuple[Change, ...] = (Change(2, "retention", "retention.truncate", "split", "D-181"),)


def missed_changes(handshake: Handshake) -> list[Change]:
    """The changes an older host declares the old name of and not the new one."""
    declared = handshake.capabilities
    return [
        change
        for change in CHANGES
        if handshake.protocol < change.version
        and change.before in declared
        and change.after not in declared
    ]


def notices(handshake: Handshake, count: Callable[[str], int]) -> list[str]:
    """One line per missed change: how many tests it costs and what to declare.

    ``count(capability)`` is the number of selected tests that need *capability*.
    """
    lines = []
    for change in missed_changes(handshake):
        how = "split it off" if change.kind == "split" else "renamed it"
        lines.append(
            f"protocol {handshake.protocol} host: declare `{change.after}` to run the "
            f"{count(change.after)} test(s) that moved from `{change.before}` when protocol "
            f"{change.version} {how} ({change.decision}), then answer the handshake with "
            f"protocol {PROTOCOL_VERSION} (docs/protocol-changelog.md)"
        )
    if handshake.protocol < PROTOCOL_VERSION and not lines:
        lines.append(
            f"protocol {handshake.protocol} host: nothing missed; answer the handshake with "
            f"protocol {PROTOCOL_VERSION} (docs/protocol-changelog.md)"
        )
    return lines


def collected_count(capability: str) -> int:
    """Conformance tests needing *capability*, by collecting the suite (a few seconds)."""
    from dsh_conformance.runner import collect

    return sum(capability in test.capabilities for test in collect())


def smoke_notices(handshake: Handshake) -> list[str]:
    """What ``smoke`` says about the handshake's version (collects only when needed)."""
    return notices(handshake, collected_count) if handshake.protocol < PROTOCOL_VERSION else []


def _needs(items: Iterable[pytest.Item], capability: str) -> int:
    return sum(
        any(m.args and m.args[0] == capability for m in item.iter_markers("capability"))
        for item in items
    )


class RunNotice:
    """A pytest plugin for ``run``: the notices, on stderr, once the selection is known."""

    @pytest.hookimpl(tryfirst=True)  # before the progress bar takes the terminal
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from dsh_conformance import suite

        if not session.items or session.config.option.collectonly:
            return
        try:
            handshake = suite.implementation(session.config).handshake
        except Exception:  # the harness reports a failed start with its own exit status
            return
        items: list[Any] = list(session.items)
        for line in notices(handshake, lambda capability: _needs(items, capability)):
            sys.stderr.write(f"dsh-conformance: {line}\n")


#: The optional typed fields a host of the published protocol 2 answers without (D-520):
#: (capability, op, arguments of a small call, field).
TYPED_FIELDS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    (
        "prepare",
        "prepare",
        {
            "target": {"id": "smoke-target"},
            "content": [{"type": "text", "text": "what does @smoke say?"}],
            "references": [{"sessionId": "smoke"}],
            "sessions": {
                "smoke": {
                    "header": {"version": 0, "id": "smoke", "createdAt": 0},
                    "events": [
                        {
                            "type": "user/message",
                            "seq": 0,
                            "time": 0,
                            "surfaceOp": "append",
                            "data": {
                                "content": [{"type": "text", "text": "hello"}],
                                "source": {"kind": "user"},
                            },
                        }
                    ],
                }
            },
        },
        "sources",
    ),
    (
        "retention",
        "retention.retain",
        {
            "session": {"header": {"version": 0, "id": "smoke", "createdAt": 0}, "events": []},
            "label": "smoke",
            "maxBytes": 65536,
        },
        "source",
    ),
)


def typed_field_notices(
    call: Callable[[str, dict[str, Any]], Any], declared: Iterable[str]
) -> list[str]:
    """What ``smoke`` says of a host that answers without the optional typed fields (D-520):
    the suite reads their meaning from the fields protocol 2 asked for and the rendering;
    what it cannot recover there leaves only the checks needing it unjudged."""
    lines = []
    for capability, op, args, name in TYPED_FIELDS:
        if capability not in declared:
            continue
        try:
            result = call(op, args)
        except Exception:  # the op's own check reports it
            continue
        if isinstance(result, dict) and name not in result:
            lines.append(
                f"{op} answers without the typed `{name}` (optional, as in the published "
                f"protocol 2): the tests of `{capability}` read its meaning from the "
                "rendering and the protocol-2 fields instead, and a field that cannot be "
                f"recovered there leaves only its checks unjudged; add `{name}` for every "
                "check (docs/protocol-reference.md, D-520)"
            )
    return lines
