"""docs/protocol.md lists every operation by capability, generated from the op schemas."""

from __future__ import annotations

from pathlib import Path

from dsh_conformance.adapters.contract import CAPABILITIES
from dsh_conformance.spec.operations import by_capability, operations, replace_section

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"


def test_the_operations_section_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert replace_section(text) == text, (
        "docs/protocol.md is stale: python -m dsh_conformance.spec.operations "
        "--write docs/protocol.md"
    )


def test_every_operation_belongs_to_a_known_capability_and_is_listed() -> None:
    grouped = by_capability()
    assert set(grouped) == set(CAPABILITIES)
    listed = [name for names in grouped.values() for name in names]
    assert sorted(listed) == sorted(operations())
    assert "mention.format" in grouped["uri"]
    text = DOC.read_text(encoding="utf-8")
    for name in listed:
        assert f"| `{name}` |" in text
