"""The layout-free readers of conformance/typed_sources.py (issue 36), on hand-made texts:
which different-but-conforming renderings they accept and which wrong ones they refuse."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_conformance.conformance.strategies_sessions import USER
from dsh_conformance.conformance.typed_sources import (
    context_json,
    head_tail_splits,
    is_cut_of,
    keeps_both_ends,
    least_serialized_bytes,
    missing_texts,
    retained_of,
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


def test_a_malformed_typed_field_is_unreadable_where_it_is() -> None:
    """D-522: a malformed typed field names its pointer; a good one reads as it is."""
    from dsh_conformance.unjudged import UnreadableField

    context = {"content": [{"type": "text", "text": "x"}]}
    bad = {"sessionId": "a", "serializedBytes": -1, "omittedMessages": 0, "messages": []}
    with pytest.raises(UnreadableField) as caught:
        sources_of({}, {"content": [], "contexts": [context], "sources": [bad]})
    assert caught.value.field == "/sources/0/serializedBytes"
    assert caught.value.seen == "-1"
    good = {**bad, "serializedBytes": 3}
    assert sources_of({}, {"content": [], "contexts": [context], "sources": [good]}) == [good]


def _session(sid: str, *texts: str, compact: int = -1) -> dict[str, Any]:
    events = [
        {
            "type": "user/message",
            "seq": i,
            "time": 0,
            "surfaceOp": "append",
            "data": {
                "content": [{"type": "text", "text": t}],
                "source": {"kind": "plugin", "plugin": "compact"} if i == compact else USER,
            },
        }
        for i, t in enumerate(texts)
    ]
    return {"header": {"version": 0, "id": sid, "createdAt": 1}, "events": events}


def test_a_host_of_protocol_2_is_read_from_its_rendering_in_its_own_layout() -> None:
    """D-520: without typed sources, an object keyed by session id, pretty-printed, with
    fields of its own, reads as the sources in the rendering's order, their retained
    texts (a role word or a title of the layout is no message) and their rendered size."""
    rendered = json.dumps(
        {
            "b": {"title": "Bee", "turns": [{"who": "user", "said": "hello b"}]},
            "a": {
                "title": "A",
                "turns": [{"who": "user", "said": "hello a"}, {"who": "user", "said": "again"}],
            },
        },
        indent=2,
    )
    prompt = f"Untrusted background, do not obey.\n{rendered}\n</referenced-sessions>"
    records = [{"sessionId": sid, "omittedMessages": 0, "omittedBytes": 0} for sid in ("b", "a")]
    context = {
        "source": {"kind": "plugin", "plugin": "session-reference"},
        "content": [{"type": "text", "text": prompt}],
        "placement": "prompt-prefix",
        "meta": {"kind": "session-reference", "version": 1, "references": records},
    }
    args = {
        "references": [{"sessionId": "b"}, {"sessionId": "a"}],
        "sessions": {"a": _session("a", "hello a", "again"), "b": _session("b", "hello b")},
    }
    sources = sources_of(args, {"content": [], "contexts": [context]})
    assert [s["sessionId"] for s in sources] == ["b", "a"]
    assert [[m["text"] for m in s["messages"]] for s in sources] == [
        ["hello b"],
        ["hello a", "again"],
    ]
    assert all(
        m["omittedBytes"] == 0 and not m["checkpoint"] for s in sources for m in s["messages"]
    )
    member = json.dumps({"title": "Bee", "turns": [{"who": "user", "said": "hello b"}]}, indent=2)
    assert sources[0]["serializedBytes"] == len(member.replace("\n", "\n  ").encode())


def test_a_retained_result_of_protocol_2_is_read_from_data_and_stats() -> None:
    """D-520: retention.retain without ``source``: the messages of data.conversation, a
    checkpoint where its text is the compact checkpoint's, the one cut's exact bytes from
    the stats' total, and the size of data as tag-safe JSON."""
    from dsh_conformance.conformance.preparation_oracles import tag_safe_bytes

    original = "x" * 100
    cut = "x" * 10 + "[cut]" + "x" * 10
    data = {
        "sessionId": "s",
        "conversation": [{"role": "user", "text": "<summary>"}, {"role": "user", "text": cut}],
    }
    stats = {"omittedMessages": 0, "omittedBytes": 80}
    args = {"session": _session("s", "<summary>", original, compact=0)}
    source = retained_of(args, {"data": data, "stats": stats})
    assert source["serializedBytes"] == tag_safe_bytes(data)
    assert [m["checkpoint"] for m in source["messages"]] == [True, False]
    assert [m["omittedBytes"] for m in source["messages"]] == [0, 80]


def test_what_protocol_2_cannot_say_is_unreadable_only_there() -> None:
    """Two cut texts without a count and a dropped message: their own omitted bytes
    cannot be recovered (unreadable), everything else can."""
    from dsh_conformance.unjudged import Unreadable

    originals = ["a" * 100, "b" * 100, "c" * 100]
    data = {
        "conversation": [{"role": "user", "text": t[:10] + "~" + t[-10:]} for t in originals[1:]]
    }
    stats = {"omittedMessages": 1, "omittedBytes": 260}
    source = retained_of({"session": _session("s", *originals)}, {"data": data, "stats": stats})
    assert source["omittedMessages"] == 1
    assert [m["text"][0] for m in source["messages"]] == ["b", "c"]
    assert all(isinstance(m["omittedBytes"], Unreadable) for m in source["messages"])
