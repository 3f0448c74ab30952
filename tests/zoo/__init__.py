"""The zoo: broken implementations, each breaking exactly one invariant (issue 11).

Every member is the reference model with one defect a host team could plausibly ship,
declared with the invariant it breaks and the requirement ids the suite must blame
(``kills``).  Members live in one module per area; each area names the slice of the
suite that judges it (requirement globs, capabilities, keyword), so a member is run
against its whole area and any other failing id there shows up as collateral.
Select one as ``python:zoo.<area>:<Class>`` with ``tests/`` on the path;
``tools/kill_matrix.py`` runs them all and writes ``reports/kill-matrix.{md,json}``.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from attrs import field, frozen


def _strings(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(items)


@frozen
class Area:
    """The part of the suite a member of this area is run against."""

    requirements: tuple[str, ...] = field(default=(), converter=_strings)
    capabilities: tuple[str, ...] = field(default=(), converter=_strings)
    keyword: str = ""


#: Area modules, in the order the matrix lists them.
AREAS: tuple[str, ...] = (
    "uri",
    "mention",
    "serialization",
    "projection",
    "retention",
    "preparation",
    "placement",
    "inbox",
    "side",
    "host",
)


@frozen
class Entry:
    """One registered member: where it lives and what it declares."""

    area: str
    factory: str
    name: str
    invariant: str
    kills: frozenset[str]
    collateral_ok: frozenset[str]
    gap: str
    filters: Area

    @property
    def adapter(self) -> str:
        return f"python:zoo.{self.area}:{self.factory}"


def members() -> list[Entry]:
    """Every zoo member, area by area."""
    out: list[Entry] = []
    for area in AREAS:
        module = importlib.import_module(f"zoo.{area}")
        filters: Area = module.AREA
        for cls in module.MEMBERS:
            out.append(
                Entry(
                    area,
                    cls.__name__,
                    cls.name,
                    cls.invariant,
                    frozenset(cls.kills),
                    frozenset(cls.collateral_ok),
                    cls.gap,
                    filters,
                )
            )
    return out
