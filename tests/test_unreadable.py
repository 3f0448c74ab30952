"""A result a check cannot read blames no requirement; every check of a test runs (issue 36).

D-251: a result whose shape breaks its op's schema, or a reading error inside a check,
is ``UnreadableResult``: ``blamed()`` names nothing and the harness blames no cited id.
D-250: inside ``collect()`` a failed check is recorded and the test goes on, so a
profile check never hides a seed check of the same test.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.contract import UnreadableResult
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.results import result_problem
from dsh_conformance.checks import (
    CheckFailure,
    blamed,
    check,
    collect,
    every,
    expect,
    expect_equal,
    failure_lines,
    read,
    unreadable,
)


class _Answers:
    """The reference model, except for the answers given for some ops."""

    def __init__(self, **answers: Any) -> None:
        self.inner = ReferenceAdapter()
        self.answers = {name.replace("_", "."): value for name, value in answers.items()}

    def handshake(self) -> Any:
        return self.inner.handshake()

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if op in self.answers:
            return self.answers[op]
        return self.inner.call(op, args)

    def close(self) -> None:
        self.inner.close()


def test_a_result_of_the_wrong_shape_is_unreadable_with_its_pointer() -> None:
    """D-522: a result that breaks its schema at one field is still read; the field is
    ``Unreadable`` and using it raises ``UnreadableField`` naming the pointer; a result of
    the wrong type as a whole cannot be read at all (``UnreadableResult``)."""
    from dsh_conformance.unjudged import UnreadableField

    impl = Implementation(_Answers(mention_parse={"text": "x", "references": [7]}))
    result = impl.call("mention.parse", text="x")
    assert result["text"] == "x"
    with pytest.raises(UnreadableField) as field:
        _ = result["references"][0] == 7
    assert field.value.field == "/references/0"
    assert field.value.op == "mention.parse"
    assert field.value.expected == "object"
    assert field.value.seen == "7"
    whole = Implementation(_Answers(mention_parse=[1]))
    with pytest.raises(UnreadableResult) as caught:
        whole.call("mention.parse", text="x")
    assert caught.value.op == "mention.parse"
    assert "text" in caught.value.arguments
    assert caught.value.result == [1]
    assert caught.value.reason.startswith("result of mention.parse does not match schema at /")
    assert not blamed(caught.value)
    assert unreadable(caught.value) is caught.value


def test_a_readable_value_that_breaks_a_requirement_is_not_a_protocol_problem() -> None:
    """uri.encode's schema forbids '=' (URI-004) and json.tagSafe's '<' (SER-001): those
    are requirements' failures, judged by their checks, not unreadable results."""
    assert result_problem("uri.encode", "dsh-session:IiI=") is None
    assert result_problem("json.tagSafe", "</referenced-sessions>") is None
    assert result_problem("uri.encode", 7) is not None


def test_the_reference_answers_validate() -> None:
    impl = Implementation(ReferenceAdapter())
    uri = impl.call("uri.encode", sessionId="a")
    assert impl.call("mention.parse", text=f"see {uri}")["references"]


def test_a_reading_error_inside_a_check_blames_nothing() -> None:
    with pytest.raises(UnreadableResult) as caught, check("URI-001", value={}):
        _ = {}["label"]  # type: ignore[index]
    assert not blamed(caught.value)
    assert "KeyError 'label' while checking URI-001" in caught.value.reason
    assert "KeyError 'label'" in str(caught.value)
    assert any('args = {"value":{}}' in note for note in caught.value.__notes__)


def test_read_names_op_args_and_result() -> None:
    result: dict[str, Any] = {"sources": []}
    with pytest.raises(UnreadableResult) as caught:
        read("prepare", {"content": []}, result, lambda r: r["sources"][0]["label"])
    assert caught.value.op == "prepare"
    assert caught.value.result == result
    assert "IndexError" in caught.value.reason
    assert read("prepare", {}, result, lambda r: len(r["sources"])) == 0


def test_a_failed_assertion_still_blames_its_requirement() -> None:
    with pytest.raises(AssertionError) as caught, check("URI-001"):
        raise AssertionError("wrong")
    assert blamed(caught.value) == ("URI-001",)


def test_collect_runs_every_check_and_blames_each_failed_one() -> None:
    ran: list[str] = []

    def body() -> None:
        with collect():
            with check("ENV-009"):  # a profile check fails first ...
                raise AssertionError("warning wording")
            ran.append("after the profile check")
            expect("ENV-004", False, "no placement declared")  # ... the seed check still runs
            expect_equal("ENV-002", 1, 1)
            ran.append("end")

    with pytest.raises(ExceptionGroup) as caught:
        body()
    assert ran == ["after the profile check", "end"]
    assert blamed(caught.value) == ("ENV-009", "ENV-004")
    lines = failure_lines(caught.value)
    assert len(lines) == 2
    assert "no placement declared" in lines[1]


def test_collect_raises_one_failure_as_it_is() -> None:
    with pytest.raises(CheckFailure) as caught, collect():
        expect("URI-004", False, "padded")
    assert blamed(caught.value) == ("URI-004",)


def test_an_error_after_a_failed_check_is_its_consequence() -> None:
    """A check found the result wrong; a later line that cannot use it neither blames
    the test's other ids nor hides the failure."""

    def body() -> None:
        with collect():
            expect("HOST-002", False, "labels differ")
            _ = [][1]  # type: ignore[misc]

    with pytest.raises(CheckFailure) as caught:
        body()
    assert blamed(caught.value) == ("HOST-002",)
    assert any("IndexError" in note for note in caught.value.__notes__)


def test_an_unblamed_reading_error_in_a_test_body_is_the_suites() -> None:
    """D-521: the test stops there, blames nothing, and the entry says it is the suite's."""
    from dsh_conformance import unjudged

    unjudged.take()
    with collect():
        _ = {"a": 1}["conversation"]
    [entry] = unjudged.take()
    assert entry["by"] == "suite"
    assert entry["requirement"] == ""
    assert "'conversation'" in entry["field"]


def test_outside_a_collector_a_check_stops_the_test() -> None:
    with pytest.raises(CheckFailure):
        expect("URI-004", False, "padded")


def test_every_still_reports_each_failure() -> None:
    def one() -> None:
        expect("A-1", False, "one")

    def two() -> None:
        expect("B-1", False, "two")

    with pytest.raises(ExceptionGroup) as caught:
        every(one, two)
    assert blamed(caught.value) == ("A-1", "B-1")


class MentionsWithNumbers(_Answers):
    """mention.parse answers its ``references`` with a number for each: only the checks
    reading a reference cannot read them."""

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        result = self.inner.call(op, args)
        if op == "mention.parse" and isinstance(result, dict) and result.get("references"):
            return {**result, "references": [7 for _ in result["references"]]}
        return result


def mentions_with_numbers_for_references() -> MentionsWithNumbers:
    return MentionsWithNumbers()


def test_a_run_blames_no_requirement_for_an_unreadable_field(tmp_path: Path) -> None:
    """Through the real runner (D-522): a test whose checks met the unreadable field blames
    nothing, is no protocol problem, and names the field, the type and the value seen;
    the requirement is not judged by it, and the adapter is not unreliable."""
    from harness_cli import run_record

    from dsh_conformance.outcomes import Outcome

    done, record = run_record(
        tmp_path,
        "python:test_unreadable:mentions_with_numbers_for_references",
        "--requirement",
        "MENTION-00[34]",
        "--hypothesis-profile",
        "quick",
    )
    assert not [t for t in record.tests if t.outcome is Outcome.PROTOCOL]
    entries = [u for t in record.tests for u in t.unjudged]
    assert entries, [t.nodeid for t in record.tests]
    assert all(u["by"] == "host" for u in entries)
    assert any(u["field"].startswith("mention.parse /references/") for u in entries)
    assert all(u["expected"] == "object" and u["seen"] == "7" for u in entries)
    for test in record.tests:
        for u in test.unjudged:
            assert not test.judges(u["requirement"])
    assert "adapter unreliable" not in done.stdout


def test_a_record_message_lists_every_sub_failure() -> None:
    """Hypothesis's "found 2 distinct failures" (an ExceptionGroup) shows each failure in
    the record's message, not only the headline."""
    from dsh_conformance import failure

    first = AssertionError("[HOST-002] labels differ")
    second = AssertionError("[HOST-003] a match is missing")
    group = ExceptionGroup("Hypothesis found 2 distinct failures.", [first, second])
    message = failure.message(group)
    assert message.splitlines() == ["[HOST-002] labels differ", "[HOST-003] a match is missing"]


def test_after_a_seed_failure_a_profile_failure_is_moot() -> None:
    """PREP-002 (seed) accepted the target, so PREP-022's code check (profile) has no
    error to judge: left out, it adds no collateral; a profile failure first never
    stops a seed check after it."""

    def seed_first() -> None:
        with collect():
            expect("PREP-002", False, "the target's own id was accepted")
            expect_equal("PREP-022", None, "SESSION_REFERENCE_SELF_REFERENCE")

    with pytest.raises(CheckFailure) as caught:
        seed_first()
    assert blamed(caught.value) == ("PREP-002",)

    def profile_first() -> None:
        with collect():
            expect("ENV-009", False, "warning bytes")
            expect("ENV-004", False, "no placement declared")

    with pytest.raises(ExceptionGroup) as group:
        profile_first()
    assert blamed(group.value) == ("ENV-009", "ENV-004")


def test_hard_stops_at_the_first_failure() -> None:
    from dsh_conformance.checks import hard

    ran: list[str] = []

    def body() -> None:
        with collect(), hard():
            expect("URI-004", False, "padded")
            ran.append("after")

    with pytest.raises(CheckFailure):
        body()
    assert ran == []


def test_a_static_case_on_the_wrong_side_blames_its_cited_ids() -> None:
    """D-252: a case call that succeeds where the case fails blames the ids that decide
    it; the exact code of an error is REF-010's."""
    from dsh_conformance.conformance.test_cases import _check

    lenient = Implementation(_Answers(mention_parse={"text": "x", "references": []}))
    with pytest.raises(CheckFailure) as caught:
        _check(
            lenient,
            "mention.parse",
            {"text": "@[bad](dsh-session:%%%)"},
            {"error": "SESSION_REFERENCE_INVALID_REFERENCE"},
            "mention-parse-bad-explicit",
            ["MENTION-003"],
        )
    assert blamed(caught.value) == ("MENTION-003",)
    reference = Implementation(ReferenceAdapter())
    with pytest.raises(CheckFailure) as code:
        _check(
            reference,
            "mention.parse",
            {"text": "@[bad](dsh-session:%%%)"},
            {"error": "ANOTHER_CODE"},
            "a case with another code",
            ["MENTION-003"],
        )
    assert blamed(code.value) == ("REF-010",)


def test_a_bare_assert_fails_with_its_condition_not_python_reprs() -> None:
    """Issue 45: a failed bare ``assert`` inside a check said ``assert [{'role': 'us...``;
    it says the condition as written, the inputs beside it as JSON."""

    def body() -> None:
        with collect(), check("URI-001", value=[{"role": "user"}]):
            got = [{"role": "user", "text": "a"}]
            assert got == [{"role": "user", "text": "b"}]

    with pytest.raises(AssertionError) as caught:
        body()
    assert str(caught.value) == 'not so: got == [{"role": "user", "text": "b"}]'
    assert "'role'" not in " ".join(failure_lines(caught.value))
    assert any('value = [{"role":"user"}]' in note for note in caught.value.__notes__)


def test_one_delimiter_is_read_in_any_block_layout() -> None:
    """Issue 45: "not exactly one delimiter" was shown on a prompt with exactly one, merged
    into the prompt's text block; two delimiter lines still fail, words inside a JSON
    string of the data never count."""
    from dsh_conformance.conformance.scenario_oracle import one_delimiter_after_all_prefix_blocks

    prefix = {"content": [{"type": "text", "text": 'SNAP {"t":"## My request:"}'}]}
    envelope = {"prefixContexts": [prefix], "displayContent": [{"type": "text", "text": "q"}]}

    def event(*blocks: str) -> dict[str, Any]:
        content = [{"type": "text", "text": b} for b in blocks]
        return {"type": "user/message", "data": {"content": content, "envelope": envelope}}

    snap = 'SNAP {"t":"## My request:"}'
    one_delimiter_after_all_prefix_blocks([event(snap, "\n\n## My request:\nq")])
    one_delimiter_after_all_prefix_blocks([event(snap, "\n\n## My request:\n", "q")])
    with pytest.raises(AssertionError, match="2 delimiters"):
        one_delimiter_after_all_prefix_blocks([event(snap, "\n## My request:\n## My request:\nq")])
    with pytest.raises(AssertionError, match="does not follow every prefix context"):
        one_delimiter_after_all_prefix_blocks([event("\n## My request:\n", snap, "q")])
