"""A session's conformance items and its implementation under test.

Shared by the pytest plugin, the harness and the parallel controller; it imports none
of them, so the three form no import circle (plugin -> harness, parallel -> suite).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from dsh_conformance.early_start import EARLY_KEY

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from dsh_conformance.adapters.client import Implementation
    from dsh_conformance.guard import FaultGuard
    from dsh_conformance.spec import Requirement

IMPLEMENTATION_KEY = pytest.StashKey["Implementation"]()
ORACLE_KEY = pytest.StashKey["Implementation"]()
GUARD_KEY = pytest.StashKey["FaultGuard"]()
#: The ``workerinput`` key naming a pytest-xdist worker's record part (D-138).
PART_KEY: Final = "dsh_record_part"


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is a pytest-xdist worker (it writes a part, not the record)."""
    return hasattr(config, "workerinput")


def record_path(config: pytest.Config) -> str | None:
    """Where this process writes its record: a worker's part, or ``--dsh-record``."""
    from dsh_conformance.options import of_config

    workerinput = getattr(config, "workerinput", None)
    if isinstance(workerinput, dict) and workerinput.get(PART_KEY):
        return str(workerinput[PART_KEY])
    return of_config(config).record


@cache
def conformance_root() -> Path:
    import dsh_conformance.conformance as pkg

    return Path(pkg.__file__).resolve().parent


@cache
def resolved(path: str) -> Path:
    """``Path(path).resolve()``, once per path: a collection asks for each of ~500 items
    several times, and resolving is a syscall per component."""
    return Path(path).resolve()


def is_conformance_item(item: pytest.Item) -> bool:
    return conformance_root() in resolved(str(item.path)).parents


def requirement_ids(item: pytest.Item) -> list[str]:
    """The requirement ids an item declares through ``@pytest.mark.req``."""
    ids: list[str] = []
    for mark in item.iter_markers("req"):
        ids.extend(str(a) for a in mark.args)
    return sorted(set(ids))


def capabilities_of(item: pytest.Item) -> tuple[str, ...]:
    """The capabilities an item needs through ``@pytest.mark.capability``, sorted."""
    return tuple(sorted({str(m.args[0]) for m in item.iter_markers("capability")}))


def stable_test_id(item: pytest.Item, root: Path) -> str:
    """``conformance/<file>::<name>[<param>]``, the same wherever the suite is installed."""
    path = resolved(str(item.path))
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    _, sep, rest = item.nodeid.partition("::")
    return f"conformance/{rel}{sep}{rest}"


def check_traceability(items: Sequence[pytest.Item], catalog: Mapping[str, Requirement]) -> None:
    """Every conformance test cites known requirement ids (else a usage error)."""
    problems: list[str] = []
    for item in items:
        ids = requirement_ids(item)
        if not ids:
            problems.append(f"{item.nodeid}: declares no requirement (add @pytest.mark.req(...))")
        unknown = [i for i in ids if i not in catalog]
        if unknown:
            problems.append(
                f"{item.nodeid}: cites unknown requirement id(s) {', '.join(unknown)} "
                "(add them to spec/requirements/*.toml or fix the id)"
            )
    if problems:
        raise pytest.UsageError("requirement traceability failed:\n  " + "\n  ".join(problems))


def implementation(config: pytest.Config) -> Implementation:
    """The implementation under test, created on first use and kept for the session."""
    if IMPLEMENTATION_KEY not in config.stash:
        from dsh_conformance.adapters.client import Implementation
        from dsh_conformance.adapters.registry import resolve
        from dsh_conformance.guard import FaultGuard
        from dsh_conformance.options import of_config

        options = of_config(config)
        name = options.adapter
        early = config.stash.get(EARLY_KEY, None)  # launched by the CLI (D-537)
        adapter = early.take(name) if early is not None else None
        if adapter is None:
            adapter = resolve(name)
        timeout = options.timeout
        if timeout is not None and hasattr(adapter, "timeout"):
            adapter.timeout = float(timeout)
        handshake = options.handshake_timeout or timeout
        if handshake is not None and hasattr(adapter, "startup_timeout"):
            adapter.startup_timeout = float(handshake)  # --timeout governs it too (D-311)
        if not hasattr(adapter, "argv"):  # in-process: a hang must not stop the run (D-164)
            from dsh_conformance.adapters.deadline import DEFAULT_TIMEOUT, InProcessDeadline

            adapter = InProcessDeadline(
                adapter, float(timeout) if timeout is not None else DEFAULT_TIMEOUT
            )
        if options.validate and hasattr(adapter, "validate"):
            adapter.validate = True
        guarded = FaultGuard(adapter)
        config.stash[GUARD_KEY] = guarded
        config.stash[IMPLEMENTATION_KEY] = Implementation(guarded, name)
    return config.stash[IMPLEMENTATION_KEY]


def guard(config: pytest.Config) -> FaultGuard | None:
    """The fault guard around the implementation under test, once it exists."""
    return config.stash.get(GUARD_KEY, None)


def oracle(config: pytest.Config) -> Implementation:
    """The reference model, always in-process: the oracle for differential tests."""
    if ORACLE_KEY not in config.stash:
        from dsh_conformance.adapters.client import Implementation
        from dsh_conformance.adapters.reference import ReferenceAdapter

        config.stash[ORACLE_KEY] = Implementation(ReferenceAdapter(), "reference", validate=False)
    return config.stash[ORACLE_KEY]


#: The name the reference model gives in its handshake, in-process or served.
REFERENCE_NAME = "dsh-conformance reference model"
SELF_COMPARISON = "self-comparison: the implementation is the reference model"


def footer_status(session: pytest.Session) -> dict[str, str]:
    """What the footer says about how the run ended (D-136): ``complete``, ``stopped``
    (``-x``), ``interrupted`` with the signal, or ``aborted`` with why."""
    from dsh_conformance import signals

    received = signals.received()
    if received is not None:
        return {"status": "interrupted", "signal": received}
    status = int(session.exitstatus)
    if status == pytest.ExitCode.INTERRUPTED:
        reason = str(session.shouldfail or session.shouldstop or "") or "the run was cut short"
        return {"status": "aborted", "reason": reason}
    if status == pytest.ExitCode.INTERNAL_ERROR:
        return {"status": "aborted", "reason": "internal error (see pytest.log)"}
    if session.shouldstop:
        return {"status": "stopped", "reason": str(session.shouldstop)}
    return {"status": "complete"}
