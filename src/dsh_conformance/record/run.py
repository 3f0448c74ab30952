"""A whole run read back: header, tests and footer, and what titles say of it.

How the run ended (``complete``, ``interrupted``…, or ``truncated`` without a footer,
D-136) and which implementation ran, named by its components' versions (D-217).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from dsh_conformance.outcomes import Outcome

if TYPE_CHECKING:
    from dsh_conformance.record.result import TestResult  # a value, never built here


@frozen
class RunRecord:
    """A whole run, read back from its JSON Lines file."""

    header: Mapping[str, Any]
    tests: tuple[TestResult, ...]
    footer: Mapping[str, Any] | None
    source: str = ""

    @property
    def truncated(self) -> bool:
        return self.footer is None

    @property
    def adapter_label(self) -> str:
        """What ran, for titles: a multi-package implementation is named by its
        components' versions, never by one package's version (D-217)."""
        adapter = self.header.get("adapter", {})
        impl = adapter.get("implementation", {})
        name = impl.get("name") or adapter.get("name") or "?"
        version = impl.get("version")
        if self.components:
            return f"{name} [{components_short(self.components)}]"
        return f"{name} {version}" if version else str(name)

    @property
    def components(self) -> dict[str, str]:
        """name -> version of every package the implementation loaded (handshake, D-187)."""
        adapter = self.header.get("adapter") or {}
        impl = adapter.get("implementation") or {} if isinstance(adapter, Mapping) else {}
        found = impl.get("components") if isinstance(impl, Mapping) else None
        if not isinstance(found, Mapping):
            return {}
        return {str(k): str(v) for k, v in sorted(found.items())}

    @property
    def components_text(self) -> str:
        """The components grouped by version, most packages first: ``a, b 0.1.1-rc.2; c 4.0.4``.

        A partial release reads at a glance: which packages moved, which stayed."""
        return components_text(self.components)

    @property
    def ending(self) -> str:
        """How the run ended: the footer's status, or ``truncated`` without a footer."""
        return "truncated" if self.footer is None else str(self.footer.get("status", ""))

    @property
    def ending_text(self) -> str:
        """The ending for people: ``interrupted by SIGINT``, ``aborted: why``…"""
        footer = self.footer or {}
        if self.footer is None:
            return "truncated: no footer (the harness was killed or crashed mid-run)"
        if self.ending == "interrupted":
            return f"interrupted by {footer.get('signal', 'a signal')}"
        reason = footer.get("reason")
        return f"{self.ending}: {reason}" if reason else self.ending

    def totals(self) -> Counter[Outcome]:
        return Counter(t.outcome for t in self.tests)

    @property
    def expectation_problems(self) -> list[dict[str, Any]]:
        return list((self.footer or {}).get("expectation_problems", []))

    @property
    def suite_problems(self) -> list[dict[str, Any]]:
        """What the harness could not write as it meant to (D-215): each a visible
        problem of the run, never a record the suite refuses."""
        return list((self.footer or {}).get("suite_problems", []))

    def by_nodeid(self) -> dict[str, TestResult]:
        return {t.nodeid: t for t in self.tests}


def components_text(components: Mapping[str, str]) -> str:
    """``components`` grouped by version (see ``RunRecord.components_text``); '' when none."""
    groups: dict[str, list[str]] = {}
    for name, version in sorted(components.items()):
        groups.setdefault(version, []).append(name)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return "; ".join(f"{', '.join(names)} {version}" for version, names in ordered)


def components_short(components: Mapping[str, str]) -> str:
    """``components`` in a title's room: a version shared by more than two packages is
    counted (``14 packages 0.1.0-rc.7``), the others are named without their scope."""
    groups: dict[str, list[str]] = {}
    for name, version in sorted(components.items()):
        groups.setdefault(version, []).append(name.rpartition("/")[2])
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return "; ".join(
        f"{len(names)} packages {version}" if len(names) > 2 else f"{', '.join(names)} {version}"
        for version, names in ordered
    )
