"""A failed test as a conformance failure, not as a Python traceback.

Where a test's exception becomes a record entry, the harness stores what a host author
acts on: each failed check's requirement and its note sentence, the input, the expected
and the actual result as JSON, and the command that replays exactly this case.  The
Python traceback is kept last, with Python's and Hypothesis' spellings removed (object
reprs, exception class paths, verbosity knobs, assertion diffs), for those who want it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

#: A check message's first line: ``[REQ-001] what failed``.
_HEADLINE: Final = re.compile(r"^\[([A-Z][A-Z0-9]*-\d+)\] ?(.*)$")
#: An input line under it: ``  name = JSON``.
_INPUT: Final = re.compile(r"^  ([A-Za-z_][A-Za-z0-9_]*) = (.*)$")
#: Names whose value is what the requirement demands, and what came back.
_EXPECTED: Final = frozenset({"expected"})
_ACTUAL: Final = frozenset({"actual", "returned", "got"})
#: ``<module.Class object at 0x7f…>`` and other default reprs.
_OBJECT_REPR: Final = re.compile(r"<([A-Za-z_][\w.]*)(?: object)? at 0x[0-9a-fA-F]+>")
#: A dotted exception class before its message (``dsh_conformance.checks.CheckFailure: ``).
_CLASS_PREFIX: Final = re.compile(
    r"\b(?:[a-z_][a-z0-9_]*\.)+(?:CheckFailure|ImplementationError|AssertionError)(?:: |$)"
)
_BARE_CLASS: Final = re.compile(r"\b(?:CheckFailure|AssertionError): ")
#: Lines of Hypothesis and pytest that speak to a Python user, not a host author.
_KNOB_LINES: Final = re.compile(
    r"Verbosity\.|use Verbosity|@reproduce_failure|reproduce this example|"
    r"Trying example|"
    r"Highest target score|^\s*E?\s*\?\s+[\^+\-\s]+$|Use -v to get more diff|"
    r"Full diff:|hypothesis\.errors\.|site-packages/"
)

_EXAMPLE_NOTE: Final = re.compile(r"(?:Falsifying|Failing) (?:explicit )?example")


def _json(value: object) -> str:
    from dsh_conformance.reporting.escape import show_value

    return show_value(value, 4000)


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions a failure is made of: the members of its groups, else itself."""
    members = getattr(exc, "exceptions", None)
    if isinstance(exc, BaseExceptionGroup) and members:
        for member in members:
            yield from _leaves(member)
    else:
        yield exc


def describe(exc: BaseException) -> str:
    """One line naming what went wrong, in the protocol's words rather than Python's."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if (
        isinstance(code, str)
        and isinstance(message, str)
        and type(exc).__name__ == ("ImplementationError")
    ):
        return f"the implementation answered with error {code}: {message}"
    text = str(exc.args[0]) if exc.args and isinstance(exc.args[0], str) else str(exc)
    first = next((line for line in text.splitlines() if line.strip()), "")
    if isinstance(exc, AssertionError):
        return first or "a check failed"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _inputs(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        matched = _INPUT.match(line)
        if matched:
            found.setdefault(matched.group(1), matched.group(2))
    return found


def example_inputs(exc: BaseException) -> dict[str, str]:
    """The arguments of Hypothesis' failing example, as JSON (fixtures such as ``impl``,
    which have no JSON form, are left out)."""
    for note in getattr(exc, "__notes__", ()) or ():
        text = str(note)
        start = text.find("(")
        if "example" not in text[:start] or start < 0 or not text.rstrip().endswith(")"):
            continue
        call = _OBJECT_REPR.sub("...", text[text.find(":") + 1 :].strip())
        try:
            tree = ast.parse(call, mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(tree, ast.Call):
            continue
        out: dict[str, str] = {}
        for keyword in tree.keywords:
            try:
                value = ast.literal_eval(keyword.value)
            except (ValueError, SyntaxError, TypeError):
                continue
            if keyword.arg and value is not Ellipsis:
                out[keyword.arg] = _json(value)
        return out
    return {}


def checks_of(exc: BaseException) -> list[dict[str, Any]]:
    """Each failed check of *exc*: requirement, message, input, expected, actual."""
    from dsh_conformance.checks import BLAME_ATTR

    out: list[dict[str, Any]] = []
    for leaf in _leaves(exc):
        blamed = tuple(getattr(leaf, BLAME_ATTR, ()) or ())
        text = str(leaf.args[0]) if leaf.args and isinstance(leaf.args[0], str) else ""
        lines = text.splitlines()
        head = _HEADLINE.match(lines[0]) if lines else None
        if head is not None:  # a check's own failure: "[REQ] message" and its inputs
            requirement, message, inputs = head.group(1), head.group(2), _inputs(lines[1:])
        else:  # any other exception inside ``check(REQ, …)``: its inputs are in a note
            notes = [str(n) for n in getattr(leaf, "__notes__", ()) or ()]
            noted = next((n for n in notes if _HEADLINE.match(n.splitlines()[0])), "")
            inputs = _inputs(noted.splitlines()[1:]) if noted else {}
            requirement = blamed[0] if blamed else ""
            message = describe(leaf)
        for name, value in example_inputs(leaf).items():
            inputs.setdefault(name, value)
        entry: dict[str, Any] = {"requirement": blamed[0] if blamed else requirement}
        entry["message"] = message
        entry["input"] = {k: v for k, v in inputs.items() if k not in _EXPECTED | _ACTUAL}
        expected = [v for k, v in inputs.items() if k in _EXPECTED]
        actual = [v for k, v in inputs.items() if k in _ACTUAL]
        if expected:
            entry["expected"] = expected[0]
        if actual:
            entry["actual"] = actual[0]
        out.append(entry)
    return out


def build(
    exc: BaseException | None,
    blame: tuple[str, ...],
    sentences: Mapping[str, str],
    replay: str,
    traceback: str,
) -> dict[str, Any]:
    """The record's ``failure`` of a failed test (see the module docstring)."""
    checks = checks_of(exc) if exc is not None else []
    if not checks:
        checks = [{"requirement": r, "message": "", "input": {}} for r in blame[:1]]
    for entry in checks:
        if not entry["requirement"] and blame:
            entry["requirement"] = blame[0]
        sentence = sentences.get(entry["requirement"], "")
        if sentence:
            entry["sentence"] = sentence
    return {"checks": checks, "replay": replay, "traceback": clean(traceback)}


def message(exc: BaseException) -> str:
    """The record's one ``message``: each failed check's line and its inputs as JSON."""
    parts = []
    for entry in checks_of(exc):
        head = f"[{entry['requirement']}] " if entry["requirement"] else ""
        lines = [head + (entry["message"] or "a check failed")]
        shown = dict(entry["input"])
        for key in ("expected", "actual"):
            if key in entry:
                shown[key] = entry[key]
        lines += [f"  {k} = {v}" for k, v in shown.items()]
        parts.append("\n".join(lines))
    return "\n".join(parts) if parts else clean(describe(exc))


def clean(text: str) -> str:
    """*text* without Python's and Hypothesis' spellings (see the module docstring)."""
    kept: list[str] = []
    in_example = False  # Hypothesis' "Falsifying example: test(\n  impl=<…>,\n)" note
    for line in text.splitlines():
        bare = line.removeprefix("E").strip()
        if in_example:
            in_example = bare != ")"
            continue
        if _EXAMPLE_NOTE.search(line):
            in_example = not bare.endswith(")")
            continue
        if not _KNOB_LINES.search(line):
            kept.append(line)
    out = "\n".join(kept)
    out = _OBJECT_REPR.sub(lambda m: f"<{m.group(1).rsplit('.', 1)[-1]}>", out)
    out = _CLASS_PREFIX.sub("", out)
    return _BARE_CLASS.sub("", out)
