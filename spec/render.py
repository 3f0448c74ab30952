"""Render the requirement catalog to one readable Markdown page (spec/CATALOG.md).

The TOML files are the source of truth; the page is generated so people can read and
cite the catalog on a code host.  ``python -m dsh_conformance.spec.render > spec/CATALOG.md``
regenerates it, and tests/test_catalog.py fails when the committed page is stale.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from functools import cache

from dsh_conformance.spec import Catalog, Requirement, load_catalog
from dsh_conformance.spec.traceability import cited_tests

AREAS = {
    "URI": "dsh-session: URIs",
    "MENTION": "Mentions in text",
    "SER": "Tag-safe serialization",
    "JS": "JavaScript strings",
    "PROJ": "Projection of the current surface",
    "RET": "Per-source byte retention",
    "ENV": "The prepared context and the prompt envelope",
    "PREP": "prepare()",
    "HOST": "Host adapters and candidate discovery",
    "INBOX": "Inbox (message) ownership",
    "SIDE": "Interactive side sessions",
    "REL": "Release profile (the published 0.1.0-rc.8 behaviour)",
    "GEN": "General (informative)",
}
SEEDS = {
    "000": "seed 000 (cross-session references)",
    "004": "seed 004 (side sessions)",
    "decision": "decision",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def marked_quote(req: Requirement) -> str:
    """The quote with the requirement's own clause in bold (shared sentences)."""
    if not req.clause:
        return req.quote
    return req.quote.replace(req.clause, f"**{req.clause}**", 1)


def tests_line(tests: tuple[str, ...]) -> str:
    """``test_x.py::test_y`` names, then the static cases (``file:case``) that cite it."""
    functions = [t.removeprefix("conformance/") for t in tests if "[" not in t]
    cases = [t.split("[", 1)[1].rstrip("]") for t in tests if "[" in t]
    parts = []
    if functions:
        parts.append(", ".join(f"`{f}`" for f in functions))
    if cases:
        parts.append("cases " + ", ".join(f"`{c}`" for c in cases))
    return "; ".join(parts) if parts else "none"


def _requirement(req: Requirement) -> list[str]:
    lines = [f"### {req.id} — {req.title}", ""]
    meta = [
        f"**{req.level}**",
        SEEDS[req.seed],
        f"capability `{req.capability}`",
    ]
    if req.profiles != ("seed",):
        meta.append("profiles " + ", ".join(req.profiles))
    if req.decisions:
        meta.append("decisions " + ", ".join(f"[{d}](#{d.lower()})" for d in req.decisions))
    if req.verification:
        meta.append("covers " + ", ".join(req.verification))
    lines += [" · ".join(meta), "", f"> {marked_quote(req)}", ""]
    if req.note:
        lines += [req.note, ""]
    tests = cited_tests().get(req.id, ())
    if tests or req.level != "informative":
        lines += [f"*Tests:* {tests_line(tests)}", ""]
    page = _example_pages().get(req.id)
    if page is not None:
        anchor = re.sub(r"[^a-z0-9 -]", "", f"{req.id} — {req.title}".lower()).replace(" ", "-")
        lines += [f"*Examples:* [docs/examples/{page}.md](../docs/examples/{page}.md#{anchor})", ""]
    return lines


@cache
def _example_pages() -> dict[str, str]:
    """Requirement id -> the examples page that shows it (spec/examples/*.toml)."""
    from dsh_conformance.spec.examples import pages

    return {req: page.name for page in pages() for req in page.requirements()}


def render(catalog: Catalog) -> str:
    """The whole catalog as Markdown (deterministic: same catalog, same bytes)."""
    by_area: dict[str, list[Requirement]] = defaultdict(list)
    for req in catalog.requirements.values():
        by_area[req.area].append(req)
    levels: dict[str, int] = defaultdict(int)
    for req in catalog.requirements.values():
        levels[req.level] += 1
    out = [
        "# Requirement catalog",
        "",
        "Generated from `spec/requirements/*.toml`, `spec/decisions/*.toml`,",
        "`spec/verification.toml` and the requirement marks of the suite by",
        "`python -m dsh_conformance.spec.render`; do not edit. Where several requirements",
        "quote one sentence, each one's own clause is in **bold**.",
        "",
        f"{len(catalog.requirements)} requirements ("
        + ", ".join(f"{n} {lvl}" for lvl, n in sorted(levels.items()))
        + f"), {len(catalog.decisions)} decisions.",
        "",
        "| area | requirements |",
        "| --- | --- |",
    ]
    order = [a for a in AREAS if a in by_area] + sorted(set(by_area) - set(AREAS))
    for area in order:
        out.append(f"| [{AREAS.get(area, area)}](#{area.lower()}) | {len(by_area[area])} |")
    out += ["", "## Verification items and acceptance criteria", ""]
    covering: dict[str, list[str]] = defaultdict(list)
    for req in catalog.requirements.values():
        for covered in req.verification:
            covering[covered].append(req.id)
    out += ["| item | seed | text | requirements |", "| --- | --- | --- | --- |"]
    for item_id, item in catalog.verification.items():
        reqs = ", ".join(sorted(covering[item_id]))
        out.append(f"| {item_id} | {item['seed']} | {_cell(item['text'])} | {reqs} |")
    for area in order:
        out += ["", f"## {area}", "", f"*{AREAS.get(area, area)}*", ""]
        for req in sorted(by_area[area], key=lambda r: r.id):
            out += _requirement(req)
    out += ["", "## Decisions", ""]
    for dec in sorted(catalog.decisions.values(), key=lambda d: int(d.id[2:])):
        out += [f"### {dec.id}", "", f"**{dec.title}**", ""]
        if dec.question:
            out += [f"*Question:* {dec.question}", ""]
        out += [f"*Decision:* {dec.decision}", "", f"*Follows:* {dec.follows}", ""]
        if dec.requirements:
            out += ["*Requirements:* " + ", ".join(dec.requirements), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> None:
    sys.stdout.write(render(load_catalog()))


if __name__ == "__main__":
    main()
