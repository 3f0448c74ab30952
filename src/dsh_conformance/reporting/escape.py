"""Escaping adapter text for terminals, Markdown, XML and HTML.

An implementation controls its error messages, its stderr and its handshake name; none
of that may drive a terminal (ANSI/OSC sequences, C1 controls), inject rich markup,
break a Markdown table or script an HTML report.
"""

from __future__ import annotations

import html
import re
from typing import Final

from dsh_conformance.adapters.wire import printable

#: Characters XML 1.0 cannot hold at all (even escaped).
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def for_terminal(text: str) -> str:
    """Plain text safe to print (controls spelled out).  Use with rich ``Text``, not markup.

    A character a terminal cannot show (unassigned, private use, a format character) is
    spelled as JavaScript writes it, ``\\u2060`` or ``\\u{9c4bf}``: never Python's
    ``\\U0009c4bf``, and never raw."""
    out = printable(text)
    if out.isprintable():
        return out
    return "".join(ch if ch.isprintable() or ch in "\n\t" else _js_escape(ch) for ch in out)


def _js_escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\u{{{code:x}}}"


def for_html(text: str) -> str:
    return html.escape(printable(text), quote=True)


def for_xml(text: str) -> str:
    """Text for ElementTree (which escapes <&> itself but not forbidden characters)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", printable(text))


#: Markdown punctuation that can open markup: emphasis, code, links and images
#: (``[``/``]``), table cells and the backslash itself.  Each is backslash-escaped, which
#: CommonMark renders as the character itself.
_MD_PUNCT: Final = re.compile(r"[\\`*_~\[\]|]")
#: What GFM turns into a link without any punctuation of the above: bare URLs
#: (``scheme://``, ``www.``) and e-mail addresses.  Escaping the character that triggers
#: the autolink (``:``, the ``.`` after ``www``, ``@``) keeps the text and drops the link.
_MD_AUTOLINK: Final = re.compile(
    r"(?<=[A-Za-z0-9])(:)(?=//)|(?<=www)(\.)|(?<=[A-Za-z0-9._+-])(@)", re.IGNORECASE
)


def markdown_text(text: str) -> str:
    """*text* as inert Markdown inline text: shown as written, never markup (issue 43).

    Controls are spelled out (``printable``), Markdown punctuation and autolink triggers
    are backslash-escaped, ``<``, ``>`` and ``&`` become character references, so no link,
    image, HTML, emphasis or code span can come out of it.  Newlines are kept: use
    ``for_markdown_cell`` for one line.
    """
    escaped = _MD_PUNCT.sub(lambda m: "\\" + m.group(), printable(text))
    escaped = html.escape(escaped, quote=False)
    return _MD_AUTOLINK.sub(lambda m: "\\" + m.group(), escaped)


def for_markdown_cell(text: str, limit: int = 160, *, breaks: bool = False) -> str:
    """One line of inert Markdown for a table cell or a list item: no pipes, no newlines,
    no HTML, no link or image (``markdown_text``); cut at *limit* characters of the text.

    With *breaks*, the text's own line breaks become ``<br>`` (the one tag emitted),
    so a multi-line failure message keeps its lines in a rendered table.
    """
    if breaks:
        lines = text[: limit * 2].splitlines()
        cells = [for_markdown_cell(line, limit) for line in lines]
        joined = "<br>".join(c for c in cells if c.strip())
        return joined if len(joined) <= limit else _cut(joined, limit)
    one = printable(text, keep_newlines=False)
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    return markdown_text(one)


def _cut(escaped: str, limit: int) -> str:
    """*escaped* cut at *limit* without splitting an escape, a reference or a ``<br>``."""
    cut = escaped[: limit - 1]
    cut = re.sub(r"(\\|&[a-z]*|<[a-z]*)$", "", cut)
    return cut + "…"


def for_markdown_code(text: str, limit: int = 300) -> str:
    """*text* as one inert Markdown code span (a test id, a command): a fence longer than
    any backtick run inside, pipes escaped for a table cell (GFM reads ``\\|`` there).
    Text with a backslash is inert text instead: in a table cell GFM would pair the
    backslash with the pipe's escape and split the cell."""
    one = printable(text, keep_newlines=False)
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    if "\\" in one:  # GFM reads a backslash before an escaped pipe as an escape pair
        return markdown_text(one)
    one = one.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", one)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one.startswith("`") or one.endswith("`") or longest else ""
    return f"{fence}{pad}{one}{pad}{fence}"


def markdown_with_code(text: str, limit: int = 1000) -> str:
    """Our own sentence whose backtick spans are code (``coverage lost: `agent` 210``):
    each span a code span, the rest inert text, whatever an adapter put in either."""
    parts = printable(text, keep_newlines=False)[:limit].split("`")
    if len(parts) % 2 == 0:  # an unbalanced backtick: no code at all
        return for_markdown_cell(text, limit)
    return "".join(
        for_markdown_code(part) if i % 2 else markdown_text(part) for i, part in enumerate(parts)
    )


def html_with_code(text: str) -> str:
    """Our own sentence whose backtick spans are ``<code>``, every part HTML-escaped."""
    parts = printable(text).split("`")
    if len(parts) % 2 == 0:
        return for_html(text)
    return "".join(
        f"<code>{for_html(part)}</code>" if i % 2 else for_html(part)
        for i, part in enumerate(parts)
    )


#: Characters JSON may carry raw but a terminal or a text viewer may act on.
_JSON_UNSAFE: Final = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_text(value: object) -> str:
    """``JSON.stringify`` with C1 controls, DEL and bidi characters as ``\\uXXXX`` escapes:
    the same JSON value, but safe to print or ``cat``."""
    from dsh_conformance.model import jsstr

    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", jsstr.stringify(value))


def show_value(value: object, limit: int = 0) -> str:
    """A value as people read it in a report: JSON (what crossed the wire), escaped
    like ``json_text``; tuples and sets as arrays; anything else as its ``repr``."""

    def plain(item: object) -> object:
        if getattr(type(item), "__dsh_unreadable__", False):  # unjudged.Unreadable: as seen
            return plain(getattr(item, "seen_value", None))
        if isinstance(item, (tuple, list)):
            return [plain(i) for i in item]
        if isinstance(item, (set, frozenset)):
            return [plain(i) for i in sorted(item, key=repr)]
        if isinstance(item, dict):
            return {str(k): plain(v) for k, v in item.items()}
        return item

    try:
        text = json_text(plain(value))
    except (TypeError, ValueError):
        text = printable(repr(value), keep_newlines=False)
    return text if not limit or len(text) <= limit else text[: limit - 1] + "…"


def markdown_block(text: str) -> str:
    """*text* as a fenced Markdown code block that no backtick run inside can close."""
    safe = printable(text)
    longest = max((len(run) for run in re.findall("`+", safe)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{safe}\n{fence}"
