"""The typed account of a prepare or retention.retain result that carries none (D-520).

Protocol 2 was published without the typed ``sources`` (prepare) and ``source``
(retention.retain) fields; a host written for it keeps its verdict (issue 45 item 1).
So a result without them is read for the same meaning from what protocol 2 already
asked of it, layout-free:

* retention.retain: ``data.conversation`` (the retained messages, role and text) and
  ``stats`` (omittedMessages, the omitted bytes in total); its serializedBytes is the
  tag-safe JSON of ``data``, the object protocol 2 says goes into the prompt;
* prepare: the rendered context's JSON value (any layout), split into one member per
  referenced session (each holding its session id as a string), in the order the
  rendering presents them; each member's retained messages are its string values, in
  document order, that are a text of that session's events, whole or cut; its
  serializedBytes is the member's rendered UTF-8 bytes; the context's meta records
  (protocol 2 requires them) give each source's omitted messages and bytes.

A message's role and checkpoint come from the event its text is (a user or steering
message, an assistant message; a checkpoint carries the compact source).  Its omitted
bytes are exact only where they can be: 0 for a whole text; for the one cut text of a
source that dropped nothing, the record's total; else the count a marker in the text
records (the largest, when a digit of the marker's wording reads as one too).  Whatever
cannot be recovered is ``Unreadable`` (D-522): only a check that needs it judges
nothing.  Standard library and the suite's oracles only: never the reference model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import evolve, frozen

from dsh_conformance.conformance.json_spans import Node, members_of, parse, strings
from dsh_conformance.conformance.preparation_oracles import (
    _prefix,
    cut_readings,
    encoded,
    tag_safe_bytes,
)
from dsh_conformance.unjudged import Unreadable

#: The source a compact checkpoint's user message carries (seed 000: "the canonical
#: source exported by dsh-compact").
COMPACT: Final = {"kind": "plugin", "plugin": "compact"}
ROLES: Final = {
    "user/message": "user",
    "steering/message": "user",
    "assistant/message": "assistant",
}
#: Kept bytes at the ends of a text that make it a cut of an original without a count.
MIN_ENDS: Final = 16
#: Fewer shared end bytes than this tell nothing of which original a cut is.
NOISE: Final = 4


# --- a text of the session, whole or cut --------------------------------------------------


@frozen
class Original:
    """A text of one event of the source session: what a retained message may be."""

    text: str
    role: str
    checkpoint: bool
    #: The event's index in the log: retained messages keep the log's order.
    at: int = 0
    #: Several messages of other roles or kinds hold this text: which one it is, is unknown.
    ambiguous: bool = False


def _texts(content: object) -> list[str]:
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def originals(session: object) -> list[Original]:
    """Every text a message of *session* may be retained as: each text block, and the
    blocks of one message joined (any joining a host chooses: none, a space, newlines)."""
    events = session.get("events") if isinstance(session, Mapping) else None
    out: list[Original] = []
    for at, event in enumerate(events if isinstance(events, list) else ()):
        role = ROLES.get(str(event.get("type"))) if isinstance(event, Mapping) else None
        data = event.get("data") if role else None
        if role is None or not isinstance(data, Mapping):
            continue
        source = data.get("source")
        checkpoint = (
            role == "user"
            and isinstance(source, Mapping)
            and all(source.get(k) == v for k, v in COMPACT.items())
        )
        blocks = _texts(data.get("content"))
        envelope = data.get("envelope")
        if isinstance(envelope, Mapping):  # a baked prompt: its display content too
            blocks += _texts(envelope.get("displayContent"))
        joined = {sep.join(blocks) for sep in ("", " ", "\n", "\n\n")} if len(blocks) > 1 else set()
        for text in dict.fromkeys([*blocks, *sorted(joined)]):
            out.append(Original(text, role, checkpoint, at))
    return out


def _score(text: str, original: str) -> tuple[bool, int] | None:
    """How well *text* reads as a cut of *original*: (a reading records its exact count,
    bytes of the original's ends it keeps), or None when it is no cut of it (no reading,
    and fewer than 16 bytes of its ends kept, or not shorter)."""
    data, whole = encoded(text), encoded(original)
    head = _prefix(data, whole)
    tail = _prefix(data[::-1], whole[::-1])
    ends = min(head + tail, len(whole))
    ends = ends if ends >= NOISE else 0  # a shared newline or bracket says nothing
    if cut_readings(text, original):
        return True, ends
    return (False, ends) if len(data) < len(whole) and ends >= MIN_ENDS else None


def match(text: str, candidates: Sequence[Original]) -> tuple[Original, bool] | None:
    """(the original *text* is, whether whole), or None when it is none of them: a cut is
    of the original an exact reading records and it keeps most of; a bare marker (nothing
    kept) of the original whose whole length it records, the longest if several."""
    for original in candidates:
        if original.text == text:
            return original, True
    scored = [(k, o) for o in candidates if (k := _score(text, o.text)) is not None]
    if not scored:
        return None
    best = max(k for k, _ in scored)
    # a tie: the original the largest count records (a digit of a marker's wording, the
    # 8 of "UTF-8", reads as a count too)
    top = sorted(
        (o for k, o in scored if k == best),
        key=lambda o: -max((r[2] for r in cut_readings(text, o.text)), default=0),
    )
    if best[1] == 0 and len({o.text for o in top}) > 1:
        whole = [
            o for o in top if any(r[2] == len(encoded(o.text)) for r in cut_readings(text, o.text))
        ]
        top = sorted(whole, key=lambda o: -len(encoded(o.text)))
        longest = (
            [o for o in top if len(encoded(o.text)) == len(encoded(top[0].text))] if top else []
        )
        if not top:
            return None
        if len({(o.role, o.checkpoint) for o in longest}) > 1:
            # a cut of one of them (its size is known), but of which cannot be told
            return evolve(longest[0], ambiguous=True), False
    return top[0], False


def matches(
    texts: Sequence[str], candidates: Sequence[Original], roles: Sequence[str | None] = ()
) -> list[tuple[str, Original, bool] | tuple[str, None, bool]]:
    """Each text with its original, of its role when one is given: preferably of a later
    event than the one before it (two messages may hold the same text)."""
    out: list[tuple[str, Original, bool] | tuple[str, None, bool]] = []
    after = -1
    for index, text in enumerate(texts):
        role = roles[index] if index < len(roles) else None
        mine = [c for c in candidates if role is None or c.role == role]
        # the log's order first; a compaction's replace may move a checkpoint up the surface
        later = [c for c in mine if c.at > after]
        whole = [c for c in [*later, *mine] if c.text == text]
        hit = (whole[0], True) if whole else match(text, later) or match(text, mine)
        if hit is None:
            out.append((text, None, False))
            continue
        after = max(after, hit[0].at)
        alike = {(c.role, c.checkpoint) for c in mine if c.text == hit[0].text}
        if len(alike) > 1:
            hit = (evolve(hit[0], ambiguous=True), hit[1])
        out.append((text, *hit))
    return out


# --- the typed account ----------------------------------------------------------------------


def _omitted(
    op: str, where: str, text: str, original: str, only_cut: bool, total: object
) -> object:
    """A cut message's omitted bytes, or ``Unreadable`` when they cannot be recovered."""
    if only_cut and isinstance(total, int):
        return total
    counts = {r[2] for r in cut_readings(text, original)}
    if counts:  # each an exact reading; a marker's own digits (UTF-8) read as a count too
        return max(counts)
    return Unreadable(
        op,
        where,
        "the exact omitted bytes of this text",
        "no count in the text, and protocol 2 records only the source's total",
    )


def account(
    op: str,
    where: str,
    found: Sequence[tuple[str, Original | None, bool]],
    omitted_messages: object,
    omitted_bytes: object,
    roles: Sequence[object] = (),
) -> dict[str, Any]:
    """The typed messages and counts of one source from its matched texts (*roles*: the
    roles the host wrote beside them, where it did)."""
    cuts = [i for i, (_, _, whole) in enumerate(found) if not whole]
    only_cut = len(cuts) == 1 and omitted_messages == 0
    messages = []
    for i, (text, original, whole) in enumerate(found):
        at = f"{where}/messages/{i}"
        role = roles[i] if i < len(roles) and roles[i] in ("user", "assistant") else None
        if original is None:  # a text of no message of the session: what it is, checks say
            unknown = "a text of the session, whole or cut"
            messages.append(
                {
                    "role": role or Unreadable(op, f"{at}/role", unknown, text),
                    "text": text,
                    "omittedBytes": Unreadable(op, f"{at}/omittedBytes", unknown, text),
                    "checkpoint": Unreadable(op, f"{at}/checkpoint", unknown, text),
                }
            )
            continue
        omitted = (
            0
            if whole
            else _omitted(op, f"{at}/omittedBytes", text, original.text, only_cut, omitted_bytes)
        )
        kind = "whose message it is (messages of several kinds hold this text)"
        messages.append(
            {
                "role": role
                or (
                    Unreadable(op, f"{at}/role", kind, text)
                    if original.ambiguous
                    else original.role
                ),
                "text": text,
                "omittedBytes": omitted,
                "checkpoint": Unreadable(op, f"{at}/checkpoint", kind, text)
                if original.ambiguous
                else original.checkpoint,
            }
        )
    count = (
        omitted_messages
        if isinstance(omitted_messages, int)
        else Unreadable(
            op, f"{where}/omittedMessages", "a count of dropped messages", omitted_messages
        )
    )
    return {"omittedMessages": count, "messages": messages}


def retained_account(args: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """retention.retain's typed ``source`` from its protocol-2 ``data`` and ``stats``."""
    data, stats = result.get("data"), result.get("stats")
    if not isinstance(data, Mapping) or not isinstance(stats, Mapping):
        missing = "data" if not isinstance(data, Mapping) else "stats"
        gone = Unreadable("retention.retain", f"/{missing}", "an object", None)
        return {"serializedBytes": gone, "omittedMessages": gone, "messages": gone}
    conversation = data.get("conversation")
    items = [m for m in conversation or () if isinstance(m, Mapping)]
    texts = [str(m.get("text")) for m in items]
    roles = [m.get("role") for m in items]
    known = [r if r in ("user", "assistant") else None for r in roles]
    found = matches(texts, originals(args.get("session")), known)
    out = account(
        "retention.retain",
        "/source",
        found,
        stats.get("omittedMessages"),
        stats.get("omittedBytes"),
        roles,
    )
    return {"serializedBytes": tag_safe_bytes(data), **out}


def _prompt(result: Mapping[str, Any]) -> str:
    (context,) = result["contexts"]
    blocks = context.get("content") if isinstance(context, Mapping) else None
    return "".join(
        b["text"] for b in blocks or () if isinstance(b, Mapping) and isinstance(b.get("text"), str)
    )


def _data_node(prompt: str) -> Node | None:
    """The JSON value right before the final closing tag, with spans (ENV-001's reading)."""
    end = prompt.rfind("</referenced-sessions>")
    if end < 0:
        return None
    body = prompt[:end].rstrip()
    for start, char in enumerate(body):
        if char in "[{":
            try:
                node = parse(body, start)
            except ValueError:
                continue
            if node.end == len(body):
                return node
    return None


def sources_account(args: Mapping[str, Any], result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """prepare's typed ``sources`` from its rendering and its protocol-2 meta records."""
    records = (result["contexts"][0].get("meta") or {}).get("references") or []
    records = [r for r in records if isinstance(r, Mapping)]
    refs = [r for r in args.get("references") or () if isinstance(r, Mapping)]
    ids = list(dict.fromkeys(str(r.get("sessionId")) for r in refs))
    prompt = _prompt(result)
    root = _data_node(prompt)
    recorded = [str(r.get("sessionId")) for r in records]
    members = members_of(root, ids, recorded) if root is not None else None
    if members is None:
        why = "no JSON value before the closing tag" if root is None else "no member per source"
        return [
            {
                "sessionId": Unreadable(
                    "prepare", "/sources", "one member per source in the rendering", why
                )
            }
        ]
    by_id = {str(r.get("sessionId")): r for r in records}
    skip = {str(r.get("label")) for r in refs if isinstance(r.get("label"), str)} | set(ids)
    sessions = args.get("sessions") or {}
    out = []
    for index, (sid, node) in enumerate(members):
        session = sessions.get(sid) if isinstance(sessions, Mapping) else None
        header = session.get("header") if isinstance(session, Mapping) else None
        cwd = header.get("cwd") if isinstance(header, Mapping) else None
        ignored = skip | ({cwd} if isinstance(cwd, str) else set())
        size = len(prompt[node.start : node.end].encode("utf-8", "surrogatepass"))
        if not isinstance(session, Mapping):  # its texts unknown: layout and messages alike
            gone = Unreadable("prepare", f"/sources/{index}/messages", "the session's texts", sid)
            out.append(
                {
                    "sessionId": sid,
                    "serializedBytes": size,
                    "omittedMessages": gone,
                    "messages": gone,
                }
            )
            continue
        texts = [t for t in strings(node) if t not in ignored]
        # a string of the rendering that is no text of the session (a role, a title) is
        # layout, not a message
        found = [m for m in matches(texts, originals(session)) if m[1] is not None]
        record = by_id.get(sid, {})
        typed = account(
            "prepare",
            f"/sources/{index}",
            found,
            record.get("omittedMessages"),
            record.get("omittedBytes"),
        )
        out.append({"sessionId": sid, "serializedBytes": size, **typed})
    return out
