"""What the model reads of a prepared context, read layout-free, held against the typed claims.

The model sees the rendering, not the typed ``sources``/``source`` fields (issue 42 item 1):
a host whose typed fields say one thing and whose rendering another must fail the sentence
the rendering breaks.  The rendering is read for meaning only, in any layout -- the
host's own keys, nesting, array or object, indentation -- as the JSON value right before
the final closing tag (``typed_sources.context_json``), walked in document order:

* **order** (PREP-001): each source is placed where its id or one of its retained texts
  first occurs, counting only strings that belong to no other source (another's id, text,
  label or cwd) and are not empty; the sources so placed must come in the typed order, by
  their ids or by their texts (either reading passes: a host's own vocabulary may collide
  with one of them, a rendering in another order breaks both) (D-440);
* **retention** (RET-002, RET-003): no text the typed field reports dropped (RET-002) or
  cut (RET-003) occurs whole as a string value, for texts long enough not to be the host's
  own vocabulary (D-441);
* **size** (RET-001, SER-006): the rendered bytes are the sources' ``serializedBytes`` plus
  the context's ``framingBytes``, a typed field of the host's (D-442): a host that does not
  report it leaves only this check unjudged; one that does holds it fixed for a number of
  sources, so a rendering bigger than its claims cannot hide behind a moving framing.

Standard library and the suite's independent oracles only; nothing of the model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from dsh_conformance.checks import expect
from dsh_conformance.conformance.preparation_oracles import cut_readings, utf8_len
from dsh_conformance.conformance.typed_sources import (
    context_json,
    head_tail_splits,
    prompt_of,
)

#: Fewest UTF-16 units a dropped or cut text needs before its whole presence in the
#: rendering is read as the rendering keeping it (shorter ones may be a host's own words).
DISTINCT: Final = 16


def strings_in_order(value: object) -> list[str]:
    """Every string of *value* in document order, each object key before its value."""
    out: list[str] = []
    stack: list[object] = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            out.append(current)
        elif isinstance(current, Mapping):
            for key, item in reversed(list(current.items())):
                stack.extend((item, key))
        elif isinstance(current, list):
            stack.extend(reversed(current))
    return out


@frozen
class Rendering:
    """A prepared context as the model reads it: its text and the JSON value it ends with."""

    prompt: str
    value: object
    strings: tuple[str, ...]

    @property
    def bytes(self) -> int:
        """UTF-8 bytes of the context's text (TextEncoder, what a prompt carries)."""
        return utf8_len(self.prompt)

    @property
    def values(self) -> frozenset[str]:
        return frozenset(self.strings)


def rendering_of(result: Mapping[str, Any]) -> Rendering | None:
    """The rendering of a prepare result's one context; None when no JSON ends it (a host
    without that is ENV-001's failure, not this module's)."""
    prompt = prompt_of(result)
    read = context_json(prompt)
    if read is None:
        return None
    return Rendering(prompt, read[1], tuple(strings_in_order(read[1])))


def data_rendering(data: object) -> Rendering:
    """A retention.retain result's ``data``: the one source as it goes into the prompt."""
    return Rendering("", data, tuple(strings_in_order(data)))


# --- order (PREP-001) ---------------------------------------------------------------------


def _ids(sources: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(s["sessionId"]) for s in sources]


def _texts(source: Mapping[str, Any]) -> set[str]:
    return {m["text"] for m in source["messages"]}


def presented_orders(
    rendering: Rendering,
    sources: Sequence[Mapping[str, Any]],
    beside: Mapping[str, Iterable[str]] | None = None,
) -> list[list[str]]:
    """The order the rendering presents *sources* in, read by their ids and by their texts:
    per reading, the ids of the sources it can place, by where each first occurs.

    A source is placed by strings that are its own alone: not empty, not another source's
    id, retained text or what the rendering may hold beside it (*beside*, by session id:
    its label and cwd).
    """
    beside = beside or {}
    readings = []
    for marks_of in (lambda s: {str(s["sessionId"])}, _texts):
        first: list[tuple[int, str]] = []
        for index, source in enumerate(sources):
            rest = {""}
            for j, other in enumerate(sources):
                if j != index:
                    sid = str(other["sessionId"])
                    rest |= {sid, *_texts(other), *beside.get(sid, ())}
            marks = marks_of(source) - rest
            at = next((p for p, s in enumerate(rendering.strings) if s in marks), None)
            if at is not None:
                first.append((at, str(source["sessionId"])))
        readings.append([sid for _, sid in sorted(first)])
    return readings


def order_problem(
    rendering: Rendering,
    sources: Sequence[Mapping[str, Any]],
    beside: Mapping[str, Iterable[str]] | None = None,
) -> str | None:
    """Why the rendering does not present *sources* in their typed order, or None.

    Judged on every reading that places two sources or more: one in the typed order
    passes (D-440)."""
    typed = _ids(sources)
    judged = [r for r in presented_orders(rendering, sources, beside) if len(r) >= 2]
    if not judged:
        return None
    if any(r == [sid for sid in typed if sid in r] for r in judged):
        return None
    return f"the rendering presents the sources as {judged[0]}, the typed sources as {typed}"


def expect_rendered_order(
    args: Mapping[str, Any],
    result: Mapping[str, Any],
    sources: Sequence[Mapping[str, Any]],
    **inputs: object,
) -> None:
    """PREP-001 on what the model reads: the rendering presents the sources in the typed
    (first-appearance) order (*args*: the prepare call's, for what may sit beside them)."""
    rendering = rendering_of(result)
    if rendering is None:
        return
    problem = order_problem(rendering, sources, beside_of(args))
    expect("PREP-001", problem is None, problem or "", **inputs)


def beside_of(args: Mapping[str, Any]) -> dict[str, set[str]]:
    """What a rendering may hold beside each source, by session id: the labels its
    references give it and its session's cwd (from a prepare call's arguments)."""
    out: dict[str, set[str]] = {}
    for ref in args.get("references") or ():
        if isinstance(ref, Mapping) and isinstance(ref.get("label"), str):
            out.setdefault(str(ref.get("sessionId")), set()).add(ref["label"])
    for sid, session in (args.get("sessions") or {}).items():
        header = session.get("header") if isinstance(session, Mapping) else None
        if isinstance(header, Mapping) and isinstance(header.get("cwd"), str):
            out.setdefault(str(sid), set()).add(header["cwd"])
    return out


# --- retention (RET-002, RET-003) ---------------------------------------------------------


def left_out(
    source: Mapping[str, Any], originals: Sequence[str], kept_elsewhere: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """(dropped, cut): the *originals* of *source* its typed field does not retain whole,
    split into those a typed message is a cut of and the others; texts retained whole
    anywhere (*kept_elsewhere*, this source's own) and short texts are left out (D-441)."""
    whole = _texts(source) | set(kept_elsewhere)
    cut_from = [m for m in source["messages"] if m["omittedBytes"] > 0]
    dropped: list[str] = []
    cut: list[str] = []
    for text in dict.fromkeys(originals):
        if text in whole or len(text) < DISTINCT:
            continue
        (cut if any(_cut_of(m, text) for m in cut_from) else dropped).append(text)
    return dropped, cut


def _cut_of(message: Mapping[str, Any], original: str) -> bool:
    """*message* reads exactly as a head/tail cut of *original* (by its omittedBytes or a
    count its marker states)."""
    splits = head_tail_splits(message["text"], original, message["omittedBytes"])
    return bool(splits) or bool(cut_readings(message["text"], original))


def expect_nothing_left_out_rendered(
    rendering: Rendering | None,
    sources: Sequence[Mapping[str, Any]],
    originals: Mapping[str, Sequence[str]],
    **inputs: object,
) -> None:
    """RET-002 / RET-003 on what the model reads: a text the typed field reports dropped
    (RET-002) or cut (RET-003) does not occur whole as a string value of the rendering.
    *originals*: each source's projected texts, by session id."""
    if rendering is None:
        return
    everywhere = {t for s in sources for t in _texts(s)}
    present = rendering.values
    for source in sources:
        sid = str(source.get("sessionId", ""))
        dropped, cut = left_out(source, originals.get(sid, ()), everywhere)
        shown = [t[:80] for t in dropped if t in present]
        expect(
            "RET-002",
            not shown,
            "the rendering holds whole a message the typed source reports dropped",
            sessionId=sid,
            texts=shown,
            **inputs,
        )
        shown = [t[:80] for t in cut if t in present]
        expect(
            "RET-003",
            not shown,
            "the rendering holds whole a text the typed source reports sliced",
            sessionId=sid,
            texts=shown,
            **inputs,
        )


def expect_retained_rendered(
    requirement: str,
    rendering: Rendering | None,
    sources: Sequence[Mapping[str, Any]],
    **inputs: object,
) -> None:
    """Each retained text of the typed sources occurs as a string value of the rendering
    (blamed on *requirement*: ENV-001 for a context, RET-002 for retention's data)."""
    if rendering is None:
        return
    present = rendering.values
    missing = [m["text"][:80] for s in sources for m in s["messages"] if m["text"] not in present]
    expect(
        requirement,
        not missing,
        "retained texts of the typed sources are not string values of the rendering",
        missing=missing,
        **inputs,
    )


# --- size (RET-001, SER-006) ----------------------------------------------------------------


def framing_of(result: Mapping[str, Any]) -> int | None:
    """The host's ``framingBytes`` (D-442), or None when it reports none readable."""
    value = result.get("framingBytes")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def expect_rendered_size(
    result: Mapping[str, Any], sources: Sequence[Mapping[str, Any]], **inputs: object
) -> None:
    """RET-001 / SER-006 on what the model reads (D-442): the context's UTF-8 bytes are its
    sources' serializedBytes plus its framingBytes.  More is a rendering over what the
    host counted against its caps (RET-001); less, a count the serializer did not drive
    (SER-006).  Unjudged without a readable framingBytes or rendering."""
    framing = framing_of(result)
    rendering = rendering_of(result)
    if framing is None or rendering is None:
        return
    counted = sum(s["serializedBytes"] for s in sources) + framing
    shown = {"rendered": rendering.bytes, "serializedBytes + framingBytes": counted, **inputs}
    expect(
        "RET-001",
        rendering.bytes <= counted,
        "the rendered context is larger than its sources' serializedBytes and framingBytes",
        **shown,
    )
    expect(
        "SER-006",
        rendering.bytes >= counted,
        "the rendered context is smaller than its sources' serializedBytes and framingBytes",
        **shown,
    )


class Framings:
    """The framingBytes of a test's preparations, by number of sources: fixed (D-442)."""

    def __init__(self) -> None:
        self.seen: dict[int, dict[int, Mapping[str, Any]]] = {}

    def add(
        self, result: Mapping[str, Any], sources: Sequence[Mapping[str, Any]], **inputs: object
    ) -> None:
        """Check one successful preparation's size and note its framing."""
        expect_rendered_size(result, sources, **inputs)
        framing = framing_of(result)
        if framing is not None:
            self.seen.setdefault(len(sources), {}).setdefault(framing, dict(inputs))

    def expect_fixed(self) -> None:
        """RET-001: one framingBytes per number of sources, whatever the sources hold."""
        for count, framings in sorted(self.seen.items()):
            expect(
                "RET-001",
                len(framings) == 1,
                "framingBytes moves with what the sources hold: the rendering is not what "
                "the caps were counted on",
                sources=count,
                framings=sorted(framings),
            )
