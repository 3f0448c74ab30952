"""Append a shrunk inbox state-machine failure to conformance/cases/inbox_regressions.json.

Paste the "Falsifying example" Hypothesis printed (the ``state.<rule>(...)`` lines) on
stdin and name the case and the requirement ids it protects::

    python tools/add_inbox_regression.py --id late-steer-lost --req INBOX-020 \
        --description 'Late steering keeps its record.' < failure.txt

Invariant checks, ``state = InboxMachine()`` and ``state.teardown()`` lines are skipped;
every other ``state.<rule>(name=value, ...)`` line becomes one program step.  ``--plain``
marks a program from the placement-free run (``prefix: false``).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases" / "inbox_regressions.json"
SKIP = {"implementations_agree", "seed_invariants", "teardown", "check_invariants"}


def parse_program(text: str) -> list[dict[str, Any]]:
    """The ``state.<rule>(...)`` calls of a printed Hypothesis program, in order."""
    program: list[dict[str, Any]] = []
    for raw in text.splitlines():
        line = raw.strip().removeprefix("E").strip()
        if not line.startswith("state.") or "(" not in line:
            continue
        call = ast.parse(line, mode="eval").body
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            continue
        rule = call.func.attr
        if rule in SKIP:
            continue
        if call.args:
            raise SystemExit(f"positional arguments are not supported: {line}")
        args = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
        program.append({"rule": rule, "args": args})
    return program


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--id", required=True, help="a short kebab-case case id")
    parser.add_argument("--req", action="append", required=True, help="requirement id (repeat)")
    parser.add_argument("--description", required=True, help="one sentence: what it shows")
    parser.add_argument("--note", default="", help="anything else worth knowing")
    parser.add_argument("--plain", action="store_true", help="from the placement-free run")
    parser.add_argument("--file", type=Path, default=CASES)
    options = parser.parse_args(argv)
    program = parse_program(sys.stdin.read())
    if not program:
        raise SystemExit("no state.<rule>(...) lines found on stdin")
    data = json.loads(options.file.read_text(encoding="utf-8"))
    if any(case["id"] == options.id for case in data["cases"]):
        raise SystemExit(f"case {options.id!r} already exists")
    case: dict[str, Any] = {
        "id": options.id,
        "description": options.description,
        # the program's expectations come from running the oracle in lockstep
        "provenance": "reference-model",
        "req": options.req,
        "prefix": not options.plain,
    }
    if options.note:
        case["note"] = options.note
    case["program"] = program
    data["cases"].append(case)
    options.file.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"added {options.id} ({len(program)} steps) to {options.file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
