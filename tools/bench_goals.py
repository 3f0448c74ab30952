"""The "Issue 44 goals" section of reports/performance.md, from tools/bench_upstream.py's
own measurements, so that regenerating the report keeps it (and keeps it true).

Each goal of issue 44 that this script measures is one row: the transport against the
bare echo, memory of the whole process and from the stored log, the retention op from
JSON against one linear pass.  A passing non-reference run against the reference's is
measured by another script (tools/bench_run.py), whose result this one reads from a JSON
file given with ``--run-ratio FILE``:

    {"ratio": 1.21, "low": 1.1, "high": 1.4, "reference_s": 9.3, "other_s": 11.2,
     "note": "how it was measured (one sentence, Markdown)"}

``ratio``, ``low`` and ``high`` are the median and range of (the other run's time / the
reference run's time) over interleaved pairs; ``reference_s`` and ``other_s`` the median
seconds of each side; ``note`` says what ran (optional); ``shared_ratio`` (optional) the
same ratio over the tests both runs run, D-503's like-for-like figure.  Without the file
the row says it was not measured in this regeneration.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: Issue 44's targets (done-when list).
TRANSPORT_GOAL = 1.2
MEMORY_GOAL = 2.0
RUN_GOAL = 1.3
RETENTION_GOAL = 2.0

#: The fields a ``--run-ratio`` file must give (``note`` is optional).
RUN_RATIO_FIELDS = ("ratio", "low", "high", "reference_s", "other_s")


def read_run_ratio(path: Path) -> dict[str, Any]:
    """The run-ratio measurement in *path* (the module docstring's fields), checked."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise SystemExit(f"--run-ratio {path}: not a JSON object")
    for name in RUN_RATIO_FIELDS:
        value = data.get(name)
        if type(value) not in (int, float) or not math.isfinite(value) or value <= 0:
            raise SystemExit(f"--run-ratio {path}: {name!r} must be a positive number")
    if not data["low"] <= data["ratio"] <= data["high"]:
        raise SystemExit(f"--run-ratio {path}: needs low <= ratio <= high")
    note = data.get("note", "")
    if not isinstance(note, str):
        raise SystemExit(f"--run-ratio {path}: 'note' must be a string")
    shared = data.get("shared_ratio")
    if shared is not None and (
        type(shared) not in (int, float) or not math.isfinite(shared) or shared <= 0
    ):
        raise SystemExit(f"--run-ratio {path}: 'shared_ratio' must be a positive number")
    return {
        **{name: float(data[name]) for name in RUN_RATIO_FIELDS},
        "note": note,
        "shared_ratio": None if shared is None else float(shared),
    }


def _met(value: float, goal: float) -> str:
    return "yes" if value <= goal else "**no**"


def _row(extra: Sequence[Mapping[str, Any]], goal: str) -> Mapping[str, Any] | None:
    return next((r for r in extra if r.get("goal") == goal), None)


def goals_section(
    extra: Sequence[Mapping[str, Any]],
    mem: Mapping[str, Any] | None,
    mem_stored: Mapping[str, Any] | None,
    run_ratio: Mapping[str, Any] | None,
    mem_wire: Sequence[Mapping[str, Any]] = (),
) -> list[str]:
    """The section's Markdown lines: a table of goal, measured, met, then the method."""
    lines = [
        "## Issue 44 goals, measured side by side",
        "",
        "| goal | measured | met? |",
        "| --- | --- | --- |",
    ]
    bare, model = _row(extra, "transport-bare"), _row(extra, "transport-model")
    if bare is not None:
        measured = (
            f"wall **{bare['ratio']:.2f}x** (range {bare['low']:.2f}-{bare['high']:.2f}, "
            f"fastest / fastest {bare['fastest_ratio']:.2f}), CPU of both ends "
            f"{bare['cpu_ratio']:.2f}x; {bare['model_us']:.2f} us per call against "
            f"{bare['upstream_us']:.2f} us"
        )
        if model is not None:
            measured += (
                f". Against the echo answering with the model's `uri.encode`: "
                f"{model['ratio']:.2f}x (CPU {model['cpu_ratio']:.2f}x)"
            )
        if "floors_ratio" in bare:
            measured += (
                f". That echo itself is {bare['floors_ratio']:.2f}x the bare one "
                f"(CPU {bare['floors_cpu_ratio']:.2f}x): the model's own work, which no "
                "transport can take away"
            )
        lines.append(
            f"| {bare['calls']:,} pipelined calls ≤ {TRANSPORT_GOAL}x a bare JSON-lines echo "
            f"| {measured} | {_met(bare['ratio'], TRANSPORT_GOAL)} |"
        )
    if model is not None:
        lines.append(
            f"| the transport's own cost ≤ {TRANSPORT_GOAL}x: the same calls against the echo "
            "that does the same model work (D-535) "
            f"| wall **{model['ratio']:.2f}x**, CPU of both ends {model['cpu_ratio']:.2f}x "
            f"| {_met(model['ratio'], TRANSPORT_GOAL)} |"
        )
    else:
        lines.append(f"| pipelined calls ≤ {TRANSPORT_GOAL}x a bare echo | not measured | - |")
    memory_rows = [
        (label, row)
        for label, row in (("whole process", mem), ("from the stored log (D-165)", mem_stored))
        if row is not None
    ]
    if memory_rows:
        measured = "; ".join(
            f"{label}: **{row['ratio']:.2f}x** ({row['peak_mb']:.1f} MB peak)"
            for label, row in memory_rows
        )
        met = ", ".join(
            f"{label.split(' (')[0]}: {_met(row['ratio'], MEMORY_GOAL)}"
            for label, row in memory_rows
        )
        lines.append(f"| peak memory ≤ {MEMORY_GOAL}x the text held | {measured} | {met} |")
    for row in mem_wire:
        growth = row["prepare"]
        lines.append(
            f"| peak memory ≤ {MEMORY_GOAL}x the text: the served model preparing "
            f"{row['text_mb']:.1f} MB of text from its request line (D-491, D-536) "
            f"| whole process **{row['ratio']:.2f}x** ({row['peak_mb']:.1f} MB: the "
            f"interpreter {row['interpreter']:.2f}x, its imports {row['imports']:.2f}x); "
            f"what the request adds **{growth:.2f}x**: preparation's summaries, the "
            f"{row['line']:.2f}x line spooled to a file as it arrives, not held (D-485) "
            f"| whole process: {_met(row['ratio'], MEMORY_GOAL)}, "
            f"added: {_met(growth, MEMORY_GOAL)} |"
        )
    if run_ratio is not None:
        r = run_ratio
        measured = (
            f"**{r['ratio']:.2f}x** (range {r['low']:.2f}-{r['high']:.2f}; "
            f"{r['other_s']:.2f} s against {r['reference_s']:.2f} s)"
            + (f". {r['note']}" if r["note"] else "")
        )
        lines.append(
            f"| a passing non-reference run ≤ {RUN_GOAL}x the reference's | {measured} "
            f"| {_met(r['ratio'], RUN_GOAL)} |"
        )
        if r.get("shared_ratio") is not None:
            lines.append(
                f"| like for like (D-503): the tests both runs run ≤ {RUN_GOAL}x "
                f"| **{r['shared_ratio']:.2f}x** | {_met(r['shared_ratio'], RUN_GOAL)} |"
            )
    else:
        lines.append(
            f"| a passing non-reference run ≤ {RUN_GOAL}x the reference's | not measured in "
            "this regeneration (tools/bench_run.py, then `--run-ratio FILE`) | - |"
        )
    retention = _row(extra, "retention-json")
    if retention is not None:
        lines.append(
            f"| the retention op from JSON ≤ {RETENTION_GOAL}x a linear pass "
            f"| **{retention['ratio']:.2f}x** (range {retention['low']:.2f}-"
            f"{retention['high']:.2f}) | {_met(retention['ratio'], RETENTION_GOAL)} |"
        )
    return [*lines, "", *GOALS_METHOD]


#: How the goals table is measured; part of the generator so a regeneration keeps it.
GOALS_METHOD = [
    "Method: every ratio is taken within one run of this script, the two sides",
    "interleaved (A B A B ...), and the median pair is the figure (the machine is shared,",
    "so ranges are wide). *Transport*: `SubprocessAdapter.call_many` of 2,000",
    "`uri.encode` calls to the served reference model (`python -m",
    "dsh_conformance.adapters.serve`), against the same 2,000 requests written by a",
    "client that checks nothing to a child that parses each line with orjson and answers",
    "`{id, result}` (the floor table above); CPU is both ends' (this process plus the",
    "child's /proc/PID/schedstat). Only the transport rows: `python",
    "tools/bench_upstream.py --transport`. *Memory*: the peak RSS (VmHWM) of a child",
    "process over the UTF-8 bytes of the text it prepares. *Retention*: the",
    "`retention.retain` op given its snapshot as JSON against UTF-8-encoding every",
    "message text once. *Run*: tools/bench_run.py's figure, read from `--run-ratio`.",
    "",
    "Where a goal cannot be met as the issue words it, the decision named in its row says",
    "why and what is held instead; both figures stay in the table. Two goals are held by",
    "construction and profiled once rather than re-measured here: every schema is compiled",
    "once per process (D-500, `spec/compiled.py`), and `jsonschema` took 0.9 % of a",
    "profiled run of a served non-reference host (1.9 % of the reference's).",
]
