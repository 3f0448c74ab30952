"""Mentions: ``@[label](dsh-session:…)`` in text, and bare URIs.

MENTION-* requirements.  The grammar is the seed-era upstream regex, applied with
JavaScript ``/u`` semantics: two alternatives tried in order at each position, an explicit
Markdown mention (its URI validated, so a malformed one is an error) or a bare URI whose
payload is a non-empty base64url-shaped run (which must still decode canonically).
JavaScript's ``\\s`` and ``.`` differ from Python's, so both are spelled out (D-2).
"""

from __future__ import annotations

import re
from typing import Final

from attrs import frozen

from dsh_conformance.model import jsstr, uri
from dsh_conformance.model.errors import DshError, ErrorCode

_NOT_TERMINATOR: Final = f"[^{jsstr.JS_LINE_TERMINATORS}]"
_URI_CHAR: Final = f"[^{re.escape(jsstr.JS_WHITESPACE)})]"
_PATTERN: Final = re.compile(
    r"@\[((?:\\" + _NOT_TERMINATOR + r"|[^\\\]])*)\]\((dsh-session:" + _URI_CHAR + r"*)\)"
    r"|(dsh-session:[A-Za-z0-9_-]+)"
)
_UNESCAPE: Final = re.compile(r"\\(" + _NOT_TERMINATOR + ")")
_ESCAPE: Final = re.compile(r"([\\\]])")


@frozen
class Reference:
    """One mention found in text: the decoded session id and its readable label."""

    session_id: str
    label: str

    def to_json(self) -> dict[str, str]:
        return {"sessionId": self.session_id, "label": self.label}


@frozen
class ParsedText:
    """Text with every mention replaced by ``@label``, and the references in order."""

    text: str
    references: tuple[Reference, ...]

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "references": [r.to_json() for r in self.references]}


def escape_label(label: str) -> str:
    """MENTION-002: a backslash before every ``\\`` and ``]``; nothing else changes."""
    return _ESCAPE.sub(r"\\\1", label)


def unescape_label(raw: str) -> str:
    """The inverse of ``escape_label`` for every label the grammar can capture."""
    return _UNESCAPE.sub(lambda m: m.group(1), raw)


def format_mention(session_id: str, label: str | None = None) -> str:
    """MENTION-001: ``@[escaped label](canonical URI)``; the label defaults to the id."""
    sid = uri._require_str(session_id, "session id")
    if label is not None and not isinstance(label, str):
        raise DshError(ErrorCode.INVALID_REFERENCE, "mention label must be a string")
    shown = sid if label is None else jsstr.canonical(label)
    return "@[" + escape_label(shown) + "](" + uri.encode(sid) + ")"


def _label_floor(text: str, pos: int, scheme: int) -> int:
    """Where the search for an explicit mention's ``@[`` may start, given that no match
    begins before *pos* and the next scheme is at *scheme*.

    A label ends at its first unescaped ``]`` (a backslash escapes the character after it,
    so a ``]`` is escaped exactly when an odd run of backslashes precedes it: the run
    cannot begin inside an ``@[``).  An ``@[`` before an unescaped ``]`` that lies before
    ``scheme - 2`` ends its label there, and the ``](dsh-session:`` it would then need is
    not there (*scheme* is the first scheme after *pos*): it cannot match.  So the search
    may skip to just after the last such ``]``; labels that fail for another reason (a
    backslash before a line terminator) are tried and rejected by the pattern.
    """
    end = scheme - 2
    while True:
        close = text.rfind("]", pos, end)
        if close < 0:
            return pos
        run = close
        while run > pos and text[run - 1] == "\\":
            run -= 1
        if (close - run) % 2 == 0:
            return close + 1
        end = run


def parse(text: str) -> ParsedText:
    """MENTION-003..MENTION-009: replace mentions by ``@label`` and list the references.

    References come in first-appearance order, duplicates and self-references included
    (``prepare`` removes those).  The first malformed explicit mention or non-canonical
    bare URI aborts the whole parse with INVALID_REFERENCE: there is no partial result.
    """
    if not isinstance(text, str):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "text must be a string")
    text = jsstr.canonical(text)
    found: list[Reference] = []
    out: list[str] = []
    pos = 0
    # A match can only start at "@[" or at the scheme, so try the pattern only there, in
    # order: the same leftmost scan as a global regex replace, without visiting every
    # character of a long text.  Every match contains the scheme, so an "@[" matters only
    # before the next scheme, and only after the last "]" that would end its label there
    # (``_label_floor``): the search for "@[" covers that short stretch, not the text.
    scheme = -1
    while True:
        if scheme < pos:
            scheme = jsstr.find(text, "dsh-session:", pos)
            if scheme < 0:
                if not pos:
                    return ParsedText(text, ())  # no mention at all: no copy
                break
        bracket = text.find("@[", _label_floor(text, pos, scheme), scheme)
        start = scheme if bracket < 0 else bracket
        match = _PATTERN.match(text, start)
        if match is None:
            out.append(text[pos : start + 1])
            pos = start + 1
            continue
        raw_label, markdown_uri, bare_uri = match.groups()
        sid = uri.decode(markdown_uri if markdown_uri is not None else bare_uri)
        label = unescape_label(raw_label) if markdown_uri is not None else sid
        found.append(Reference(sid, label))
        out.append(text[pos:start])
        out.append("@" + label)
        pos = match.end()
    out.append(text[pos:])
    return ParsedText("".join(out), tuple(found))
