"""Writing expectation manifests: a new file from entries, or an existing one rewritten.

``--write-expectations`` turns a run's failures into entries (src/dsh_conformance/harness/
write_expectations.py); this module only writes them.  A new manifest is rendered in id
order for stable diffs; an existing one is rewritten with tomlkit so its comments, layout
and order survive review (adapters/expectations.py reads both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.adapters.expectations import Entry, normal_components, normal_versions


def _toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0xD800 else "\\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def render_manifest(entries: Sequence[Entry], *, adapter: str = "", comment: str = "") -> str:
    """A manifest file for *entries*, sorted by id (stable diffs)."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    if adapter:
        lines.append(f"adapter = {_toml_string(adapter)}")
    for entry in sorted(entries, key=lambda e: e.id):
        lines += ["", "[[expect]]"]
        for key, value in entry.to_json().items():
            if isinstance(value, bool):
                lines.append(f"{key} = {'true' if value else 'false'}")
            elif isinstance(value, list):
                lines.append(f"{key} = [{', '.join(_toml_string(v) for v in value)}]")
            elif isinstance(value, dict):
                pairs = ", ".join(
                    f"{_toml_string(k)} = {_toml_string(v)}" for k, v in value.items()
                )
                lines.append(f"{key} = {{{pairs}}}")
            else:
                lines.append(f"{key} = {_toml_string(value)}")
    return "\n".join(lines) + "\n"


def update_manifest(text: str, entries: Sequence[Entry]) -> str:
    """*text*, an existing manifest, rewritten to hold exactly *entries*.

    Comments, layout and the order of surviving entries are kept (tomlkit round trip);
    a removed entry's trailing comments (often the heading of the next group) move to the
    entry before it; new entries are appended in id order.
    """
    import tomlkit

    doc = tomlkit.parse(text)
    wanted = {e.id: e for e in entries}
    if "expect" not in doc:
        doc.append("expect", tomlkit.aot())
    aot = doc["expect"]
    present: set[str] = set()
    for index in reversed(range(len(aot))):
        entry_id = str(aot[index].get("id"))
        if entry_id in wanted and entry_id not in present:
            present.add(entry_id)
            _sync(aot[index], wanted[entry_id])
        else:
            _remove_table(doc, aot, index)
    new = sorted((e for e in wanted.values() if e.id not in present), key=lambda e: e.id)
    for entry in new:
        if len(aot):
            body = aot[len(aot) - 1].value.body
            if not body or body[-1][1].as_string() != "\n":
                body.append((None, tomlkit.nl()))
        table = tomlkit.table()
        for key, value in entry.to_json().items():
            table[key] = _inline(value) if isinstance(value, dict) else value
        aot.append(table)
    return tomlkit.dumps(doc)


def _sync(table: Any, entry: Entry) -> None:
    """Bring a kept table in line with *entry*, touching only what differs."""
    wanted = entry.to_json()
    for key in ("status", "reason", "link", "versions", "components", "blames", "strict"):
        if key not in wanted:
            if key in table:
                del table[key]
        elif key == "blames":
            if tuple(table.get(key, ())) != entry.blames:
                table[key] = wanted[key]
        elif key == "versions":
            if normal_versions(table.get(key)) != entry.versions:
                table[key] = wanted[key]
        elif key == "components":
            if normal_components(table.get(key)) != entry.components:
                table[key] = _inline(wanted[key])
        elif table.get(key) != wanted[key]:
            table[key] = wanted[key]


def _inline(value: Mapping[str, str]) -> Any:
    import tomlkit

    table = tomlkit.inline_table()
    table.update(value)
    return table


def _remove_table(doc: Any, aot: Any, index: int) -> None:
    from tomlkit.items import Comment

    body = aot[index].value.body
    keys = [i for i, (key, _) in enumerate(body) if key is not None]
    trailing = [item for _, item in body[(keys[-1] + 1 if keys else 0) :]]
    del aot[index]
    first = next((i for i, item in enumerate(trailing) if isinstance(item, Comment)), None)
    if first is None:
        return
    moved = [(None, item) for item in trailing[first:]]
    if index > 0:
        aot[index - 1].value.body.extend(moved)
    else:
        at = next(i for i, (key, _) in enumerate(doc.body) if key is not None and key == "expect")
        doc.body[at:at] = moved
