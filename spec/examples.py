"""The examples pages: every requirement learnt by example (docs/examples/*.md).

``spec/examples/<page>.toml`` holds, per page, small examples (an operation and its
arguments, a sequence of operations, or a case of ``conformance/cases``) and
counterexamples (what a wrong implementation does, and which tests catch it).  The
outputs are *computed*: generation calls the reference adapter, so a page cannot drift
from the model, and tests/test_examples.py fails when a committed page is stale::

    python -m dsh_conformance.spec.examples --write docs/examples

Checked at generation: every cited requirement exists; a counterexample's ``caught_by``
tests exist and cite its requirements (spec/traceability.py); an example that should
fail fails with its stated code; every MUST requirement has an example and a
counterexample.  Fixtures (``[defs]``) keep inputs short: the string ``"$ref:NAME"``
anywhere in ``args`` stands for ``defs.NAME`` and pages print each fixture once.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from attrs import frozen

from dsh_conformance.spec import Catalog, load_catalog
from dsh_conformance.spec.render import AREAS, SEEDS, marked_quote, tests_line
from dsh_conformance.spec.traceability import cited_tests

REF = "$ref:"
_LONE = re.compile("[\ud800-\udfff]")


class ExampleError(ValueError):
    """An examples file is inconsistent with the catalog, the suite or the model."""


@frozen
class Page:
    name: str
    title: str
    intro: str
    defs: Mapping[str, Any]
    examples: tuple[Mapping[str, Any], ...]
    counterexamples: tuple[Mapping[str, Any], ...]

    def requirements(self) -> list[str]:
        ids = {r for e in (*self.examples, *self.counterexamples) for r in e["requirements"]}
        return sorted(ids, key=lambda r: (r.split("-")[0], r))


def pages() -> list[Page]:
    """Every ``spec/examples/*.toml``, in file-name order."""
    folder = resources.files("dsh_conformance.spec") / "examples"
    found = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text("utf-8"))
            found.append(
                Page(
                    name=entry.name.removesuffix(".toml"),
                    title=data["title"],
                    intro=data.get("intro", ""),
                    defs=data.get("defs", {}),
                    examples=tuple(data.get("example", ())),
                    counterexamples=tuple(data.get("counterexample", ())),
                )
            )
    return found


# --- values ---------------------------------------------------------------------------------


def _expand(value: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith(REF):
        name = value.removeprefix(REF)
        if name not in defs:
            raise ExampleError(f"unknown fixture {name!r}")
        return _expand(defs[name], defs)
    if isinstance(value, Mapping):
        return {k: _expand(v, defs) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, defs) for v in value]
    return value


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, str) and value.startswith(REF):
        yield value.removeprefix(REF)
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from _refs(v)


def show(value: Any, width: int = 92) -> str:
    """JSON for a page: what fits on a line stays on one; lone surrogates escaped."""
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", _pretty(value, 0, width))


def _pretty(value: Any, indent: int, width: int) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if indent + len(flat) <= width or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {_pretty(v, indent + 2, width)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if all(not isinstance(v, dict | list) for v in value):  # scalars: fill the lines
        lines, line = [], ""
        for text in (json.dumps(v, ensure_ascii=False) for v in value):
            if line and len(pad) + len(line) + len(text) + 2 > width:
                lines.append(pad + line.rstrip())
                line = ""
            line += text + ", "
        lines.append(pad + line.rstrip(", "))
        return "[\n" + "\n".join(lines) + "\n" + " " * indent + "]"
    items = [pad + _pretty(v, indent + 2, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


# --- running --------------------------------------------------------------------------------


def _case(ref: str) -> dict[str, Any]:
    from dsh_conformance.conformance.casefiles import cases

    stem, _, case_id = ref.partition(":")
    for file_stem, case in cases("dsh-cases/1"):
        if file_stem == stem and case["id"] == case_id:
            return case
    raise ExampleError(f"no case {ref!r} in conformance/cases")


def _steps(example: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The calls of an example: ``{op, args, show, error?}`` each."""
    if "case" in example:
        case = _case(example["case"])
        if "steps" not in case:
            expect = case["expect"]
            step = {"op": case["op"], "args": case["args"], "show": True}
            return [{**step, "error": expect["error"]} if "error" in expect else step]
        return [{"op": s["op"], "args": s["args"], "show": "expect" in s} for s in case["steps"]]
    if "steps" in example:
        return [{"show": False, **s} for s in example["steps"]]
    step = {"op": example["op"], "args": example.get("args", {}), "show": True}
    return [{**step, "error": example["error"]} if "error" in example else step]


def run_example(adapter: Any, example: Mapping[str, Any], defs: Mapping[str, Any]) -> list[str]:
    """The transcript lines of *example*, computed on *adapter* (the reference model)."""
    from dsh_conformance.adapters.contract import ImplementationError
    from dsh_conformance.model.jsstr import canonical_value

    if "transcript" in example:  # recorded elsewhere (the release runs only on Node)
        return str(example["transcript"]).strip("\n").splitlines()
    lines: list[str] = []
    for step in _steps(example):
        args = canonical_value(_expand(step["args"], defs))
        call = f"{step['op']} {show(step['args'])}"
        try:
            result = adapter.call(step["op"], args)
        except ImplementationError as exc:
            if step.get("error") != exc.code:
                raise ExampleError(f"{example['id']}: {step['op']} failed [{exc.code}]") from exc
            lines += [call, f"→ error {exc.code}"]
            continue
        if "error" in step:
            raise ExampleError(f"{example['id']}: {step['op']} succeeded, not {step['error']}")
        lines.append(call)
        if step.get("only_types"):  # a log, cut down to the events the example is about
            kinds = step["only_types"]
            result = {
                "header": result["header"],
                "events": [
                    {"seq": e["seq"], "type": e["type"], "data": e["data"]}
                    for e in result["events"]
                    if e["type"] in kinds
                ],
            }
            lines.append(f"  (events of type {', '.join(kinds)} only)")
        elif step.get("event_types"):  # a log as the sequence of its event types
            result = [e["type"] for e in result["events"]]
            lines.append("  (event types only)")
        if step["show"] or step.get("only_types") or step.get("event_types"):
            lines.append("→ " + show(result).replace("\n", "\n  "))
    return lines


# --- checking -------------------------------------------------------------------------------


def check(catalog: Catalog, all_pages: Sequence[Page]) -> None:
    """Raise ExampleError naming every inconsistency (see the module docstring)."""
    tests = cited_tests()
    examples: dict[str, int] = defaultdict(int)
    counter: dict[str, int] = defaultdict(int)
    anchors: set[str] = set()
    problems: list[str] = []
    for page in all_pages:
        for entry in (*page.examples, *page.counterexamples):
            unknown = set(entry["requirements"]) - set(catalog.requirements)
            if unknown:
                problems.append(f"{page.name}: unknown requirements {sorted(unknown)}")
        for example in page.examples:
            if example["id"] in anchors:
                problems.append(f"{page.name}: duplicate example id {example['id']}")
            anchors.add(example["id"])
            for req in example["requirements"]:
                examples[req] += 1
        for item in page.counterexamples:
            caught = [_test_id(t) for t in item["caught_by"]]
            for req in item["requirements"]:
                counter[req] += 1
                if not any(t in tests.get(req, ()) for t in caught):
                    problems.append(f"{page.name}: no caught_by test of {req} cites it")
            for test in caught:
                if not any(test in tests.get(r, ()) for r in item["requirements"]):
                    problems.append(f"{page.name}: {test} cites none of {item['requirements']}")
    for req in catalog.requirements.values():
        if req.level == "MUST" and not (examples[req.id] and counter[req.id]):
            problems.append(f"{req.id} (MUST) needs an example and a counterexample")
    if problems:
        raise ExampleError("\n".join(problems))


def _test_id(name: str) -> str:
    """``test_x.py::test_y`` or a case ``file:case`` as a full test id."""
    from dsh_conformance.spec.traceability import CASE_TESTS

    if "::" in name:
        return f"conformance/{name}"
    stem = name.split(":", 1)[0]
    folder = resources.files("dsh_conformance.conformance") / "cases"
    data = json.loads((folder / f"{stem}.json").read_text("utf-8"))
    return f"{CASE_TESTS[data['format']]}[{name}]"


# --- rendering ------------------------------------------------------------------------------


def _anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", text.lower()).replace(" ", "-")


def render_page(page: Page, catalog: Catalog) -> str:
    """One Markdown page (deterministic)."""
    from dsh_conformance.adapters.reference import ReferenceAdapter

    adapter = ReferenceAdapter()
    tests = cited_tests()
    transcripts = {e["id"]: run_example(adapter, e, page.defs) for e in page.examples}
    first: dict[str, str] = {}
    for example in page.examples:
        first.setdefault(example["id"], min(example["requirements"]))
    out = [
        f"# Examples: {page.title}",
        "",
        "Generated by `python -m dsh_conformance.spec.examples --write docs/examples` from",
        f"`spec/examples/{page.name}.toml`; unless an example says it was recorded elsewhere,",
        "its output was computed by the reference model when the page was generated, and",
        "tests/test_examples.py fails when the page is stale. Each requirement shows its",
        "seed sentence (its own clause in **bold** where",
        "several requirements share a sentence), an example, a counterexample (what a wrong",
        "implementation does, and the tests that catch it) and every test that cites it.",
        "",
    ]
    if page.intro:
        out += [page.intro.strip(), ""]
    used = sorted({n for e in page.examples for n in _refs(e.get("args", {}))} | _step_refs(page))
    if used:
        out += ['Fixtures (`"$ref:NAME"` in an input stands for the fixture NAME):', ""]
        for name in used:
            out += [f'<a id="fixture-{name}"></a>`{name}`:', "", "```json"]
            out += [show(_expand(page.defs[name], page.defs)), "```", ""]
    areas = defaultdict(list)
    for req_id in page.requirements():
        areas[req_id.split("-")[0]].append(req_id)
    for area, ids in areas.items():
        out += [f"## {AREAS.get(area, area)}", ""]
        for req_id in ids:
            out += _requirement_section(page, catalog, req_id, transcripts, first, tests)
    return "\n".join(out).rstrip("\n") + "\n"


def _step_refs(page: Page) -> set[str]:
    return {n for e in page.examples for s in e.get("steps", ()) for n in _refs(s.get("args"))}


def _requirement_section(
    page: Page,
    catalog: Catalog,
    req_id: str,
    transcripts: Mapping[str, list[str]],
    first: Mapping[str, str],
    tests: Mapping[str, tuple[str, ...]],
) -> list[str]:
    req = catalog.requirements[req_id]
    out = [f"### {req.id} — {req.title}", ""]
    catalog_link = f"../../spec/CATALOG.md#{_anchor(req.id + ' — ' + req.title)}"
    source = SEEDS[req.seed]
    if req.seed == "decision":  # a reading where the notes are silent, never a note sentence
        source = f"decision {', '.join(req.decisions)}, not a note sentence"
    out += [f"**{req.level}** · {source} · [catalog]({catalog_link})", ""]
    out += [f"> {marked_quote(req)}", ""]
    for example in (e for e in page.examples if req_id in e["requirements"]):
        if first[example["id"]] != req_id:
            link = f"[{example['title']}](#{example['id']})"
            out += [f"**Example:** see {link} under {first[example['id']]}.", ""]
            continue
        others = [r for r in example["requirements"] if r != req_id]
        out += [f'<a id="{example["id"]}"></a>**Example: {example["title"]}**']
        if others:
            out[-1] += " (also " + ", ".join(others) + ")"
        out.append("")
        if "case" in example:
            out += [f"Case `{example['case']}` of `conformance/cases`:", ""]
        out += ["```text", *transcripts[example["id"]], "```", ""]
        if example.get("note"):
            out += [example["note"].strip(), ""]
    for item in (c for c in page.counterexamples if req_id in c["requirements"]):
        caught = ", ".join(f"`{t}`" for t in item["caught_by"])
        out += [f"**Counterexample:** {item['wrong'].strip()} — caught by {caught}.", ""]
    out += [f"*Tests:* {tests_line(tests.get(req_id, ()))}", ""]
    return out


def render_index(all_pages: Sequence[Page], catalog: Catalog) -> str:
    musts = [r for r in catalog.requirements.values() if r.level == "MUST"]
    out = [
        "# Examples",
        "",
        "The invariants of the two design notes, learnt by example: for every requirement",
        "its seed sentence, a minimal input with the output the reference model computes,",
        "a counterexample and the tests that catch it. Generated by",
        "`python -m dsh_conformance.spec.examples --write docs/examples`; do not edit.",
        "",
        "| page | requirements | examples | counterexamples |",
        "| --- | --- | --- | --- |",
    ]
    for page in all_pages:
        out.append(
            f"| [{page.title}]({page.name}.md) | {len(page.requirements())} | "
            f"{len(page.examples)} | {len(page.counterexamples)} |"
        )
    covered = {r for p in all_pages for r in p.requirements()}
    out += [
        "",
        f"Every one of the {len(musts)} MUST requirements has an example and a counterexample; "
        f"{len(covered)} requirements appear in all.",
        "",
        "More worked material: the static cases in `conformance/cases/*.json`",
        "([docs/cases.md](../cases.md)), and the snapshot tests' captured model requests next",
        "to their session logs in `conformance/__snapshots__/` (inbox and side sessions).",
    ]
    return "\n".join(out) + "\n"


def render_all() -> dict[str, str]:
    """File name -> content of every page, after checking consistency."""
    catalog = load_catalog()
    all_pages = pages()
    check(catalog, all_pages)
    files = {f"{p.name}.md": render_page(p, catalog) for p in all_pages}
    files["README.md"] = render_index(all_pages, catalog)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, required=True, help="folder for the pages")
    options = parser.parse_args(argv)
    folder: Path = options.write
    folder.mkdir(parents=True, exist_ok=True)
    files = render_all()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} pages to {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
