"""The requirement catalog: valid, traceable, and faithful to the seeds."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from dsh_conformance.spec import load_catalog

SEEDS = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_catalog_loads_and_validates() -> None:
    catalog = load_catalog()
    assert catalog.requirements
    assert catalog.decisions


def test_every_cited_decision_exists() -> None:
    catalog = load_catalog()
    for req in catalog.requirements.values():
        for d in req.decisions:
            assert d in catalog.decisions, f"{req.id} cites unknown decision {d}"
    for dec in catalog.decisions.values():
        for r in dec.requirements:
            assert r in catalog.requirements, f"{dec.id} cites unknown requirement {r}"


def test_decisions_are_numbered_without_duplicates() -> None:
    numbers = [int(d.removeprefix("D-")) for d in load_catalog().decisions]
    assert len(numbers) == len(set(numbers))


def test_every_verification_item_and_acceptance_criterion_is_covered() -> None:
    catalog = load_catalog()
    covered = {v for r in catalog.requirements.values() for v in r.verification}
    missing = sorted(set(catalog.verification) - covered)
    assert not missing, f"verification items without a requirement: {missing}"


def test_quotes_are_verbatim_seed_sentences() -> None:
    if not SEEDS.is_dir():
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"the seeds must be present in CI at {SEEDS}")
        pytest.skip(f"seed notes not found at {SEEDS}")
    catalog = load_catalog()
    texts: dict[str, str] = {}
    for req in catalog.requirements.values():
        if req.seed_file is None:
            continue
        if req.seed_file not in texts:
            texts[req.seed_file] = normalize((SEEDS / req.seed_file).read_text(encoding="utf-8"))
        assert normalize(req.quote) in texts[req.seed_file], (
            f"{req.id}: quote not in seed {req.seed}"
        )


def test_rendered_catalog_page_is_current() -> None:
    from dsh_conformance.spec.render import render

    page = Path(__file__).resolve().parents[1] / "spec" / "CATALOG.md"
    assert page.read_text(encoding="utf-8") == render(load_catalog()), (
        "spec/CATALOG.md is stale: run python -m dsh_conformance.spec.render > spec/CATALOG.md"
    )


def test_requirements_sharing_a_seed_sentence_mark_their_own_clause() -> None:
    """Issue 14: PREP-001..004 and others quote one long sentence; each marks its phrase."""
    from collections import defaultdict

    by_quote: dict[str, list[str]] = defaultdict(list)
    catalog = load_catalog()
    for req in catalog.requirements.values():
        by_quote[req.quote].append(req.id)
    for ids in by_quote.values():
        if len(ids) > 1:
            for rid in ids:
                req = catalog.requirements[rid]
                assert req.clause, f"{rid} shares its quote with {ids} but marks no clause"
                assert req.clause in req.quote
            clauses = [catalog.requirements[r].clause for r in ids]
            assert len(set(clauses)) == len(clauses), f"{ids} mark the same clause"
