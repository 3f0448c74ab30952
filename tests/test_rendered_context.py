"""The layout-free reading of a rendering held against typed claims (conformance/
rendered_context.py, issue 42 item 1), on hand-made renderings: which different but
conforming layouts it accepts and which contradicting ones it refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_conformance.checks import CheckFailure, blamed
from dsh_conformance.conformance.rendered_context import (
    Framings,
    data_rendering,
    expect_nothing_left_out_rendered,
    expect_rendered_size,
    order_problem,
    rendering_of,
    strings_in_order,
)

CLOSE = "</referenced-sessions>"


def source(sid: str, *texts: str, omitted: int = 0, size: int = 10) -> dict[str, Any]:
    messages = [
        {"role": "user", "text": t, "omittedBytes": omitted, "checkpoint": False} for t in texts
    ]
    return {"sessionId": sid, "serializedBytes": size, "omittedMessages": 0, "messages": messages}


def result(value: object, warning: str = "Careful.\n", **extra: Any) -> dict[str, Any]:
    text = warning + "<referenced-sessions>\n" + json.dumps(value) + "\n" + CLOSE
    return {"contexts": [{"content": [{"type": "text", "text": text}]}], **extra}


A, B = source("a", "hello from a"), source("b", "hello from b")


def test_strings_come_in_document_order_keys_first() -> None:
    assert strings_in_order({"x": ["1", {"y": "2"}], "z": "3"}) == ["x", "1", "y", "2", "z", "3"]


@pytest.mark.parametrize(
    "value",
    [
        [{"id": "a", "m": ["hello from a"]}, {"id": "b", "m": ["hello from b"]}],
        {"a": {"said": ["hello from a"]}, "b": {"said": ["hello from b"]}},  # keyed by id
        {"ids": ["a", "b"], "texts": [["hello from a"], ["hello from b"]]},  # columnar
        # the host's own vocabulary spells "b" early: the texts still read in order
        {"legend": {"b": "bold"}, "s": [["a", "hello from a"], ["b", "hello from b"]]},
    ],
)
def test_a_rendering_in_the_typed_order_passes(value: object) -> None:
    rendering = rendering_of(result(value))
    assert rendering is not None
    assert order_problem(rendering, [A, B]) is None


def test_a_label_naming_another_source_is_not_read_as_that_source() -> None:
    value = [{"id": "a", "label": "b", "m": ["hello from a"]}, {"id": "b", "m": ["hello from b"]}]
    rendering = rendering_of(result(value))
    assert rendering is not None
    assert order_problem(rendering, [A, B], {"a": {"b"}}) is None


@pytest.mark.parametrize(
    "value",
    [
        [{"id": "b", "m": ["hello from b"]}, {"id": "a", "m": ["hello from a"]}],
        {"b": ["hello from b"], "a": ["hello from a"]},
    ],
)
def test_a_rendering_in_another_order_fails(value: object) -> None:
    rendering = rendering_of(result(value))
    assert rendering is not None
    assert order_problem(rendering, [A, B]) is not None


def _blames(call: Any) -> tuple[str, ...]:
    with pytest.raises(CheckFailure) as caught:
        call()
    return blamed(caught.value)


LONG = "x" * 40
CUT = "x" * 10 + "[30 cut]"


def test_a_dropped_or_cut_text_held_whole_is_blamed_on_its_sentence() -> None:
    kept = source("s", "newest message here", omitted=0)
    dropped = data_rendering({"c": [LONG, "newest message here"]})
    assert _blames(
        lambda: expect_nothing_left_out_rendered(
            dropped, [kept], {"s": [LONG, "newest message here"]}
        )
    ) == ("RET-002",)
    cut = source("s", CUT, omitted=30)
    whole = data_rendering({"c": [LONG]})
    assert _blames(lambda: expect_nothing_left_out_rendered(whole, [cut], {"s": [LONG]})) == (
        "RET-003",
    )
    fine = data_rendering({"c": [CUT]})
    expect_nothing_left_out_rendered(fine, [cut], {"s": [LONG]})
    short = data_rendering({"c": ["ok", "newest message here"]})  # a host's own word
    expect_nothing_left_out_rendered(short, [kept], {"s": ["ok", "newest message here"]})


def test_the_rendered_bytes_are_the_sources_plus_the_framing() -> None:
    value = [{"m": ["hello from a"]}]
    out = result(value)
    rendering = rendering_of(out)
    assert rendering is not None
    framing = rendering.bytes - 10
    expect_rendered_size({**out, "framingBytes": framing}, [A])
    expect_rendered_size(out, [A])  # no framingBytes: unjudged
    assert _blames(lambda: expect_rendered_size({**out, "framingBytes": framing - 1}, [A])) == (
        "RET-001",
    )
    assert _blames(lambda: expect_rendered_size({**out, "framingBytes": framing + 1}, [A])) == (
        "SER-006",
    )


def test_a_framing_that_moves_with_the_content_fails_the_cap() -> None:
    small, big = result([["hello from a"]]), result([["hello from a", "y" * 500]])
    framings = Framings()
    for out, size in ((small, 10), (big, 10)):
        rendering = rendering_of(out)
        assert rendering is not None
        claimed = source("a", "hello from a", size=size)
        framings.add({**out, "framingBytes": rendering.bytes - size}, [claimed])
    assert _blames(framings.expect_fixed) == ("RET-001",)
