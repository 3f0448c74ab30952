"""docs/protocol.md's example adapter is real: it passes ``smoke`` under Node."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]

#: Stands in for 'my-implementation': the uri capability in a few lines of Node.
IMPLEMENTATION = """
const SCHEME = 'dsh-session:'
const encodeSessionReferenceUri = (id) =>
  SCHEME + Buffer.from(JSON.stringify(id)).toString('base64url')
const decodeSessionReferenceUri = (uri) => {
  const code = 'SESSION_REFERENCE_INVALID_REFERENCE'
  const invalid = Object.assign(new Error('invalid'), { code })
  if (typeof uri !== 'string' || !uri.startsWith(SCHEME)) throw invalid
  let id
  try { id = JSON.parse(Buffer.from(uri.slice(SCHEME.length), 'base64url').toString()) }
  catch { throw invalid }
  if (typeof id !== 'string' || encodeSessionReferenceUri(id) !== uri) throw invalid
  return id
}
const formatSessionReferenceMention = ({ sessionId, label = sessionId }) =>
  `@[${label.replace(/[\\\\\\]]/g, '\\\\$&')}](${encodeSessionReferenceUri(sessionId)})`
"""


def example_adapter() -> str:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = text.split("## A complete adapter", 1)[1]
    code = re.search(r"```js\n(.*?)```", section, re.S)
    assert code is not None, "the Node example is missing from docs/protocol.md"
    return re.sub(
        r"^import \{ encode.*\n.*from 'my-implementation'$",
        lambda _: IMPLEMENTATION,
        code.group(1),
        flags=re.M,
    )


def test_the_documented_node_adapter_passes_smoke(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail("Node is required in CI (the protocol example must be checked)")
        pytest.skip("node is not installed: the documented Node adapter cannot be run")
    script = tmp_path / "my-adapter.mjs"
    script.write_text(example_adapter(), encoding="utf-8")
    result = CliRunner().invoke(main, ["smoke", "--adapter", f"subprocess:{node} {script}"])
    assert result.exit_code == 0, result.stdout
    for check in ("handshake", "uri.encode", "uri ops", "unknown op", "lone surrogate", "reset"):
        assert check in result.stdout
