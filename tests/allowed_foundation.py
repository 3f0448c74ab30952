"""Allowed differences in the foundation areas (URI, mention, serialization, candidates).

Each wraps the reference model and differs from it only where the notes allow (issue 10
item 4): it must pass every seed requirement and be reported failing reference-profile
ids only; tests/test_allowed_foundation.py runs each through the CLI.  Selectable as
``python:allowed_foundation:<factory>`` with ``tests/`` on the path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from fauxmplementations import INVALID, _Broken

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.model import mentions
from dsh_conformance.model.candidates import display_inline
from dsh_conformance.model.config import ReferenceConfig

#: A limit that lists every session (the largest safe integer).
EVERYTHING: Final = 2**53 - 1
#: JavaScript whitespace under /u.
_JS_WS: Final = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: '@[' label '](' then a URI with whitespace inside the parentheses: a near miss (D-9).
_NEAR_MISS: Final = re.compile(
    r"@\[(?:\\[^\n\r\u2028\u2029]|[^\\\]])*\]\(dsh-session:[^)]*[" + _JS_WS + r"][^)]*\)"
)


class _Allowed(_Broken):
    name = "allowed"


def _limit(args: Mapping[str, Any]) -> Any:
    return args.get("limit", ReferenceConfig.from_json(args.get("config")).candidate_limit)


class TitleSearch(_Allowed):
    """Discovery also matches the latest title: the note's 'future title/body search can
    replace the candidate layer' (D-48).  Profile: HOST-011."""

    name = "title search"

    def op_candidates_list(self, args: Mapping[str, Any]) -> Any:
        self.reference.call("candidates.list", args)  # the same errors, limit checks first
        needle = str(args.get("query", "")).lower()
        every = self.reference.call("candidates.list", {**args, "query": "", "limit": EVERYTHING})
        kept = [
            c
            for c in every
            if needle in c["sessionId"].lower()
            or needle in c.get("cwd", "\0").lower()
            or needle in c["label"].lower()
        ]
        return kept[: _limit(args)]


def _collation_key(text: str) -> tuple[str, str]:
    """Case-insensitive first, lower case before upper case: how ICU's root collation
    (String.prototype.localeCompare) orders simple ids, unlike UTF-16 code units."""
    return (text.casefold(), text.swapcase())


class LocaleTies(_Allowed):
    """createdAt ties ordered by localeCompare, as the seed-era session-query does (D-49).
    Profile: HOST-009."""

    name = "locale-aware tie order"

    def op_candidates_list(self, args: Mapping[str, Any]) -> Any:
        shown = self.reference.call("candidates.list", args)
        every = self.reference.call("candidates.list", {**args, "limit": EVERYTHING})
        target_cwd = (args.get("target") or {}).get("cwd")

        def rank(c: Mapping[str, Any]) -> int:
            cwd = c.get("cwd")
            if cwd is not None and target_cwd is not None and cwd == target_cwd:
                return 0
            return 1 if cwd is None else 2

        every.sort(key=lambda c: (rank(c), -c["createdAt"], _collation_key(c["sessionId"])))
        return every[: len(shown)]


class OtherUriCode(_Allowed):
    """A non-string URI fails with a TypeError-like DSH_INVALID_ARGUMENT, as the seed-era
    code's TypeError maps (D-7).  Profile: URI-005."""

    name = "another code for a non-string URI"

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        if not isinstance(args.get("uri"), str):
            raise ImplementationError("DSH_INVALID_ARGUMENT", "uri must be a string")
        return self.reference.call("uri.decode", args)


class _Relabel(_Allowed):
    """Labels from the latest session/title event under another rule (D-50)."""

    def label(self, title: object, session_id: str) -> str | None:
        """The label for the latest title event's *title*, or None to keep the model's."""
        raise NotImplementedError

    def op_candidates_list(self, args: Mapping[str, Any]) -> Any:
        got = self.reference.call("candidates.list", args)
        sessions = args.get("sessions") or {}
        by_id = {s["header"]["id"]: s for s in sessions.values()}
        for c in got:
            titles = [
                e.get("data", {}).get("title")
                for e in by_id[c["sessionId"]].get("events", [])
                if e.get("type") == "session/title"
            ]
            if not titles:
                continue
            label = self.label(titles[-1], c["sessionId"])
            if label is not None:
                c["label"] = label
                c["display"]["label"] = display_inline(label)
                c["mention"] = mentions.format_mention(c["sessionId"], display_inline(label))
        return got


class NonStringTitleAsId(_Relabel):
    """A malformed (non-string) latest title means no title: the label is the id.
    Profile: HOST-012."""

    name = "non-string title falls back to the id"

    def label(self, title: object, session_id: str) -> str | None:
        return None if isinstance(title, str) else session_id


class EmptyTitleAsId(_Relabel):
    """An empty latest title falls back to the id ('||' rather than '??').
    Profile: HOST-012."""

    name = "empty title falls back to the id"

    def label(self, title: object, session_id: str) -> str | None:
        return session_id if title == "" else None


class StrictMentions(_Allowed):
    """Rejects an explicit mention whose parenthesised URI holds whitespace instead of
    reading the URI as bare text: 'Explicit Markdown mentions reject malformed URIs'
    (D-9).  Profile: MENTION-010 (and REF-001 when the random mix draws such text)."""

    name = "near-miss mentions rejected"

    def op_mention_parse(self, args: Mapping[str, Any]) -> Any:
        text = args.get("text")
        if isinstance(text, str) and _NEAR_MISS.search(text):
            raise ImplementationError(INVALID, "malformed explicit mention")
        return self.reference.call("mention.parse", args)


class PrefixQuery(_Allowed):
    """A query matches the start of the id or of the cwd, as typed: 'v1 discovery filters
    only id and cwd' names the fields, not how a query matches them (D-253).
    Profile: HOST-011 (substring, any case)."""

    name = "prefix query on id and cwd"

    def op_candidates_list(self, args: Mapping[str, Any]) -> Any:
        self.reference.call("candidates.list", args)  # the same errors, limit checks first
        needle = str(args.get("query", ""))
        every = self.reference.call("candidates.list", {**args, "query": "", "limit": EVERYTHING})
        kept = [
            c
            for c in every
            if c["sessionId"].startswith(needle) or str(c.get("cwd", "\0")).startswith(needle)
        ]
        return kept[: _limit(args)]


class ListsTheTarget(_Allowed):
    """Offers the target session among its own candidates: the note neither excludes it
    nor orders candidates (D-49, D-253).  Profile: HOST-009."""

    name = "the target is a candidate too"

    def op_candidates_list(self, args: Mapping[str, Any]) -> Any:
        got = self.reference.call("candidates.list", args)
        target = args.get("target") or {}
        sessions = args.get("sessions") or {}
        own = [s for s in sessions.values() if s.get("header", {}).get("id") == target.get("id")]
        if not own or len(got) >= _limit(args):
            return got
        query = str(args.get("query", "")).lower()
        header = own[0]["header"]
        if (
            query
            and query not in header["id"].lower()
            and query not in str(header.get("cwd", "\0")).lower()
        ):
            return got
        alone = self.reference.call(
            "candidates.list",
            {**args, "target": {"id": "\0none"}, "sessions": {"t": own[0]}, "query": ""},
        )
        return [*got, *alone]


#: A bare 'dsh-session:' whose run is only '-' and '_' (not inside an explicit mention).
_PUNCTUATION_ONLY: Final = re.compile(r"(?<!\]\()dsh-session:(?=[-_]+(?![A-Za-z0-9_-]))")
_HIDDEN: Final = "\ue000dsh\ue001session:"


class PunctuationPayloadsAreText(_Allowed):
    """'dsh-session:-' stays text: the note's "punctuation-only uses remain ordinary
    discussion text", where D-10 reads '-' as a payload that fails to decode (D-255).
    Profile: MENTION-008."""

    name = "punctuation-only payloads are text"

    def op_mention_parse(self, args: Mapping[str, Any]) -> Any:
        text = args.get("text")
        if not isinstance(text, str) or not _PUNCTUATION_ONLY.search(text):
            return self.reference.call("mention.parse", args)
        hidden = _PUNCTUATION_ONLY.sub(_HIDDEN, text)
        parsed = self.reference.call("mention.parse", {**args, "text": hidden})
        return {**parsed, "text": parsed["text"].replace(_HIDDEN, "dsh-session:")}


def prefix_query() -> PrefixQuery:
    return PrefixQuery()


def lists_the_target() -> ListsTheTarget:
    return ListsTheTarget()


def punctuation_is_text() -> PunctuationPayloadsAreText:
    return PunctuationPayloadsAreText()


def title_search() -> TitleSearch:
    return TitleSearch()


def locale_ties() -> LocaleTies:
    return LocaleTies()


def other_uri_code() -> OtherUriCode:
    return OtherUriCode()


def non_string_title() -> NonStringTitleAsId:
    return NonStringTitleAsId()


def empty_title() -> EmptyTitleAsId:
    return EmptyTitleAsId()


def strict_mentions() -> StrictMentions:
    return StrictMentions()
