"""docs/protocol-reference.md: every operation's fields, rendered from the schemas.

The schemas are the protocol; this page is only their reading for people, so it is
generated and tests/test_protocol_reference.py fails when the committed page differs
(issue 37 item 2: docs and schemas drifted, and hosts guessed).  For each operation: its
capability, description, the requirements it serves with where each comes from (a note's
sentence, or a decision where the notes are silent), every argument and result field with
its type and description, and its typed errors; then every shared shape.
``python -m dsh_conformance.spec.reference_doc --write docs/protocol-reference.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dsh_conformance.spec import SCHEMA_DIR, load_catalog

#: How deep nested object fields are spelled out (deeper ones have shapes of their own).
DEPTH = 3


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return data


def _cell(text: str) -> str:
    """Text for a table cell: no pipe, no newline, no '<' a renderer would take for a tag."""
    return _text(text).replace("|", "\\|").replace("\n", " ")


def _text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _anchor(file: str, name: str) -> str:
    return f"{file.removesuffix('.json')}-{name}".replace("/", "-").replace(".", "-").lower()


def _type(schema: Mapping[str, Any], file: str) -> str:
    """A short type: a link for a $ref, an enum's values, a const, or the JSON type."""
    if "$ref" in schema:
        ref = str(schema["$ref"])
        where, _, pointer = ref.partition("#")
        target = where.rsplit("/", 1)[-1] if where else file.rsplit("/", 1)[-1]
        name = pointer.rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(target, name)})"
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    for keyword in ("oneOf", "anyOf"):
        if keyword in schema:
            return " or ".join(_type(part, file) for part in schema[keyword])
    kind = schema.get("type")
    if "allOf" in schema and kind is None:
        return " & ".join(_type(part, file) for part in schema["allOf"])
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"array of {_type(schema['items'], file)}"
    if isinstance(kind, list):
        return " \\| ".join(str(k) for k in kind)
    return str(kind or "any")


def _rows(schema: Mapping[str, Any], file: str, prefix: str = "", depth: int = 0) -> Iterator[str]:
    required = set(schema.get("required", ()))
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, Mapping):
            continue
        flag = "yes" if name in required else "no"
        default = f" Default `{json.dumps(sub['default'])}`." if "default" in sub else ""
        text = _cell(str(sub.get("description", "")) + default)
        yield f"| `{prefix}{name}` | {flag} | {_type(sub, file)} | {text} |"
        if depth + 1 < DEPTH and "$ref" not in sub:
            nested = sub.get("items") if sub.get("type") == "array" else sub
            if isinstance(nested, Mapping) and "$ref" not in nested:
                dot = "[]." if nested is not sub else "."
                yield from _rows(nested, file, f"{prefix}{name}{dot}", depth + 1)


def _fields(title: str, schema: Mapping[str, Any], file: str) -> list[str]:
    out = [f"**{title}**: {_type(schema, file)}" + _described(schema)]
    rows = list(_rows(schema, file))
    if rows:
        out += ["", "| field | required | type | meaning |", "| --- | --- | --- | --- |", *rows]
    return [*out, ""]


def _described(schema: Mapping[str, Any]) -> str:
    text = schema.get("description")
    return f" — {_text(str(text))}" if text else ""


def _requirements(ids: list[str]) -> str:
    catalog = load_catalog()
    parts = []
    for rid in ids:
        req = catalog.requirements.get(rid)
        if req is None:
            parts.append(rid)
        elif req.seed == "decision":
            parts.append(f"{rid} (decision {', '.join(req.decisions) or '?'})")
        else:
            parts.append(f"{rid} (note {req.seed})")
    return ", ".join(parts)


def _op(name: str, spec: Mapping[str, Any], file: str) -> list[str]:
    out = [f"### `{name}`", ""]
    whole = _load(file)
    if len(whole["ops"]) == 1:  # a file of one op (scenario.run, release.run) describes it
        out += [_text(str(whole.get("description", ""))), ""]
    if spec.get("description"):
        out += [_text(str(spec["description"])), ""]
    out += [f"Capability `{spec['capability']}`.", ""]
    if spec.get("requirements"):
        out += [f"Requirements: {_requirements(list(spec['requirements']))}.", ""]
    out += _fields("Arguments", spec["args"], file)
    out += _fields("Result", spec["result"], file)
    errors = ", ".join(f"`{e}`" for e in spec.get("errors", ())) or "none of its own"
    return [*out, f"**Typed errors**: {errors}.", ""]


def _shapes(file: str, defs: Mapping[str, Any], heading: str) -> list[str]:
    out: list[str] = []
    for name, schema in defs.items():
        if not isinstance(schema, Mapping):
            continue
        out += [f'<a id="{_anchor(file.rsplit("/", 1)[-1], name)}"></a>', ""]
        out += [f"{heading} `{name}`", "", *_fields("Shape", schema, file)]
        if "examples" in schema:
            out += ["Examples: " + ", ".join(f"`{json.dumps(e)}`" for e in schema["examples"])]
            out.append("")
        if isinstance(schema.get("$defs"), Mapping):
            out += _shapes(file, schema["$defs"], heading + "#")
    return out


def render() -> str:
    """The whole page."""
    from dsh_conformance.spec.operations import by_capability, operations

    names = sorted(p.name for p in (SCHEMA_DIR / "ops").iterdir() if p.name.endswith(".json"))
    files = {name: f"ops/{file}" for file in names for name in _load(f"ops/{file}")["ops"]}
    ops = operations()
    out = [
        "# Protocol reference (generated)",
        "",
        "<!-- generated by python -m dsh_conformance.spec.reference_doc from spec/schemas; "
        "do not edit -->",
        "",
        "Every operation's arguments and result, field by field, as the schemas in",
        "`spec/schemas/` define them; the wire format, the handshake and the core ops are in",
        "[protocol.md](protocol.md), versions in [protocol-changelog.md](protocol-changelog.md).",
        "A requirement marked *note 000/004* quotes a design note's sentence; one marked",
        "*decision D-n* is this project's reading where the notes are silent (spec/decisions).",
        "",
        "## Operations",
        "",
    ]
    for capability, names in by_capability().items():
        for name in names:
            out += _op(name, ops[name], files[name])
        if not names:
            out += [f"(capability `{capability}` has no operations of its own)", ""]
    out += ["## Shapes", ""]
    data = _load("data.json")
    out += _shapes("data.json", data["$defs"], "###")
    for file in sorted(set(files.values())):
        out += _shapes(file, _load(file).get("$defs", {}), "###")
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", type=Path, help="write the page here")
    options = parser.parse_args(argv)
    text = render()
    if options.write is None:
        sys.stdout.write(text)
    else:
        options.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
