"""The layout-free readers of conformance/typed_sources.py (issue 36), on hand-made texts:
which different-but-conforming renderings they accept and which wrong ones they refuse."""

from __future__ import annotations

import json

import pytest

from dsh_conformance.adapters.contract import UnreadableResult
from dsh_conformance.conformance.typed_sources import (
    context_json,
    head_tail_splits,
    is_cut_of,
    keeps_both_ends,
    least_serialized_bytes,
    missing_texts,
    sources_of,
)

CLOSE = "</referenced-sessions>"


@pytest.mark.parametrize(
    "prompt",
    [
        '## Warning\n\n<referenced-sessions>\n[{"a":"x"}]\n' + CLOSE,
        'Untrusted!\n<referenced-sessions>{"byKey":{"s1":{"body":"x"}}}' + CLOSE,
        "Careful [really]:\n" + json.dumps({"m": ["x"]}, indent=2) + "\n" + CLOSE,
        'Warn {not json}\n<referenced-sessions kind="v1">\n["x"]\n' + CLOSE,
    ],
)
def test_any_json_layout_beneath_a_warning_is_read(prompt: str) -> None:
    read = context_json(prompt)
    assert read is not None
    warning, value = read
    assert warning
    assert "<referenced-sessions" not in warning
    assert missing_texts([{"messages": [{"text": "x"}]}], value) == []
    assert missing_texts([{"messages": [{"text": "y"}]}], value) == ["y"]


@pytest.mark.parametrize(
    "prompt",
    [
        "no closing tag [1]",
        "warning\n<referenced-sessions>\nnot json\n" + CLOSE,
        "warning\n<referenced-sessions>\n[1] trailing\n" + CLOSE,
    ],
)
def test_no_json_right_before_the_closing_tag_is_no_reading(prompt: str) -> None:
    assert context_json(prompt) is None


def test_a_missing_warning_reads_as_empty() -> None:
    read = context_json("<referenced-sessions>\n[1]\n" + CLOSE)
    assert read is not None
    assert read[0] == ""


ORIGINAL = "0123456789" * 10


@pytest.mark.parametrize(
    "text",
    [
        "01234" + "[90 omitted]" + "56789",  # marker between head and tail
        "0123456789" + "\n[… omitted 90 UTF-8 bytes …]",  # after the tail (the reference)
        "(cut 90) " + "0123456789",  # before the head
        "0123456789",  # no marker at all: the typed field records the count
    ],
)
def test_a_head_and_tail_around_any_marker_is_an_exact_cut(text: str) -> None:
    splits = head_tail_splits(text, ORIGINAL, 90)
    assert splits
    assert keeps_both_ends(splits, 10) or 10 < 16


def test_a_wrong_count_or_a_foreign_text_is_no_cut() -> None:
    assert not head_tail_splits("01234[89 omitted]56789", ORIGINAL, 89)
    assert not head_tail_splits("abcde[90 omitted]fghij", ORIGINAL, 90)
    assert not head_tail_splits(ORIGINAL, ORIGINAL, 0)


def test_head_only_slices_keep_one_end() -> None:
    original = "".join(chr(0x41 + i) for i in range(58)) + "0123456789" * 4 + "!"  # 99 bytes
    text = original[:40] + "[59 cut]"
    splits = head_tail_splits(text, original, 59)
    assert splits
    assert not keeps_both_ends(splits, 40)


def test_bytes_are_utf8_and_a_lone_surrogate_counts_as_u_fffd() -> None:
    original = "界" * 10 + "\ud800"  # 30 + 3 bytes
    assert head_tail_splits("界" + "[x]" + "\ufffd", original, 27)
    assert is_cut_of({"text": "", "omittedBytes": 33}, original)
    assert not is_cut_of({"text": "zzz", "omittedBytes": 0}, original)


def test_the_least_serialized_size_counts_tag_safe_escapes() -> None:
    assert least_serialized_bytes(["a<"]) == len('"a\\u003c"')
    assert least_serialized_bytes(["\n", "\ud800"]) == len('"\\n"') + len('"\\ud800"')


def test_a_result_without_typed_sources_is_unreadable_not_a_failure() -> None:
    context = {"content": [{"type": "text", "text": "x"}]}
    with pytest.raises(UnreadableResult):
        sources_of({}, {"content": [], "contexts": [context]})
    bad = {"sessionId": "a", "serializedBytes": -1, "omittedMessages": 0, "messages": []}
    with pytest.raises(UnreadableResult):
        sources_of({}, {"content": [], "contexts": [context], "sources": [bad]})
    good = {**bad, "serializedBytes": 3}
    assert sources_of({}, {"content": [], "contexts": [context], "sources": [good]}) == [good]
