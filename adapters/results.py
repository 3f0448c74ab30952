"""Every op's result checked against its published schema before a check reads it.

A check reads a result for its meaning through the op's typed fields (issue 36); a
result whose shape the schema does not allow cannot be read that way, and judging it
anyway would charge a requirement with what is a protocol problem.  So the suite
validates each result where it calls the implementation and raises ``UnreadableResult``
naming the op, its arguments, the result and the JSON pointer at which it breaks the
schema (D-251).

Only the *shape* is held here: types and items.  A schema's value constraints (a
pattern, ``not``, ``const``, ``enum``, bounds, closed objects) restate requirements
(``uri.encode`` has no ``=``: URI-004; ``json.tagSafe`` has no ``<``: SER-001): a
readable value that breaks one is judged by that requirement's check, never turned into
a protocol problem.  So does a missing field (``required``): a context without its
``placement`` breaks ENV-004, which its check judges; a field a check must read and
cannot find is its reading error, an unreadable result all the same (checks.collect).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, cast

from dsh_conformance.spec.compiled import Compiled

__all__ = ["check_result", "result_problem"]


#: Keywords that constrain values rather than the shape a check reads.
_VALUE_KEYWORDS = frozenset(
    {
        "pattern",
        "not",
        "const",
        "enum",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "required",
        "dependentRequired",
        "dependentSchemas",
        "if",
        "then",
        "else",
    }
)
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})


def shape(schema: Any, keep: frozenset[str] = frozenset()) -> Any:
    """*schema* with its value constraints removed: what a result must be to be read.
    ``oneOf`` becomes ``anyOf`` (its branches may now overlap) and a closed object is
    opened (an extra field hides nothing a check reads).  *keep*: value keywords kept
    (``required``, to name a key a host left out: unjudged.reading_entry)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _VALUE_KEYWORDS and key not in keep:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: shape(sub, keep) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out["anyOf" if key == "oneOf" else key] = [shape(sub, keep) for sub in value]
        elif key in {"items", "additionalProperties"}:
            if isinstance(value, dict):
                out[key] = shape(value, keep)
            elif key == "items":
                out[key] = value
        else:
            out[key] = value
    return out


def _schemas() -> Any:
    return resources.files("dsh_conformance.spec") / "schemas"


@cache
def _resources_and_ops(
    keep: frozenset[str] = frozenset(),
) -> tuple[
    tuple[tuple[str, dict[str, Any]], ...],
    dict[str, tuple[str, dict[str, Any], dict[str, Any]]],
]:
    folder = _schemas()
    pieces: list[tuple[str, dict[str, Any]]] = []
    for name in ("data.json", "protocol.json"):
        data = shape(json.loads((folder / name).read_text(encoding="utf-8")), keep)
        pieces.append((data["$id"], data))
    ops: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {}
    for entry in sorted((folder / "ops").iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".json"):
            continue
        data = shape(json.loads(entry.read_text(encoding="utf-8")), keep)
        pieces.append((data["$id"], data))
        for name, spec in data.get("ops", {}).items():
            ops[name] = (data["$id"], data.get("$defs", {}), spec)
    return tuple(pieces), ops


@cache
def _validator(op: str, keep: frozenset[str] = frozenset()) -> Compiled | None:
    """*op*'s result shape (the *keep* value keywords kept), compiled once per process
    (D-500)."""
    resources, ops = _resources_and_ops(keep)
    found = ops.get(op)
    if found is None or "result" not in found[2]:
        return None
    base, defs, spec = found
    return Compiled({"$id": base, "$defs": defs, **shape(spec["result"], keep)}, resources)


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path) or "/"


def result_problem(op: str, result: Any) -> str | None:
    """Why *result* does not match *op*'s result schema, or None when it does (or when
    the op publishes no schema: nothing to hold it to)."""
    validator = _validator(op)
    if validator is None:
        return None
    error = validator.best_match(result)
    if error is None:
        return None
    return (
        f"result of {op} does not match schema at {_pointer(error.absolute_path)}: {error.message}"
    )


def check_result(op: str, args: Mapping[str, Any], result: object) -> object:
    """*result*, after raising ``UnreadableResult`` (D-251) if it breaks *op*'s schema at
    the result itself; a result that breaks it only at some fields comes back with each
    of them ``Unreadable`` (D-522): only a check that uses one judges nothing."""
    problem = result_problem(op, result)
    if problem is not None:
        from dsh_conformance.checks import unreadable_result
        from dsh_conformance.unjudged import with_unreadable_fields

        validator = _validator(op)
        assert validator is not None
        errors = list(validator.iter_errors(cast(Any, result)))
        partial = with_unreadable_fields(op, result, errors)
        if partial is None:
            raise unreadable_result(op, dict(args), result, problem)
        return partial
    return result


_REQUIRED: frozenset[str] = frozenset({"required"})


def missing_required(op: str, result: object, key: str) -> str | None:
    """The pointer of an object in *result* that lacks *key* although *op*'s schema
    requires it, or None (looked up only after a check's reading error, D-521)."""
    validator = _validator(op, _REQUIRED)
    if validator is None:
        return None
    stack = list(validator.iter_errors(cast(Any, result)))
    while stack:
        error = stack.pop()
        stack.extend(error.context or ())  # the branches of an anyOf
        missing = isinstance(error.instance, Mapping) and key not in error.instance
        wanted = error.validator_value if isinstance(error.validator_value, list) else []
        if error.validator == "required" and key in wanted and missing:
            return _pointer(error.absolute_path)
    return None
