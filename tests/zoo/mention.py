"""Mention defects: ``@[label](uri)`` formatting and parsing (MENTION-*)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any

from dsh_conformance.model import jsstr, mentions, uri
from dsh_conformance.model.errors import DshError
from zoo import Area
from zoo._base import Broken, Patch

AREA = Area(capabilities=["mention", "uri"], requirements=["MENTION-*"])

_EXPLICIT = r"@\[((?:\\[^\n\r\u2028\u2029]|[^\\\]])*)\]\("


def _pattern(explicit_uri: str, bare: str) -> re.Pattern[str]:
    return re.compile(_EXPLICIT + "(" + explicit_uri + r")\)|(" + bare + ")")


class UnescapedLabels(Broken):
    name = "unescaped labels"
    invariant = "Formats a mention without escaping '\\' and ']' in its label."
    kills = frozenset({"MENTION-002"})
    collateral_ok = frozenset({"MENTION-006", "MENTION-007"})

    def patches(self) -> tuple[Patch, ...]:
        return ((mentions, "escape_label", lambda label: label),)


class LabelsNotUnescaped(Broken):
    name = "labels kept escaped"
    invariant = "Parses a mention's label without removing its escaping backslashes."
    kills = frozenset({"MENTION-002"})
    collateral_ok = frozenset(
        {"MENTION-006", "MENTION-007", "MENTION-009"}
    )  # the same defect breaks these too

    def patches(self) -> tuple[Patch, ...]:
        return ((mentions, "unescape_label", lambda raw: raw),)


class MalformedMarkdownIsText(Broken):
    name = "malformed Markdown mention kept as text"
    invariant = (
        "Matches an explicit mention only when its URI payload is base64url-shaped, so "
        "`@[x](dsh-session:%%%)` stays ordinary text instead of being rejected."
    )
    kills = frozenset({"MENTION-003"})
    # '@[](dsh-session:%%%)' is label grammar to the seed (D-255) but a malformed mention
    # to the profile, whose code check it fails (MENTION-008).
    collateral_ok = frozenset({"MENTION-008", "MENTION-009"})

    def patches(self) -> tuple[Patch, ...]:
        shaped = _pattern(r"dsh-session:[A-Za-z0-9_-]+", r"dsh-session:[A-Za-z0-9_-]+")
        return ((mentions, "_PATTERN", shaped),)


class GreedyBareUri(Broken):
    name = "bare URI swallows trailing punctuation"
    invariant = "A bare URI's payload runs over '.', so `dsh-session:<id>.` ends a sentence badly."
    kills = frozenset({"MENTION-008", "MENTION-009", "MENTION-010"})
    # 'dsh-session:<id>.' fails where the boundary '.' stays text (MENTION-005): the
    # static case mention-parse-boundary blames it once cases blame their ids (D-252).
    collateral_ok = frozenset({"MENTION-004", "MENTION-005"})

    def patches(self) -> tuple[Patch, ...]:
        greedy = _pattern(r"dsh-session:[^\s)]*", r"dsh-session:[A-Za-z0-9_.-]+")
        return ((mentions, "_PATTERN", greedy),)


class DedupedReferences(Broken):
    name = "parser dedupes references"
    invariant = "Drops repeated references while parsing (deduplication belongs to prepare)."
    kills = frozenset({"MENTION-006"})

    def op_mention_parse(self, args: Mapping[str, Any]) -> Any:
        parsed = self.reference.call("mention.parse", args)
        seen: set[str] = set()
        kept = []
        for ref in parsed["references"]:
            if ref["sessionId"] not in seen:
                seen.add(ref["sessionId"])
                kept.append(ref)
        return {**parsed, "references": kept}


class RawMentionText(Broken):
    name = "mentions left raw in the text"
    invariant = "Returns the text with the raw Markdown mentions instead of readable `@label`."
    kills = frozenset({"MENTION-007"})
    collateral_ok = frozenset(
        {"MENTION-005", "MENTION-006", "MENTION-009", "MENTION-010"}
    )  # the same defect breaks these too

    def op_mention_parse(self, args: Mapping[str, Any]) -> Any:
        parsed = self.reference.call("mention.parse", args)
        return {**parsed, "text": args.get("text")}


class MarkdownLinks(Broken):
    name = "mentions formatted as Markdown links"
    invariant = "Formats a mention as a plain Markdown link `[label](uri)`, without the `@`."
    kills = frozenset({"MENTION-001"})
    # The link parses back as a bare URI, so the label (MENTION-002), the readable text
    # (MENTION-007) and the labels of repeated references (MENTION-006) are lost with it.
    collateral_ok = frozenset({"MENTION-002", "MENTION-006", "MENTION-007"})

    def op_mention_format(self, args: Mapping[str, Any]) -> Any:
        return str(self.reference.call("mention.format", args)).removeprefix("@")


def _lenient_id(payload: str) -> str | None:
    """What ``JSON.parse(Buffer.from(payload, 'base64url').toString())`` reads, or None."""
    usable = payload[: len(payload) - 1] if len(payload) % 4 == 1 else payload
    try:
        raw = base64.urlsafe_b64decode(usable + "=" * (-len(usable) % 4))
        value = json.loads(raw.decode("utf-8", "replace"))
    except (binascii.Error, ValueError):
        return None
    return value if isinstance(value, str) else None


class LenientBareUris(Broken):
    name = "bare URIs decoded leniently"
    invariant = (
        "Decodes a bare URI's payload as Buffer.from(..., 'base64url') does (stray trailing "
        "characters and bits ignored) without checking the decode is canonical."
    )
    kills = frozenset({"MENTION-004"})

    def op_mention_parse(self, args: Mapping[str, Any]) -> Any:
        text = args.get("text")
        if not isinstance(text, str):
            return self.reference.call("mention.parse", args)
        out, pos = [], 0
        for match in mentions._PATTERN.finditer(text):
            bare = match.group(3)
            if bare is None:
                continue
            try:
                uri.decode(bare)
                continue
            except DshError:
                sid = _lenient_id(bare[len(uri.SCHEME) :])
            if sid is not None:
                out += [text[pos : match.start(3)], uri.encode(jsstr.canonical(sid))]
                pos = match.end(3)
        return self.reference.call("mention.parse", {**args, "text": "".join(out) + text[pos:]})


MEMBERS = (
    UnescapedLabels,
    LabelsNotUnescaped,
    MalformedMarkdownIsText,
    GreedyBareUri,
    DedupedReferences,
    RawMentionText,
    MarkdownLinks,
    LenientBareUris,
)
