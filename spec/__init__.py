"""The requirement catalog: requirements, decisions and verification items.

Machine-readable TOML under this package (one file per area, so areas evolve
independently), validated against ``schemas/catalog.json`` when loaded.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from attrs import field, frozen

SCHEMA_DIR = resources.files(__name__) / "schemas"
#: The notes a requirement's ``seed`` field can name.
SEED_FILES = {"000": "000_80154294bfbaae69.txt", "004": "004_66741de1e402cc1a.txt"}


@frozen
class Requirement:
    """One normative (or informative) statement with a stable id."""

    id: str
    title: str
    level: str
    seed: str
    quote: str
    capability: str
    profiles: tuple[str, ...] = ("seed",)
    decisions: tuple[str, ...] = ()
    verification: tuple[str, ...] = ()
    note: str = ""
    clause: str = ""

    @property
    def area(self) -> str:
        return self.id.split("-", 1)[0]

    @property
    def verdict(self) -> str:
        """``seed`` when a sentence of a note is the source, else ``profile`` (D-161).

        The seed verdict holds an implementation to what the notes say at the level they
        say it; decision-sourced requirements (and identity with the reference model)
        make the profile verdict, never a seed MUST.
        """
        return "seed" if self.seed in SEED_FILES else "profile"

    @property
    def seed_file(self) -> str | None:
        return SEED_FILES.get(self.seed)


@frozen
class Decision:
    """A numbered decision where the seeds are silent or ambiguous."""

    id: str
    title: str
    decision: str
    follows: str
    question: str = ""
    requirements: tuple[str, ...] = ()


@frozen
class Catalog:
    """The whole catalog, indexed by id."""

    requirements: Mapping[str, Requirement] = field()
    decisions: Mapping[str, Decision] = field()
    verification: Mapping[str, Mapping[str, str]] = field()

    def musts(self, profile: str = "seed") -> list[Requirement]:
        return [
            r for r in self.requirements.values() if r.level == "MUST" and profile in r.profiles
        ]


@cache
def raw_catalog() -> dict[str, list[dict[str, Any]]]:
    """The merged TOML content, before validation: parsed once per process and shared
    (the catalog and the record header's spec hash both read it), so never changed."""
    merged: dict[str, list[dict[str, Any]]] = {
        "requirement": [],
        "decision": [],
        "verification": [],
    }
    root = resources.files(__name__)
    for folder in ("requirements", "decisions"):
        for entry in sorted((root / folder).iterdir(), key=lambda p: p.name):
            if entry.name.endswith(".toml"):
                data = tomllib.loads(entry.read_text(encoding="utf-8"))
                for key, items in data.items():
                    merged[key].extend(items)
    data = tomllib.loads((root / "verification.toml").read_text(encoding="utf-8"))
    merged["verification"].extend(data["verification"])
    return merged


def schema(name: str) -> dict[str, Any]:
    """A JSON Schema of this package by file name (``catalog.json``, ``protocol.json``...)."""
    text = (SCHEMA_DIR / name).read_text(encoding="utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


@cache
def load_catalog() -> Catalog:
    """Load and validate the catalog; raise ``ValueError`` naming every problem."""
    from dsh_conformance.spec.compiled import Compiled

    raw = raw_catalog()
    errors = sorted(  # compiled: jsonschema words the errors of a catalog it refuses
        Compiled(schema("catalog.json")).iter_errors(raw),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        lines = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20]]
        raise ValueError("invalid requirement catalog:\n" + "\n".join(lines))
    reqs: dict[str, Requirement] = {}
    for item in raw["requirement"]:
        if item["id"] in reqs:
            raise ValueError(f"duplicate requirement id {item['id']}")
        reqs[item["id"]] = Requirement(
            id=item["id"],
            title=item["title"],
            level=item["level"],
            seed=item["seed"],
            quote=item["quote"],
            capability=item["capability"],
            profiles=tuple(item.get("profiles", ["seed"])),
            decisions=tuple(item.get("decisions", ())),
            verification=tuple(item.get("verification", ())),
            note=item.get("note", ""),
            clause=item.get("clause", ""),
        )
        if reqs[item["id"]].clause not in reqs[item["id"]].quote:
            raise ValueError(f"{item['id']}: clause is not a phrase of its quote")
    decisions: dict[str, Decision] = {}
    for item in raw["decision"]:
        if item["id"] in decisions:
            raise ValueError(f"duplicate decision id {item['id']}")
        decisions[item["id"]] = Decision(
            id=item["id"],
            title=item["title"],
            decision=item["decision"],
            follows=item["follows"],
            question=item.get("question", ""),
            requirements=tuple(item.get("requirements", ())),
        )
    verification = {v["id"]: v for v in raw["verification"]}
    return Catalog(reqs, decisions, verification)
