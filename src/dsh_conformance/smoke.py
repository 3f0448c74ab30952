"""Smoke checks: is the *adapter* sound, before asking whether the implementation conforms.

A handful of protocol-level checks (Bowtie's ``smoke``): the handshake, a schema-valid
reply to one basic op per declared capability, every operation of each declared capability
answering a call with empty arguments (a result or a typed error, never "unknown
operation"), a typed error for an unknown op, a lone-surrogate round trip, ``reset``.
Values are not judged here, only shapes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from attrs import frozen

from dsh_conformance.adapters.contract import (
    CAPABILITIES,
    Adapter,
    AdapterFault,
    ImplementationError,
)
from dsh_conformance.protocol_versions import smoke_notices, typed_field_notices
from dsh_conformance.spec.operations import by_capability


@frozen
class Check:
    name: str
    status: str  # ok | fail | skip | note
    detail: str = ""


#: capability -> (op, args, predicate on the result, what it should be)
BASIC: Mapping[str, tuple[str, dict[str, Any], Callable[[Any], bool], str]] = {
    "uri": ("uri.encode", {"sessionId": "smoke"}, lambda r: isinstance(r, str), "a string"),
    "mention": ("mention.parse", {"text": "hello"}, lambda r: isinstance(r, dict), "an object"),
    "serialization": (
        "json.tagSafe",
        {"value": {"a": "<"}},
        lambda r: isinstance(r, str),
        "a string",
    ),
}


def _attempt(name: str, action: Callable[[], Check]) -> Check:
    try:
        return action()
    except AdapterFault as exc:
        return Check(name, "fail", f"{exc.kind}: {exc.message}")
    except ImplementationError as exc:
        return Check(name, "fail", f"typed error [{exc.code}] {exc.message}")
    except Exception as exc:
        return Check(name, "fail", f"{type(exc).__name__}: {exc}")


def _answers(adapter: Adapter, capability: str, names: list[str]) -> Check:
    """Each op of a declared capability must exist: empty args get a result or a typed error."""
    missing = []
    for name in names:
        try:
            adapter.call(name, {})
        except ImplementationError as exc:
            if exc.code == "DSH_UNSUPPORTED_OPERATION":
                missing.append(name)
    if missing:
        return Check(
            f"{capability} ops",
            "fail",
            f"declared, but {', '.join(missing)} answer(s) DSH_UNSUPPORTED_OPERATION",
        )
    return Check(f"{capability} ops", "ok", f"{len(names)} operation(s) answer")


def _named(impl: Any) -> str:
    """The implementation by its components' versions when it reports them (D-217)."""
    from dsh_conformance.record import components_short

    components = dict(getattr(impl, "component_versions", {}) or {})
    if components:
        return f"{impl.name} [{components_short(components)}]"
    return f"{impl.name} {impl.version}".strip()


def unjudgeable(declared: frozenset[str], tests: Iterable[Any] | None = None) -> set[str]:
    """Seed MUSTs no test the declared capabilities run cites (issue 45 item 5): a test
    runs when it needs only declared capabilities, so a requirement of ``agent`` that a
    ``scenario`` test judges on the host's own loop counts as judged, as the run counts it.
    *tests*: the collected conformance tests (collected here when not given)."""
    from dsh_conformance.spec import load_catalog

    if tests is None:
        from dsh_conformance.runner import collect

        tests = collect()
    musts = {
        r.id
        for r in load_catalog().requirements.values()
        if r.level == "MUST" and r.verdict == "seed"
    }
    judged = {
        rid for test in tests if set(test.capabilities) <= declared for rid in test.requirements
    }
    return musts - judged


def capability_checks(declared: frozenset[str], tests: Iterable[Any] | None = None) -> list[Check]:
    """The declared capabilities, unknown names with the near miss they may mean, and the
    coverage the undeclared ones cost: seed MUSTs no test they run can judge (D-216,
    D-526)."""
    import difflib

    from dsh_conformance.spec import load_catalog

    unknown = sorted(declared - set(CAPABILITIES))
    guesses = []
    for name in unknown:
        near = difflib.get_close_matches(name, list(CAPABILITIES), n=1, cutoff=0.6)
        guesses.append(f"{name} (did you mean {near[0]}?)" if near else name)
    text = ", ".join(sorted(declared)) or "none"
    checks = [
        Check(
            "capabilities",
            "note" if unknown else "ok",
            text + (f"; unknown, so ignored: {', '.join(guesses)}" if unknown else ""),
        )
    ]
    musts = [
        r for r in load_catalog().requirements.values() if r.level == "MUST" and r.verdict == "seed"
    ]
    missing = unjudgeable(declared, tests)
    lost: dict[str, int] = {}
    for r in musts:
        if r.id in missing:
            lost[r.capability or "?"] = lost.get(r.capability or "?", 0) + 1
    if lost:
        parts = ", ".join(f"{cap} {n}" for cap, n in sorted(lost.items(), key=lambda i: -i[1]))
        checks.append(
            Check(
                "coverage",
                "note",
                f"{sum(lost.values())} of {len(musts)} seed MUSTs cannot be judged: no test "
                "the declared capabilities run cites them (own-loop scenario tests count; "
                f"by the capability that judges them on micro-steps: {parts})",
            )
        )
    else:
        checks.append(
            Check("coverage", "ok", f"the declared capabilities judge all {len(musts)} seed MUSTs")
        )
    return checks


def _json(value: object) -> str:
    """A reply as JSON (what crossed the wire), never a Python repr."""
    from dsh_conformance.reporting.escape import show_value

    return show_value(value, 300)


def smoke_checks(
    adapter_name: str, *, timeout: float = 10.0, handshake_timeout: float | None = None
) -> list[Check]:
    from dsh_conformance.adapters.registry import resolve

    adapter: Adapter = resolve(adapter_name)
    if hasattr(adapter, "timeout"):
        adapter.timeout = timeout
    if hasattr(adapter, "startup_timeout"):  # --timeout governs the handshake too (D-311)
        adapter.startup_timeout = handshake_timeout or timeout
    if hasattr(adapter, "validate"):
        adapter.validate = True
    checks: list[Check] = []
    try:
        started = time.perf_counter()
        try:
            handshake = adapter.handshake()
        except (AdapterFault, ImplementationError) as exc:
            return [Check("handshake", "fail", str(exc))]
        elapsed = (time.perf_counter() - started) * 1000
        impl = handshake.implementation
        checks.append(
            Check(
                "handshake",
                "ok",
                f"{_named(impl)} ({impl.language}), protocol {handshake.protocol}, "
                f"{elapsed:.0f} ms",
            )
        )
        checks += capability_checks(handshake.capabilities)
        checks += [Check("protocol", "note", n) for n in smoke_notices(handshake)]  # D-292
        checks += [
            Check("typed fields", "note", n)
            for n in typed_field_notices(adapter.call, handshake.capabilities)
        ]  # D-520
        for capability, (op, args, shape, expected) in BASIC.items():
            if capability not in handshake.capabilities:
                checks.append(Check(op, "skip", f"{capability} not declared"))
                continue

            def basic(
                op: str = op,
                args: dict[str, Any] = args,
                shape: Callable[[Any], bool] = shape,
                expected: str = expected,
            ) -> Check:
                result = adapter.call(op, args)
                if shape(result):
                    return Check(op, "ok", "")
                return Check(op, "fail", f"expected {expected}, got {type(result).__name__}")

            checks.append(_attempt(op, basic))

        for capability, names in by_capability().items():
            if capability in handshake.capabilities:
                checks.append(
                    _attempt(f"{capability} ops", partial(_answers, adapter, capability, names))
                )

        def unknown_op() -> Check:
            try:
                adapter.call("dsh.smoke.no-such-operation", {})
            except ImplementationError as exc:
                if exc.code == "DSH_UNSUPPORTED_OPERATION":
                    return Check("unknown op", "ok", "DSH_UNSUPPORTED_OPERATION")
                return Check(
                    "unknown op", "fail", f"code {exc.code}, not DSH_UNSUPPORTED_OPERATION"
                )
            return Check("unknown op", "fail", "an unknown op succeeded")

        checks.append(_attempt("unknown op", unknown_op))
        if "uri" in handshake.capabilities:

            def surrogate() -> Check:
                sid = "lone \ud800 surrogate"
                back = adapter.call(
                    "uri.decode", {"uri": adapter.call("uri.encode", {"sessionId": sid})}
                )
                if back == sid:
                    return Check("lone surrogate", "ok", "round-trips over the wire")
                return Check(
                    "lone surrogate", "fail", f"came back as {_json(back)} (decision D-14)"
                )

            checks.append(_attempt("lone surrogate", surrogate))
            many = getattr(adapter, "call_many", None)
            if many is not None:

                def pipelined() -> Check:
                    # Sent together, as the protocol allows (D-206): replies in request order.
                    ids = [f"pipelined-{n}" for n in range(8)]
                    got = many([("uri.encode", {"sessionId": sid}) for sid in ids])
                    alone = [adapter.call("uri.encode", {"sessionId": sid}) for sid in ids]
                    if got == alone:
                        return Check("pipelining", "ok", f"{len(ids)} requests in flight")
                    return Check("pipelining", "fail", "pipelined replies differ from lone ones")

                checks.append(_attempt("pipelining", pipelined))

        def reset() -> Check:
            result = adapter.call("reset", {})
            if result is None:
                return Check("reset", "ok", "")
            return Check("reset", "fail", f"reset must answer null, got {_json(result)}")

        checks.append(_attempt("reset", reset))
    finally:
        adapter.close()
    return checks
