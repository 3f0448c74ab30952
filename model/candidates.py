"""Candidate discovery for mention completion (seed 000 "Decision" ¶3, "Host adapters").

HOST-002..HOST-005, HOST-009.  v1 discovery filters only the id and cwd (case-insensitive
substring), excludes the target itself, ranks by cwd affinity (same cwd, then no cwd,
then other cwds), and labels each candidate with the latest folded ``session/title``,
falling back to the id.  Display strings escape external terminal controls while the
canonical URI keeps the original id (D-48..D-52).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from dsh_conformance.model import jsstr, mentions, uri
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.session import Event, SessionHeader, is_safe_int

#: C0 controls except LF, DEL and C1 controls: escaped as ``\\xHH`` (D-51).
_CONTROLS: Final = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def display_text(text: str) -> str:
    """Escape external C0/C1 controls as literal ``\\xHH`` (lowercase); LF stays."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def display_inline(text: str) -> str:
    """``display_text`` for one-line fields: LF is escaped too, as ``\\x0a`` (HOST-004)."""
    return display_text(text).replace("\n", "\\x0a")


def latest_title(events: Sequence[Event]) -> str | None:
    """The title of the latest ``session/title`` event with a string title (D-50)."""
    for event in reversed(events):
        if event.type == "session/title" and isinstance(event.data, Mapping):
            title = event.data.get("title")
            if isinstance(title, str):
                return title
    return None


@frozen
class SessionRecord:
    """What discovery knows about one session: its header and its latest title."""

    header: SessionHeader
    title: str | None = None


@frozen
class Candidate:
    """One completion candidate."""

    session_id: str
    label: str
    cwd: str | None
    created_at: int

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sessionId": self.session_id, "label": self.label}
        if self.cwd is not None:
            out["cwd"] = self.cwd
        out["createdAt"] = self.created_at
        display_label = display_inline(self.label)
        out["uri"] = uri.encode(self.session_id)
        out["mention"] = mentions.format_mention(self.session_id, display_label)
        out["display"] = {
            "sessionId": display_inline(self.session_id),
            "label": display_label,
            "cwd": None if self.cwd is None else display_inline(self.cwd),
        }
        return out


def _rank(candidate_cwd: str | None, target_cwd: str | None) -> int:
    if candidate_cwd is not None and target_cwd is not None and candidate_cwd == target_cwd:
        return 0
    return 1 if candidate_cwd is None else 2


def _code_units(s: str) -> bytes:
    return s.encode("utf-16-be", "surrogatepass")


def list_candidates(
    target_id: str,
    target_cwd: str | None,
    records: Sequence[SessionRecord],
    query: str = "",
    limit: int = 50,
) -> list[Candidate]:
    """HOST-002, HOST-003, HOST-009: filter, exclude self, rank by cwd, limit, label by title.

    Listing order is createdAt descending, ties by UTF-16 code-unit order of the id
    (D-49); ranking is a stable sort on top of it.
    """
    if not is_safe_int(limit, minimum=1):
        raise DshError(
            ErrorCode.INVALID_REFERENCE, "candidate limit must be a positive safe integer"
        )
    if not isinstance(query, str):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "query must be a string")
    needle = jsstr.canonical(query).lower()
    listed = sorted(records, key=lambda r: _code_units(r.header.id))
    listed.sort(key=lambda r: r.header.created_at, reverse=True)
    kept = [
        r
        for r in listed
        if r.header.id != target_id
        and (
            not needle
            or needle in r.header.id.lower()
            or (r.header.cwd is not None and needle in r.header.cwd.lower())
        )
    ]
    kept.sort(key=lambda r: _rank(r.header.cwd, target_cwd))
    return [
        Candidate(
            r.header.id,
            r.header.id if r.title is None else r.title,
            r.header.cwd,
            r.header.created_at,
        )
        for r in kept[:limit]
    ]
