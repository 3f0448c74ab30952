"""Counts the docs quote are the suite's (issue 43 item 6).

docs/protocol.md said "the other 453 are `unsupported`" long after the suite had 481 more;
docs/verdicts.md quoted an rc.8 gate of 72 expected failures beside a committed report of
73.  Each count a doc quotes is checked here against what it counts: the collected suite,
or the committed report it quotes.  Times are not quoted (they depend on the machine).
"""

from __future__ import annotations

import re
from pathlib import Path

from dsh_conformance import runner

ROOT = Path(__file__).resolve().parents[1]


def test_protocol_md_counts_the_tests_a_uri_only_adapter_runs() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text("utf-8")
    found = re.search(r"the (\d+) `uri` tests pass\s+and the other (\d+) are `unsupported`", text)
    assert found, "docs/protocol.md no longer quotes the first report's counts"
    tests = runner.selected(runner.RunOptions(adapter="reference"))
    uri_only = [t for t in tests if set(t.capabilities) <= {"uri"}]
    assert (int(found[1]), int(found[2])) == (len(uri_only), len(tests) - len(uri_only))


def test_verdicts_md_quotes_the_committed_reports() -> None:
    text = (ROOT / "docs" / "verdicts.md").read_text("utf-8")
    upstream = (ROOT / "reports" / "upstream-seed.md").read_text("utf-8")
    reference = (ROOT / "reports" / "reference-seed.md").read_text("utf-8")
    block = text[text.index("Every headline says how much was judged:") :]
    first, _, third = block.split("```")[1].strip().splitlines()[:3]
    assert first.removeprefix("seed conformance: ") in upstream
    assert third.removeprefix("seed conformance: ") in reference
    gate = re.search(r"`gate: (within expectations \([^`]*\))` \(the rc\.8 run", text)
    assert gate, "docs/verdicts.md no longer quotes the rc.8 gate"
    assert gate[1] in upstream
