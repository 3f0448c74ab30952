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


def test_readme_counts_the_catalog_and_the_kill_matrix() -> None:
    """The README's counts of requirements, decisions and zoo members are the catalog's and
    the committed kill matrix's (they were 217, 197 and 82 long after they had grown)."""
    from dsh_conformance.spec import load_catalog

    text = (ROOT / "README.md").read_text("utf-8")
    found = re.search(r"the requirement catalog: (\d+) requirements", text)
    assert found, "README.md no longer counts the requirements"
    assert int(found[1]) == len(load_catalog().requirements)
    decisions = {
        line
        for path in (ROOT / "spec" / "decisions").glob("*.toml")
        for line in re.findall(r'^id = "(D-\d+)"', path.read_text("utf-8"), re.M)
    }
    found = re.search(r"; (\d+) numbered decisions", text)
    assert found, "README.md no longer counts the decisions"
    assert int(found[1]) == len(decisions)
    matrix = (ROOT / "reports" / "kill-matrix.md").read_text("utf-8")
    killed = re.search(r"Killed and blamed on their own requirement ids: (\d+)/(\d+)", matrix)
    seed = re.search(r"own id: (\d+)/(\d+)", matrix)
    assert killed
    assert seed
    zoo = re.search(
        r"a zoo of (\d+) more\s.*?: (\d+)/(\d+)\s+killed on their own ids, and for each of "
        r"the (\d+) that break",
        text,
        re.S,
    )
    assert zoo, "README.md no longer quotes the kill matrix"
    assert (int(zoo[1]), int(zoo[2]), int(zoo[3]), int(zoo[4])) == (
        int(killed[2]),
        int(killed[1]),
        int(killed[2]),
        int(seed[2]),
    )
