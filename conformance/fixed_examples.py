"""The explicit examples of the seed MUST properties (D-400).

A property finds a defect only when a draw happens to hit it; a seed MUST's verdict must
not (issue 41).  Each property that is some seed MUST's only judge, or whose defect a kit
hides from its other tests, gets here the inputs that break the way the kits and the
published release break it.  Hypothesis runs them first, on every seed and profile (the
``fixed`` profile runs nothing else), and when one fails it does not generate at all, so
the verdict is the fixed examples'.  Each entry says which wrong implementation it
catches and why a conforming one passes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from hypothesis import example

from dsh_conformance.conformance import fixed_sessions as logs
from dsh_conformance.conformance.strategies_sessions import COMPACT

F = TypeVar("F", bound=Callable[..., Any])


def examples(*cases: Mapping[str, Any]) -> Callable[[F], F]:
    """``@example(**case)`` for each of *cases*, run in the order given."""

    def apply(test: F) -> F:
        for case in reversed(cases):
            test = example(**case)(test)
        return test

    return apply


#: test_projection_keeps_exactly_what_the_seed_keeps (PROJ-001, PROJ-004), one log for
#: both: Hypothesis reports one failing explicit example per failure origin, and the
#: soft checks of one example report every sentence it breaks.
PROJECTION: Final = (
    {
        "case": logs.log(
            "s",
            logs.user("U1:first"),
            # PROJ-001: a checkpoint after an excluded event keeps its checkpoint flag, and
            # so does every message after it.  rc.8 flags by position in the unfiltered
            # surface, so an injected context before a checkpoint moves the flag on to the
            # next message.  A host that flags each message by its own source passes.
            logs.context("C2:workspace"),
            logs.checkpoint("K3:summary"),
            logs.user("U4:next"),
            logs.assistant("A5:answer", "R6:"),
            # PROJ-004: a steering message from the compact plugin is not a checkpoint and
            # not projected (D-30); rc.8 projects it as a checkpoint.
            logs.plugin_steering("P7:steer", COMPACT),
        )
    },
)

#: test_context_framing_and_data (ENV-001, ENV-004, ENV-005, ENV-007, PREP-001 ...): one
#: source, so every check of the prepared context is judged once without generation.
#: ENV-004 catches a context that does not declare prompt-prefix placement (rc.8: none);
#: ENV-005 one without a metadata record per source (rc.8: ``meta`` empty).  Any layout
#: and wording of the context passes (D-230).
FRAMING: Final = (
    {
        "cases": [logs.log("s1", logs.user("U1:hello"), logs.assistant("A2:hi", "R3:"))],
        "labels": ["first", "second", "third"],
    },
)

#: test_retention_properties (RET-002, RET-003 ...): (source, cap, label).
RETENTION: Final = (
    # RET-003: a cut text omits exactly omittedBytes.  Every tail of this text starts with
    # U+FEFF, which rc.8's decoder strips from the kept tail (TextDecoder's default) while
    # still counting it as kept.  A host cutting anywhere on character boundaries, with any
    # marker, passes; one that cannot fit fails only where its own measure says it must.
    {"inputs": (logs.log("source", logs.user("U1:" + "\ufeff" * 30 + "z")), 170, "")},
    # RET-002: the retained messages are the projected ones; the cap fits them whole.
    # rc.8 retains the compact plugin's steering message as a checkpoint (D-30).
    {
        "inputs": (
            logs.log(
                "source",
                logs.assistant("A1:answer", "R2:"),
                logs.plugin_steering("P3:steer", COMPACT),
            ),
            200,
            "",
        )
    },
    # SER-006: the serializer's bytes drive the accounting.  Each "<" of this markup takes
    # six bytes as tag-safe JSON ("\u003c"), so the source's JSON takes at least 325 bytes.
    # A host counting the raw texts (123 bytes) reports a serializedBytes below that; a
    # host reporting the size of any serialization it really writes measures no less.
    {"inputs": (logs.log("source", logs.user("U1:" + "<b>" * 40)), 4096, "")},
    # RET-007: truncated is true when a message was dropped and no text sliced.  The source
    # takes about 460 bytes, the newest message alone about 120: under 300 the old one
    # goes whole.  A host that counts only slices as truncation (the zoo's
    # DroppedNotTruncated) reports false; any host whose statistics describe what it
    # dropped and cut passes, whichever it chose (D-494: a kill by a fixed example holds at
    # every profile's count).
    {"inputs": (logs.log("source", logs.user("U1:" + "x" * 300), logs.user("U2:ok")), 300, "")},
)

#: test_later_source_changes_do_not_reach_the_prepared_context (PREP-008, PREP-005): a
#: source read once, then appended to, replaced and deleted after the read.  A host that
#: reads the store again after the read (or renders it late) shows the change; one that
#: renders what it read passes.
ISOLATION: Final = tuple(
    {"case": logs.log("source", logs.user("first"), logs.user("second")), "mutation": mutation}
    for mutation in (
        {"kind": "mutateAfterRead", "append": [logs.user_event("later source mutation")]},
        {"kind": "mutateAfterRead", "replace": logs.log("source", logs.user("replaced")).session},
        {"kind": "mutateAfterRead", "delete": True},
    )
)
