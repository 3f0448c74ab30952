"""Adapter text is inert in report.md and report.html (issue 43 item 5, D-464).

An implementation controls its name, version, components, messages, error codes, texts
and the test ids its values end up in.  None of it may become a link, an image, HTML, a
code span or a broken table in a CI step summary, nor markup in report.html.  Rendered
Markdown is parsed as CommonMark with GFM tables (markdown-it-py); HTML with the standard
library's parser.  Catches: ``![x](http://…/p.png)`` in the heading of report.md (a live
image in the step summary), a pipe or newline breaking a table row, a backtick closing a
code span, a bare URL becoming a link.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from dsh_conformance.adapters.wire import printable
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting import html, markdown

#: Pieces of markup an adapter might send, mixed with arbitrary text.
HOSTILE = (
    "![x](http://evil.example/p.png)",
    "[link](http://evil.example/)",
    "<http://evil.example/>",
    "http://evil.example/p.png",
    "www.evil.example",
    "mail@evil.example",
    '<img src="http://evil.example/i.png" onerror="window.__pwned=1">',
    "<script>window.__pwned=2</script>",
    "</code></pre>",
    "<!--",
    "`",
    "```",
    "|",
    "\\|",
    "\n",
    "\r\n",
    "\n| a | b |\n|---|---|\n",
    "\x1b[31m",
    "\x1b]8;;http://evil.example\x07",
    "\x9b",
    "\u202e",
    "&lt;b&gt;",
    "&#x3C;img&#x3E;",
    "*em*",
    "_u_",
    "~~s~~",
    "\\",
    "# heading",
    "> quote",
    "- item",
    "[^1]",
    "<br>",
    "<details>",
)
hostile_text = st.lists(
    st.one_of(st.sampled_from(HOSTILE), st.text(max_size=8)), min_size=1, max_size=6
).map("".join)

#: The markup report.md emits itself: nothing else may appear.
OWN_HTML = {"<br>", "<details><summary>Python traceback</summary>", "</details>"}
OWN_HTML_PREFIXES = ("<details><summary>",)
OWN_LINKS = {"#expected"}
#: A cell separator: a pipe after an even number of backslashes.
PIPE = re.compile(r"(?<!\\)(?:\\\\)*\|")


def hostile_record(name: str, version: str, message: str, param: str) -> RunRecord:
    """A run whose every adapter-controlled string is *hostile*: an unexpected failure,
    an expected one, an unreadable result and a review text."""
    header = {
        "suite_version": "0",
        "spec_profile": "seed",
        "expectations": "adapters/expectations/upstream.toml",
        "hypothesis": {"profile": "quick", "seed": 1},
        "adapter": {
            "name": f"subprocess:{name}",
            "capabilities": ["uri", name],
            "implementation": {
                "name": name,
                "version": version,
                "components": {name: version, "@x/b": message},
            },
        },
    }
    tests = (
        TestResult(
            f"conformance/test_uri.py::test_encode[{param}]",
            Outcome.FAIL,
            ("URI-001",),
            message=message,
            blame=("URI-001",),
            failure={
                "checks": [
                    {
                        "requirement": "URI-001",
                        "message": message,
                        "input": {"id": name},
                        "expected": version,
                        "actual": message,
                    }
                ]
            },
        ),
        TestResult(
            f"conformance/test_uri.py::test_decode[{param}]",
            Outcome.XFAIL,
            ("URI-002",),
            message=message,
            blame=("URI-002",),
            detail="fail",
            expectation=f"conformance/test_uri.py::test_decode[{param}]",
            expectation_reason=message,
        ),
        TestResult(
            "conformance/test_uri.py::test_round_trip",
            Outcome.PROTOCOL,
            ("URI-003",),
            message=f"[DSH_{name}] {message}",
            request=name,
        ),
    )
    return RunRecord(header, tests, {"status": "complete", "expectation_problems": []})


def _markdown_problems(text: str) -> list[str]:
    """Everything in rendered Markdown that is markup the report did not emit itself."""
    parser = MarkdownIt("commonmark").enable("table")
    found = []

    def walk(tokens: list[Any]) -> None:
        for token in tokens:
            if token.type == "image":
                found.append(f"image {token.attrGet('src')}")
            if token.type == "link_open" and token.attrGet("href") not in OWN_LINKS:
                found.append(f"link {token.attrGet('href')}")
            if token.type in ("html_inline", "html_block"):
                raw = token.content.strip()
                if raw not in OWN_HTML and not raw.startswith(OWN_HTML_PREFIXES):
                    found.append(f"html {raw[:80]!r}")
            if token.children:
                walk(token.children)

    tokens = parser.parse(text)
    walk(tokens)
    # every row of every table has as many cell separators as its header: no pipe or
    # newline of adapter text broke one (GFM pads or drops cells silently)
    lines = text.splitlines()
    for token in tokens:
        if token.type == "table_open" and token.map:
            start, end = token.map
            widths = {len(PIPE.findall(line)) for line in lines[start:end]}
            if len(widths) != 1:
                found.append(f"broken table at line {start + 1}: {sorted(widths)}")
    return found


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=hostile_text, version=hostile_text, message=hostile_text, param=hostile_text)
def test_hostile_adapter_text_renders_inert(
    name: str, version: str, message: str, param: str
) -> None:
    record = hostile_record(name, version, message, param)
    md = markdown.render(record)
    assert _markdown_problems(md) == []
    heading = MarkdownIt("commonmark").parseInline(md.splitlines()[0].removeprefix("## "))
    shown = "".join(t.content for t in heading[0].children or [] if t.type == "text")
    label = printable(record.adapter_label, keep_newlines=False)
    if len(label) < 390:  # the heading shows the name as text, whole
        assert shown == f"dsh-conformance: {label}"

    page = html.render([record])
    tags = _Tags()
    tags.feed(page)
    names = [tag for tag, _ in tags.tags]
    assert "img" not in names
    assert names.count("script") == 1  # the report's own filter
    for tag, attrs in tags.tags:
        handlers = [v for a, v in attrs if a.startswith("on")]
        assert set(handlers) <= {"applyFilter()"}, (tag, attrs)  # only the report's own
        if tag == "a":
            assert all(v is not None and v.startswith("#") for a, v in attrs if a == "href")
    assert printable(name) in "".join(tags.text)  # shown as text
