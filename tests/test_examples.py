"""The examples pages (docs/examples/) are current, cover every MUST, and the static test
index they and spec/CATALOG.md use agrees with a real collection of the suite."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from dsh_conformance.spec import load_catalog
from dsh_conformance.spec.examples import ExampleError, Page, check, pages, render_all
from dsh_conformance.spec.traceability import CASE_TESTS, cited_tests

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "examples"

COLLECT = """
import json, sys, pytest

class Collect:
    def __init__(self): self.marks = {}
    def pytest_itemcollected(self, item):
        self.marks[item.nodeid] = [str(a) for m in item.iter_markers("req") for a in m.args]

plugin = Collect()
pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "conformance"], plugins=[plugin])
sys.stdout.write("\\n@@" + json.dumps(plugin.marks))
"""


def test_the_examples_pages_are_current() -> None:
    files = render_all()
    on_disk = {p.name for p in PAGES.glob("*.md")}
    regenerate = "run python -m dsh_conformance.spec.examples --write docs/examples"
    assert on_disk == set(files), regenerate
    for name, text in files.items():
        assert (PAGES / name).read_text(encoding="utf-8") == text, (
            f"docs/examples/{name} is stale: "
            "run python -m dsh_conformance.spec.examples --write docs/examples"
        )


def test_every_must_has_an_example_and_a_counterexample() -> None:
    catalog = load_catalog()
    covered = [p.requirements() for p in pages()]
    flat = {r for page in covered for r in page}
    musts = {r.id for r in catalog.requirements.values() if r.level == "MUST"}
    assert musts <= flat
    check(catalog, pages())  # raises on a MUST without both


def test_a_counterexample_must_name_a_test_that_cites_its_requirement() -> None:
    page = Page(
        name="p",
        title="t",
        intro="",
        defs={},
        examples=(),
        counterexamples=(
            {
                "requirements": ["URI-004"],
                "wrong": "w",
                "caught_by": ["test_serialization.py::test_known_vectors"],
            },
        ),
    )
    with pytest.raises(ExampleError) as caught:
        check(load_catalog(), [*pages(), page])
    assert "no caught_by test of URI-004 cites it" in str(caught.value)


def test_the_static_test_index_matches_a_real_collection() -> None:
    done = subprocess.run(
        [sys.executable, "-c", COLLECT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    marks: dict[str, list[str]] = json.loads(done.stdout.rsplit("\n@@", 1)[1])
    keep_params = {test for test in CASE_TESTS.values()}
    collected: dict[str, set[str]] = defaultdict(set)
    for nodeid, reqs in marks.items():
        base = nodeid.split("[", 1)[0]
        test = nodeid if base in keep_params else base
        for req in reqs:
            collected[req].add(test)
    assert {r: set(t) for r, t in cited_tests().items()} == dict(collected)
