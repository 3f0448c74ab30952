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


def render_md(results: list[dict[str, Any]], seconds: float) -> str:
    """The matrix as Markdown: one row per member, then the tests that killed each."""
    killed = sum(r["killed"] for r in results)
    on_target = sum(r["killed"] and r["on_target"] for r in results)
    lines = [
        "# Kill matrix",
        "",
        "Every member of the zoo (`tests/zoo/`) is the reference model with exactly one "
        "defect. Each runs against its area of the suite (`quick` Hypothesis profile, "
        f"seed `{SEED}`). Regenerate with `python tools/kill_matrix.py`.",
        "",
        f"**Killed: {killed}/{len(results)}; blamed on their own requirement ids: "
        f"{on_target}/{len(results)}.**",
        "",
        "- *kills*: the ids the defect breaks; each must have status `fail`.",
        "- *blamed*: every id with status `fail` in the member's run.",
        "- *collateral*: failing ids beyond *kills*; those marked † are not yet listed as "
        "expected for the member (tests that still blame every id they cite).",
        "",
        "| area | member | defect | kills | killed | blamed | collateral |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        verdict = "yes" if r["killed"] and r["on_target"] else ("partly" if r["killed"] else "**no**")
        collateral = [c + ("†" if c in r["unexpected"] else "") for c in r["collateral"]]
        lines.append(
            f"| {r['area']} | `{r['member'].split(':')[1]}` | {r['invariant']} | "
            f"{_cell(r['kills'])} | {verdict} | {_cell(r['failing'])} | {_cell(collateral)} |"
        )
    lines += ["", "## Tests that killed each member", ""]
    for r in results:
        lines.append(f"### {r['member']} — {r['name']}")
        lines.append("")
        if not r["killed_by"]:
            lines.append("Not killed.")
        for rid, tests in r["killed_by"].items():
            lines.append(f"- {rid}: " + ", ".join(f"`{t}`" for t in tests))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="area or area:Factory")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="print, do not write reports/")
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
        mark = "ok " if r["killed"] and r["on_target"] and not r["unexpected"] else "BAD"
        print(
            f"{mark} {r['member']:<40} {r['seconds']:>5}s kills={r['kills']} "
            f"missed={r['missed']} unexpected={r['unexpected']} indep={r['independent']}"
        )
    killed = sum(r["killed"] and r["on_target"] for r in results)
    print(f"killed on target: {killed}/{len(results)} in {seconds:.0f}s")
    if not options.no_write:
        data = {
            "profile": PROFILE,
            "seed": SEED,
            "members": len(results),
            "killed": sum(r["killed"] for r in results),
            "killed_on_target": killed,
            "results": [{k: v for k, v in r.items() if k != "seconds"} for r in results],
        }
        (REPORTS / "kill-matrix.json").write_text(json.dumps(data, indent=2) + "\n", "utf-8")
        (REPORTS / "kill-matrix.md").write_text(render_md(results, seconds), "utf-8")
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
