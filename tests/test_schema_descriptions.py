"""Every argument and result field of the protocol says what it means (issue 37 item 2).

A host implements the protocol from the schemas and docs alone: a field without a
description is one it has to guess (an independent host read surfaceOp's start/end as
positions and lost 12 seed MUSTs).  Catches: a new op or field landing undescribed, and a
description that contradicts what the reference writes (the surfaceOp example below is
folded by the reference model both ways).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

SCHEMAS = Path(__file__).resolve().parents[1] / "spec" / "schemas"


def load(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def resolve(base: str, ref: str) -> tuple[str, Any]:
    """The file and schema a $ref names (relative to *base*, a file under SCHEMAS)."""
    where, _, pointer = ref.partition("#")
    name = base if not where else str((Path(base).parent / where).as_posix())
    name = name.replace("ops/../", "")
    node: Any = load(name)
    for part in [p for p in pointer.split("/") if p]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return name, node


def undescribed(name: str, schema: Any, where: str, seen: set[str]) -> Iterator[str]:
    """Paths of properties without a description, following $refs once each."""
    if not isinstance(schema, Mapping):
        return
    if "$ref" in schema:
        key = f"{name}{schema['$ref']}" if schema["$ref"].startswith("#") else schema["$ref"]
        target_name, target = resolve(name, schema["$ref"])
        if key not in seen:
            seen.add(key)
            yield from undescribed(target_name, target, f"{where}->{schema['$ref']}", seen)
    for field, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, Mapping):
            continue
        described = "description" in sub or "const" in sub
        if not described and "$ref" in sub:
            described = "description" in resolve(name, sub["$ref"])[1]
        if not described:
            yield f"{where}.{field}"
        yield from undescribed(name, sub, f"{where}.{field}", seen)
    for keyword in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(keyword), Mapping):
            yield from undescribed(name, schema[keyword], f"{where}[]", seen)
    for keyword in ("oneOf", "anyOf", "allOf"):
        for index, sub in enumerate(schema.get(keyword) or ()):
            yield from undescribed(name, sub, f"{where}/{keyword}{index}", seen)


def op_entries() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path in sorted((SCHEMAS / "ops").glob("*.json")):
        for op, spec in load(f"ops/{path.name}")["ops"].items():
            yield f"ops/{path.name}", op, spec


@pytest.mark.parametrize(
    ("name", "op", "spec"), list(op_entries()), ids=[op for _, op, _ in op_entries()]
)
def test_every_argument_and_result_field_is_described(
    name: str, op: str, spec: dict[str, Any]
) -> None:
    seen: set[str] = set()
    missing = [*undescribed(name, spec["args"], f"{op} args", seen)]
    missing += undescribed(name, spec["result"], f"{op} result", seen)
    assert not missing, "fields without a description:\n" + "\n".join(missing)


def test_every_protocol_message_field_is_described() -> None:
    defs = load("protocol.json")["$defs"]
    missing = [
        path
        for kind in ("handshake-request", "handshake-response", "request", "result", "error")
        for path in undescribed("protocol.json", defs[kind], kind, set())
    ]
    assert not missing, "fields without a description:\n" + "\n".join(missing)
