"""The case files are a published, language-neutral data set: each validates against
spec/schemas/cases.json, every case says what it shows and where its expected value came
from, and every cited requirement and operation exists."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any

import jsonschema
import pytest

from dsh_conformance.spec import SCHEMA_DIR, load_catalog


def _files() -> dict[str, Any]:
    folder = resources.files("dsh_conformance.conformance") / "cases"
    return {
        entry.name: json.loads(entry.read_text(encoding="utf-8"))
        for entry in sorted(folder.iterdir(), key=lambda p: p.name)
        if entry.name.endswith(".json")
    }


def _operations() -> set[str]:
    ops: set[str] = set()
    for entry in (SCHEMA_DIR / "ops").iterdir():
        if entry.name.endswith(".json"):
            ops |= set(json.loads(entry.read_text(encoding="utf-8"))["ops"])
    return ops


@pytest.mark.parametrize("name", sorted(_files()))
def test_case_file_validates_against_the_published_schema(name: str) -> None:
    schema = json.loads((SCHEMA_DIR / "cases.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(_files()[name], schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("name", sorted(_files()))
def test_case_ids_requirements_and_operations_exist(name: str) -> None:
    data = _files()[name]
    ids = [case["id"] for case in data["cases"]]
    assert len(ids) == len(set(ids)), f"duplicate case ids in {name}"
    known = set(load_catalog().requirements)
    ops = _operations()
    for case in data["cases"]:
        assert set(case["req"]) <= known, (case["id"], set(case["req"]) - known)
        used = [s["op"] for s in case.get("steps", [])] + ([case["op"]] if "op" in case else [])
        assert set(used) <= ops, (case["id"], set(used) - ops)


def test_the_case_set_covers_placement_inbox_and_side_sessions() -> None:
    """Issue 14: the language-neutral set reaches beyond URIs and preparation."""
    neutral = [c for d in _files().values() if d["format"] == "dsh-cases/1" for c in d["cases"]]
    ops = {s["op"] for c in neutral for s in c.get("steps", [])} | {
        c["op"] for c in neutral if "op" in c
    }
    assert {"agent.send", "agent.steer", "agent.listen", "side.fork", "side.mergeBack"} <= ops
    provenance = Counter(c["provenance"] for c in neutral)
    assert set(provenance) == {"upstream-verified", "seed-derived", "reference-model"}
