"""Run the zoo of broken implementations and write the kill matrix (issue 11).

    python tools/kill_matrix.py                 # every member -> reports/kill-matrix.{md,json}
    python tools/kill_matrix.py --only retention --no-write   # one area, print only

Each member (tests/zoo/) is the reference model with one defect; it runs against its
area of the suite through the real runner (``quick`` Hypothesis profile, fixed seed) in a
pool of worker processes.  The matrix says, per member, whether the suite killed it,
which requirement ids were blamed (status ``fail``) and by which tests, and what failed
beyond the member's declared ``kills`` (collateral).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
REPORTS: Final = ROOT / "reports"
sys.path.insert(0, str(ROOT / "tests"))

from zoo import members  # noqa: E402
from zoo.matrix import PROFILE, SEED, run_zoo  # noqa: E402


def _cell(ids: list[str]) -> str:
    return ", ".join(ids) if ids else "—"


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


def render_md(results: list[dict[str, Any]]) -> str:
    """The matrix as Markdown: one row per member, then the tests that killed each."""
    killed = sum(r["killed"] for r in results)
    on_target = sum(r["killed"] and r["on_target"] for r in results)
    gaps = [r for r in results if r["gap"]]
    strict = sum(not r["unexpected"] for r in results)
    seed_members = [r for r in results if r["seed_kills"]]
    seed_hits = sum(r["seed_on_target"] for r in seed_members)
    lines = [
        "# Kill matrix",
        "",
        "Every member of the zoo (`tests/zoo/`) is the reference model with exactly one "
        "defect a host could plausibly ship. Each runs against its area of the suite "
        f"(Hypothesis `quick` examples without shrinking, seed `{SEED}`); "
        "`tests/test_zoo_<area>.py` hold every member to this table. Regenerate with "
        "`python tools/kill_matrix.py`.",
        "",
        f"**Killed: {killed}/{len(results)}. Killed and blamed on their own requirement "
        f"ids: {on_target}/{len(results)}. Blamed on nothing else: {strict}/{len(results)}. "
        f"Seed verdict fails on the broken sentence's own id: {seed_hits}/{len(seed_members)} "
        f"({_percent(seed_hits, len(seed_members))}).**",
        "",
        "- *kills*: the requirement ids the defect breaks; each must have status `fail`.",
        "- *killed*: `yes` = every *kills* id failed; `partly` = the run failed, but not on "
        "all of them; `no` = the suite passed the member.",
        "- *seed verdict fails on the broken sentence's own id*: for a member that breaks a "
        "MUST sentence of a note (its *kills* that are seed MUSTs), `yes` when the seed "
        "verdict fails on every one of them by that id (issue 25); `—` for a member that "
        "breaks only decisions (the profile verdict's concern).",
        "- *collateral*: other failing ids. Unmarked ones the defect really breaks too "
        "(the member's `collateral_ok`, or REF-* identity with the reference model); † marks "
        "ids blamed only because a test still blames every id it cites or checks more than "
        "one rule at once (issue 10 converts them; `tests/zoo/pending.py` lists them per "
        "member, and the zoo test fails on any collateral not listed there).",
        "",
        "| area | member | defect | kills | killed "
        "| seed verdict fails on the broken sentence's own id | collateral |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        verdict = (
            "yes" if r["killed"] and r["on_target"] else ("partly" if r["killed"] else "**no**")
        )
        collateral = [c + ("†" if c in r["unexpected"] else "") for c in r["collateral"]]
        seed = "—"
        if r["seed_kills"]:
            seed = ("yes" if r["seed_on_target"] else "**no**") + f" ({_cell(r['seed_kills'])})"
        lines.append(
            f"| {r['area']} | `{r['member'].split(':')[1]}` | {r['invariant']} | "
            f"{_cell(r['kills'])} | {verdict} | {seed} | {_cell(collateral)} |"
        )
    if gaps:
        lines += ["", "## Known gaps", ""]
        lines += [f"- `{r['member']}` ({_cell(r['kills'])}): {r['gap']}." for r in gaps]
    lines += ["", "## Tests that failed each member", ""]
    for r in results:
        lines.append(f"- **{r['member']}** ({r['name']}):")
        if not r["killed_by"]:
            lines.append("  not killed.")
        for rid, tests in r["killed_by"].items():
            lines.append(
                f"  {rid}: " + ", ".join(f"`{t.removeprefix('conformance/')}`" for t in tests) + ";"
            )
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="area or area:Factory")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="print, do not write reports/")
    parser.add_argument(
        "--update-pending",
        action="store_true",
        help=(
            "rewrite tests/zoo/pending.py from this run "
            "(after tests were retagged: it should shrink)"
        ),
    )
    options = parser.parse_args(argv)
    keys = [
        f"{e.area}:{e.factory}"
        for e in members()
        if not options.only or e.area in options.only or f"{e.area}:{e.factory}" in options.only
    ]
    started = time.perf_counter()
    results = run_zoo(keys, workers=options.workers)
    seconds = time.perf_counter() - started
    for r in results:
        good = r["killed"] and r["on_target"] and not r["unexpected"]
        mark = "ok " if good and (r["seed_on_target"] or not r["seed_kills"]) else "BAD"
        print(
            f"{mark} {r['member']:<40} {r['seconds']:>5}s kills={r['kills']} "
            f"missed={r['missed']} unexpected={r['unexpected']} indep={r['independent']}"
        )
    killed = sum(r["killed"] and r["on_target"] for r in results)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    print(
        f"killed on target: {killed}/{len(results)} in {seconds:.0f}s ({cpu:.0f} CPU-s in workers)"
    )
    if not options.no_write:
        data = {
            "profile": PROFILE,
            "seed": SEED,
            "members": len(results),
            "killed": sum(r["killed"] for r in results),
            "killed_on_target": killed,
            "seed_members": sum(bool(r["seed_kills"]) for r in results),
            "seed_verdict_on_target": sum(r["seed_on_target"] for r in results),
            "results": [{k: v for k, v in r.items() if k != "seconds"} for r in results],
        }
        (REPORTS / "kill-matrix.json").write_text(json.dumps(data, indent=2) + "\n", "utf-8")
        (REPORTS / "kill-matrix.md").write_text(render_md(results), "utf-8")
    if options.update_pending:
        write_pending(results)
    seed_ok = all(r["seed_on_target"] for r in results if r["seed_kills"])
    return 0 if killed == len(results) and seed_ok else 1


def write_pending(results: list[dict[str, Any]]) -> None:
    """tests/zoo/pending.py: each member's collateral that awaits per-check blame."""
    lines = [
        '"""Collateral each zoo member is blamed for today only because a test blames every',
        "id it cites, or checks several rules at once (issue 10 converts those tests).",
        "",
        "tests/zoo/kills.py fails on collateral not listed here; regenerate with",
        "``python tools/kill_matrix.py --update-pending`` after tests were converted (the",
        "diff should only remove ids).",
        '"""',
        "",
        "PENDING: dict[str, frozenset[str]] = {",
    ]
    for r in results:
        if r["unexpected"]:
            ids = ", ".join(f'"{i}"' for i in r["unexpected"])
            lines.append(f'    "{r["member"]}": frozenset({{{ids}}}),')
    lines.append("}")
    (ROOT / "tests" / "zoo" / "pending.py").write_text("\n".join(lines) + "\n", "utf-8")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
