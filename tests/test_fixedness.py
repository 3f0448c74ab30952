"""What counts as a fixed example (D-401): the static reading behind ``coverage``."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from dsh_conformance.cli.coverage import without_fixed_example
from dsh_conformance.fixedness import is_fixed
from dsh_conformance.runner import CollectedTest, collect
from dsh_conformance.spec import load_catalog


def plain() -> None:
    assert True


@given(st.integers())
def generated(n: int) -> None:
    assert n == n


@example(3)
@given(st.integers())
def example_above(n: int) -> None:
    assert n == n


@given(st.integers())
@example(3)
def example_below(n: int) -> None:
    assert n == n


class Machine(RuleBasedStateMachine):
    @rule()
    def step(self) -> None:
        pass


def runs_a_machine() -> None:
    run_state_machine_as_test(Machine)  # type: ignore[no-untyped-call]


def test_plain_tests_and_properties_with_examples_are_fixed() -> None:
    assert is_fixed(plain)
    assert is_fixed(example_above)
    assert is_fixed(example_below)


def test_generated_inputs_are_not_fixed() -> None:
    assert not is_fixed(generated)
    assert not is_fixed(runs_a_machine)
    assert not is_fixed(Machine.TestCase.runTest)


def test_a_seed_must_judged_only_by_generation_has_no_fixed_example() -> None:
    catalog = load_catalog()
    must = catalog.requirements["PROJ-001"]
    profile_must = next(r for r in catalog.musts() if r.verdict == "profile")
    tests = [
        CollectedTest("t::generated", ("PROJ-001", profile_must.id), (), fixed=False),
        CollectedTest("t::machine", ("PROJ-001",), (), fixed=False),
    ]
    assert without_fixed_example([must, profile_must], tests) == [must]
    tests.append(CollectedTest("t::case", ("PROJ-001",), (), fixed=True))
    assert without_fixed_example([must, profile_must], tests) == []


def test_the_suite_reads_as_d401_says() -> None:
    """The suite's state machines are not fixed examples; its case files and the
    properties given explicit examples for issue 41 are."""
    tests = {t.nodeid: t for t in collect()}
    assert not tests["conformance/test_inbox_stateful.py::test_inbox_ownership_state_machine"].fixed
    assert not tests["conformance/test_side_stateful.py::test_side_sessions_stateful"].fixed
    prefix = "conformance/test_cases.py::test_case["
    assert all(t.fixed for nodeid, t in tests.items() if nodeid.startswith(prefix))
    assert tests["conformance/test_retention.py::test_retention_properties"].fixed
    assert not tests["conformance/test_uri.py::test_distinct_ids_have_distinct_uris"].fixed


def test_coverage_names_the_fixed_examples_of_every_seed_must() -> None:
    from click.testing import CliRunner

    from dsh_conformance.cli import main

    done = CliRunner().invoke(main, ["coverage", "--format", "json"])
    data = json.loads(done.output)
    assert data["without_fixed_example"] == []
    assert data["fixed"] == data["seed_musts"] == len(data["fixed_by"]) >= 74
    assert all(data["fixed_by"].values())
    assert (
        "conformance/test_projection.py::test_projection_keeps_exactly_what_the_seed_keeps"
        in (data["fixed_by"]["PROJ-001"])
    )
    assert done.exit_code == (1 if data["untested"] else 0)
