"""What the record keeps of one test while it runs: its outcome so far, its message, its
traceback, the request in flight at a fault, the failure as a conformance failure.

``Evidence`` is filled phase by phase (setup, call, teardown) and becomes the test's
record line when the test finishes (``recording.result_of``).  A crash or timeout is
told by the fault itself and the request that caused it (D-180); a result no check
could read by its op, arguments, result and reason (D-212); any other failure by its
failed checks (``failure.build``, D-310).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from attrs import define, field

from dsh_conformance import failure
from dsh_conformance.outcomes import Outcome

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pytest

    from dsh_conformance.adapters.contract import AdapterFault, UnreadableResult
    from dsh_conformance.guard import FaultGuard

#: Longest failure text kept in the record per test.
LONGREPR_LIMIT: Final = 8000
#: Longest message kept in the record per test (reports show it whole: D-179).
MESSAGE_LIMIT: Final = 4000
#: Longest JSON of the request in flight shown in a message (the record keeps it whole).
REQUEST_SHOWN: Final = 1000

_FOREIGN: Final = ("site-packages", "/_pytest/", "/pluggy/", "/hypothesis/")


@define
class Evidence:
    """One running test's outcome and what its record line will say."""

    outcome: Outcome | None = None
    detail: str = ""
    message: str = ""
    longrepr: str = ""
    duration: float = 0.0
    blame: tuple[str, ...] = ()
    request: str = ""
    failure: dict[str, Any] = field(factory=dict)
    #: A property its non-strict ``xfail`` entry expects to fail met no failure (D-422).
    not_reproduced: bool = False
    #: What the manifest lets the test's failure blame (D-421); empty for any.
    expected_blame: tuple[str, ...] = ()

    def note(self, line: str) -> None:
        """Start the message with *line*: why the manifest settled the outcome so."""
        self.message = short(f"{line}\n{self.message}".strip(), MESSAGE_LIMIT)


def short(text: str, limit: int) -> str:
    """*text* cut to *limit* characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_traceback(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The traceback from the test function down, in pytest's short style: no fixture
    reprs, no pytest, pluggy or Hypothesis frames, no frames that hide themselves."""

    def frames(info: pytest.ExceptionInfo[BaseException]) -> Any:
        tb = info.traceback
        tb = tb.cut(path=item.path) or tb
        kept = tb.filter(lambda e: not any(f in str(e.path) for f in _FOREIGN)) or tb
        return kept.filter(info)

    try:
        return str(excinfo.getrepr(style="short", funcargs=False, tbfilter=frames))
    except Exception:  # a traceback that cannot be rendered must not lose the failure
        return excinfo.exconly()


def skipped(state: Evidence, reason: str) -> None:
    """A skipped test says why (the ``Skipped:`` pytest adds is not part of it)."""
    state.message = short(reason.removeprefix("Skipped: "), MESSAGE_LIMIT)


def failed(
    state: Evidence,
    exc: BaseException | None,
    traceback: str,
    sentences: Mapping[str, str],
    replay: str,
) -> None:
    """A failure as its checks tell it: message, cleaned traceback, ``failure``."""
    state.message = short(
        failure.message(exc) if exc is not None else "the test failed", MESSAGE_LIMIT
    )
    state.longrepr = short(failure.clean(traceback), LONGREPR_LIMIT)
    state.failure = failure.build(exc, state.blame, sentences, replay, state.longrepr)


def faulted(state: Evidence, fault: AdapterFault, guard: FaultGuard | None) -> None:
    """A crash or timeout told by the fault (its exit status and stderr tail, never
    "FlakyFailure") and the request in flight that caused it (D-180)."""
    from dsh_conformance.guard import REQUEST_ATTR

    text = f"{fault.kind}: {fault.message}"
    request = getattr(fault, REQUEST_ATTR, None)  # the request of *this* fault
    if request is None and guard is not None:
        request = guard.fault_request
    if request is not None:
        from dsh_conformance.reporting.escape import json_text, show_value

        state.request = json_text(request)
        shown = show_value(request, REQUEST_SHOWN)
        text = f"{fault.kind} (request in flight: {shown}): {fault.message}"
    state.message = short(text, MESSAGE_LIMIT)
    state.longrepr = short(f"{text}\n\n{state.longrepr}", LONGREPR_LIMIT)
    state.failure = {**state.failure, "checks": [], "message": text}


def unreadable(state: Evidence, result: UnreadableResult) -> None:
    """A result the check could not read: the op, its arguments, the result, why (a
    protocol problem of the run, not a requirement's)."""
    from dsh_conformance.reporting.escape import json_text, show_value

    shown = {
        "op": str(result.op),
        "args": result.arguments,
        "result": result.result,
        "reason": str(result.reason),
    }
    try:
        state.request = json_text(shown)
    except (TypeError, ValueError):
        state.request = json_text(
            {**shown, "args": repr(shown["args"]), "result": repr(shown["result"])}
        )
    text = (
        f"protocol: the result of {result.op} cannot be read: {result.reason} "
        f"(args {show_value(result.arguments, REQUEST_SHOWN)}, "
        f"result {show_value(result.result, REQUEST_SHOWN)})"
    )
    state.message = short(text, MESSAGE_LIMIT)
    state.longrepr = short(f"{text}\n\n{state.longrepr}", LONGREPR_LIMIT)
    state.failure = {**state.failure, "checks": [], "message": state.message}
