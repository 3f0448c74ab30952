"""The three lockstep state machines alone, served and in-process, interleaved.

    python tools/bench_machines.py [--runs 3] [--seed 36] [--profile quick]
                                   [--base PYTHONPATH] [--out machines.json]

Issue 44 item 3: the lockstep machines (``test_inbox_ownership_state_machine``,
``test_inbox_placement_state_machine``, ``test_side_sessions_stateful``) are most of the
difference between a reference run and a passing non-reference one (tools/bench_run.py).
This runs only them (``-k "state_machine or stateful"``) against the renamed reference,
served over the subprocess protocol (bench_run's ``SERVED``) and in the harness's own
process (``IN_PROCESS``), alternately, ``--runs`` times each.  With ``--base`` (a
directory holding another tree's ``dsh_conformance`` package, put first on PYTHONPATH)
every round runs that tree too, interleaved with this one: an A/B of two versions on
the same noisy machine.

Per run: each machine's ``duration`` from the record, the run's wall time, CPU split
into the harness's (the run and its children, less the host's) and the served host's own
(``$DSH_BENCH_HOST_CPU``), and each one's main thread's *idle* seconds: its life less its
time on a CPU and its time waiting for one (``/proc/<pid>/task/<pid>/schedstat``, written
at exit by a ``sitecustomize`` this puts on PYTHONPATH): the time it sat waiting for the
other end, which is what sending before computing removes and which, unlike wall time,
other load on the machine does not inflate.  Printed (and written to ``--out``): the
median of each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_run import HOST_CPU_ENV, IN_PROCESS, SERVED, TOOLS, _tests

MACHINES = {
    "conformance/test_inbox_stateful.py::test_inbox_ownership_state_machine": "ownership",
    "conformance/test_inbox_stateful.py::test_inbox_placement_state_machine": "placement",
    "conformance/test_side_stateful.py::test_side_sessions_stateful": "side",
}


#: Where the ``sitecustomize`` below writes each process's schedstat figures.
SCHED_ENV = "DSH_BENCH_SCHED"
SITECUSTOMIZE = f"""
import atexit, json, os, time

_out = os.environ.get({SCHED_ENV!r})
if _out:
    _start = time.monotonic()

    def _write():
        pid = os.getpid()
        with open(f"/proc/self/task/{{pid}}/schedstat") as f:
            run, wait, _ = f.read().split()
        life = time.monotonic() - _start
        figures = {{"life": life, "run": int(run) / 1e9, "wait": int(wait) / 1e9}}
        with open(f"{{_out}}.{{pid}}", "w") as f:
            json.dump(figures, f)

    atexit.register(_write)
"""


def _idle(sched: Path, harness: int) -> tuple[float, float]:
    """The idle seconds of the harness's main thread and of the hosts' (summed)."""
    mine, theirs = 0.0, 0.0
    for path in sched.parent.glob(sched.name + ".*"):
        row = json.loads(path.read_text())
        idle = row["life"] - row["run"] - row["wait"]
        if path.suffix == f".{harness}":
            mine += idle
        else:
            theirs += idle
    return mine, theirs


def run_once(adapter: str, seed: int, profile: str, out: Path, base: str) -> dict[str, float]:
    """One ``dsh-conformance run`` of the machines: their durations, wall, CPU, idle."""
    host_file = out.with_suffix(".host-cpu")
    host_file.unlink(missing_ok=True)
    site = out.parent / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    sched = out.with_suffix(".sched")
    env = dict(os.environ)
    env.pop(HOST_CPU_ENV, None)
    if adapter.startswith("subprocess:"):  # only a host of its own process times itself
        env[HOST_CPU_ENV] = str(host_file)
    env[SCHED_ENV] = str(sched)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), base, str(TOOLS)]))
    env.pop("CI", None)
    exe = Path(sys.executable).with_name("dsh-conformance")
    command = [str(exe), "run", "--adapter", adapter, "-k", "state_machine or stateful"]
    command += ["--seed", str(seed), "--hypothesis-profile", profile]
    command += ["--report-dir", str(out), "--no-expectations"]
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    tests = _tests(out / "record.jsonl")
    if os.waitstatus_to_exitcode(status) != 0 or any(v[0] != "pass" for v in tests.values()):
        raise SystemExit(f"bench_machines: the run did not pass:\n{err.decode()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    host = sum(json.loads(host_file.read_text())) if host_file.exists() else 0.0
    row = {short: tests[nodeid][1] for nodeid, short in MACHINES.items()}
    harness_idle, host_idle = _idle(sched, child.pid)
    return {
        **row,
        "wall": wall,
        "harness_cpu": cpu - host,
        "host_cpu": host,
        "harness_idle": harness_idle,
        "host_idle": host_idle,
    }


def bench(runs: int, seed: int, profile: str, base: str) -> dict[str, Any]:
    """Every variant once per round, *runs* rounds; the medians of each variant."""
    variants: dict[str, tuple[str, str]] = {}
    for name, adapter in (("served", SERVED), ("in-process", IN_PROCESS)):
        if base:
            variants[f"base {name}"] = (adapter, base)
        variants[name] = (adapter, "")
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory(prefix="bench-machines-") as tmp:
        for i in range(runs):
            for name, (adapter, tree) in variants.items():
                out = Path(tmp) / f"{name.replace(' ', '-')}-{i}"
                rows[name].append(run_once(adapter, seed, profile, out, tree))
    return {
        name: {key: round(statistics.median(r[key] for r in got), 2) for key in got[0]}
        for name, got in rows.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--profile", default="quick", help="Hypothesis profile (default quick)")
    parser.add_argument("--base", default="", help="another tree's package dir, run A/B")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here too")
    options = parser.parse_args(argv)
    result = bench(options.runs, options.seed, options.profile, options.base)
    text = json.dumps(result, indent=2) + "\n"
    if options.out is not None:
        options.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
