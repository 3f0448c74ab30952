"""The issue-11 holes of the preparation areas: each broken implementation in
tests/broken_preparation.py is killed by its purpose-built conformance test and blamed on
its own requirement ids only (the reference passes the same tests in the suite).

The conformance tests are called in-process (Hypothesis tests through ``inner_test`` with
a fixed input), so the kit costs well under a second; tests/test_allowed_preparation.py
drives the CLI end to end.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import broken_preparation as kit

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.checks import blamed
from dsh_conformance.conformance import test_prepare, test_retention
from dsh_conformance.conformance.strategies_sessions import USER, SessionCase, text_block

Case = Callable[[Implementation], None]


def _isolation(impl: Implementation) -> None:
    session = test_prepare.small("source", "first", "second")
    case = SessionCase(session, [], [])
    mutation = {
        "kind": "mutateAfterRead",
        "append": [
            {
                "type": "user/message",
                "seq": 0,
                "time": 0,
                "surfaceOp": "append",
                "data": {"content": [text_block("later source mutation")], "source": USER},
            }
        ],
    }
    inner = test_prepare.test_later_source_changes_do_not_reach_the_prepared_context
    inner.hypothesis.inner_test(impl=impl, case=case, mutation=mutation)  # type: ignore[attr-defined]


def _default_cap(impl: Implementation) -> None:
    for total in (65536, 65537, 70000, 8193):
        test_prepare.test_the_default_cap_is_65536_bytes(impl, total)


def _both_ends(impl: Implementation) -> None:
    test_retention.test_slices_keep_both_ends(impl, "0123456789" * 10, 60)


def _drop_then_slice(impl: Implementation) -> None:
    test_retention.test_drop_what_is_needed_then_slice(impl)


def _bom(impl: Implementation) -> None:
    test_retention.test_a_byte_order_mark_at_a_cut_is_counted_exactly(
        impl, "a" * 60 + "\ufeff" + "b" * 10, 59
    )


def _drop_order(impl: Implementation) -> None:
    for label in ("s", ""):
        test_retention.test_older_messages_are_dropped_first(impl, label)


def _hostile(impl: Implementation) -> None:
    test_prepare.test_upstream_hostile_source_text_stays_data(impl)


def _warning(impl: Implementation) -> None:
    test_prepare.test_warning_text(impl)


CASES: dict[str, Case] = {
    "small_default_cap": _default_cap,
    "no_default_cap": _default_cap,
    "head_only": _both_ends,
    "over_dropping": _drop_then_slice,
    "never_slices": _drop_then_slice,
    "strips_bom": _bom,
    "drops_newer_first": _drop_order,
    "rereads_after_mutation": _isolation,
    "raw_closing_tag": _hostile,
    "no_warning": _warning,
}


@pytest.mark.parametrize("factory", sorted(kit.FACTORIES))
def test_each_hole_is_killed_and_blamed_on_its_ids(factory: str) -> None:
    ids, _ = kit.KIT[factory]
    impl = Implementation(kit.FACTORIES[factory](), factory)  # type: ignore[arg-type]
    with pytest.raises(AssertionError) as caught:
        CASES[factory](impl)
    got = set(blamed(caught.value))
    assert got, f"{factory}: the failure names no requirement"
    assert got <= ids, f"{factory}: blamed {sorted(got)}, expected only {sorted(ids)}"


@pytest.mark.parametrize("case", sorted(set(CASES.values()), key=lambda c: c.__name__))
def test_the_reference_passes_every_killing_test(case: Case) -> None:
    case(Implementation(ReferenceAdapter(), "reference"))


def test_every_member_has_a_killing_test() -> None:
    assert set(CASES) == set(kit.FACTORIES) == set(kit.KIT)
