"""A whole run of the suite: the reference against a passing non-reference host, interleaved.

    python tools/bench_run.py [--other served|in-process|ADAPTER] [--pairs N] [--seed 36]
                              [--profile quick] [--out run-ratio.json]

Issue 44 item 3's goal is that a run of a passing non-reference implementation takes at
most 1.3x the reference's.  The passing non-reference implementation here is the
reference model under another handshake name (``renamed_reference``): its answers are the
reference's, so it passes, but the suite no longer recognises a self-comparison and runs
the differential tests (the lockstep machines among them) against the in-process oracle.

``--other served`` (the default) serves it over the subprocess protocol
(``python -m dsh_conformance.adapters.serve --adapter python:bench_run:renamed_reference``,
the command ``SERVED`` below); ``--other in-process`` loads it in the harness's own process
(no transport: the floor a host cannot beat, since the differential tests still run);
any other value is an adapter name as ``dsh-conformance run --adapter`` takes it.

Runs alternate A (``--adapter reference``) and B (the other), same seed and Hypothesis
profile, ``--pairs`` times after one warm-up pair.  The profile's count reaches every
property and all three machines (D-492): a property's own count is its count under ``ci``
scaled by the profile, so ``quick`` runs the machines at 5, 5 and 2 programs (``ci`` 100,
100 and 30); figures measured before D-492 ran them at ci's counts under every profile.
Per pair: the wall time of each whole ``dsh-conformance run`` process, the sum of the
per-test durations of the tests both ran (the record's ``duration`` of every test that
passed in both: the *shared* tests), the differential tests' time (run by B only), and
CPU time split into the harness's (the run's process and its children, less the host's)
and the host's (a served host writes its own ``getrusage`` at exit,
``$DSH_BENCH_HOST_CPU``): the host's time is the implementation's cost, not the
suite's.  Every B run must conform with every test passing, or the bench stops: it
measures a *passing* implementation.

The JSON written to ``--out`` (and printed) has ``ratio``, ``low``, ``high`` (B/A wall
per pair: median, min, max), ``reference_s``, ``other_s`` (median walls), ``shared_ratio``
(median of the per-pair shared-test ratios), ``note``, and the details under ``pairs``
and ``cpu``; ``tools/bench_upstream.py --run-ratio FILE`` reads it into
reports/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOOLS = Path(__file__).resolve().parent
#: The handshake name of the renamed reference: anything but the reference's own.
RENAMED = "reference model, renamed (bench)"
#: Where a served host writes its own CPU seconds at exit (read by ``_host_cpu``).
HOST_CPU_ENV = "DSH_BENCH_HOST_CPU"
#: The message the suite skips a differential test with against the reference itself.
SELF_COMPARISON = "self-comparison"


def renamed_reference() -> Any:
    """The reference model under another handshake name: a passing non-reference host.

    Served, it records its own CPU time at exit in ``$DSH_BENCH_HOST_CPU`` (if set)."""
    from dsh_conformance.adapters.contract import Handshake
    from dsh_conformance.adapters.reference import ReferenceAdapter

    class Renamed(ReferenceAdapter):
        def handshake(self) -> Handshake:
            real = super().handshake()
            info = type(real.implementation)(name=RENAMED, language="python")
            return Handshake(implementation=info, capabilities=real.capabilities)

    target = os.environ.get(HOST_CPU_ENV)
    if target:
        import atexit
        import resource

        def write_cpu() -> None:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            Path(target).write_text(json.dumps([usage.ru_utime, usage.ru_stime]))

        atexit.register(write_cpu)
    return Renamed()


#: ``--other served``: the renamed reference behind the subprocess protocol.
SERVED = "subprocess:" + shlex.join(
    [
        sys.executable,
        "-m",
        "dsh_conformance.adapters.serve",
        "--adapter",
        "python:bench_run:renamed_reference",
    ]
)
#: ``--other in-process``: the renamed reference in the harness's process (no transport).
IN_PROCESS = "python:bench_run:renamed_reference"
OTHERS = {"served": SERVED, "in-process": IN_PROCESS}


def _command(adapter: str, seed: int, profile: str, out: Path) -> list[str]:
    exe = Path(sys.executable).with_name("dsh-conformance")
    return [
        str(exe),
        "run",
        "--adapter",
        adapter,
        "--seed",
        str(seed),
        "--hypothesis-profile",
        profile,
        "--report-dir",
        str(out),
        "--no-expectations",
    ]


def _tests(record: Path) -> dict[str, tuple[str, float, str]]:
    """nodeid -> (outcome, duration, message) of every test line of *record*."""
    out: dict[str, tuple[str, float, str]] = {}
    for line in record.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("type") == "test":
            out[row["nodeid"]] = (
                row["outcome"],
                float(row.get("duration", 0.0)),
                row.get("message", ""),
            )
    return out


def run_once(adapter: str, seed: int, profile: str, work: Path, tag: str) -> dict[str, Any]:
    """One whole ``dsh-conformance run``: wall, CPU (harness, host) and its record."""
    out = work / tag
    host_file = work / f"{tag}.host-cpu"
    host_file.unlink(missing_ok=True)
    env = dict(os.environ)
    env.pop(HOST_CPU_ENV, None)
    if adapter.startswith("subprocess:"):  # only a host of its own process times itself
        env[HOST_CPU_ENV] = str(host_file)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TOOLS), env.get("PYTHONPATH", "")]))
    env.pop("CI", None)
    start = time.perf_counter()
    child = subprocess.Popen(
        _command(adapter, seed, profile, out),
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    total_cpu = usage.ru_utime + usage.ru_stime  # the run and every child it reaped
    host_cpu = 0.0
    if host_file.exists():
        host_cpu = sum(json.loads(host_file.read_text()))
    tests = _tests(out / "record.jsonl")
    return {
        "adapter": adapter,
        "status": child.returncode,
        "stderr": err.decode("utf-8", "replace")[-2000:],
        "wall_s": wall,
        "cpu_s": total_cpu,
        "host_cpu_s": host_cpu,
        "harness_cpu_s": total_cpu - host_cpu,
        "tests": tests,
    }


def split(reference: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """The shared tests (passed in both) and the differential ones (skipped by the
    reference as a self-comparison, run by the other): their summed test durations."""
    a, b = reference["tests"], other["tests"]
    shared = [k for k, v in a.items() if v[0] == "pass" and b.get(k, ("",))[0] == "pass"]
    differential = [
        k for k, v in a.items() if SELF_COMPARISON in v[2] and b.get(k, ("",))[0] == "pass"
    ]
    shared_a = sum(a[k][1] for k in shared)
    shared_b = sum(b[k][1] for k in shared)
    by_test = sorted(((b[k][1], k) for k in differential), reverse=True)
    return {
        "shared_tests": len(shared),
        "shared_reference_s": shared_a,
        "shared_other_s": shared_b,
        "shared_ratio": shared_b / shared_a if shared_a else None,
        "differential_tests": len(differential),
        "differential_other_s": sum(b[k][1] for k in differential),
        "differential_top": [[k, round(s, 3)] for s, k in by_test[:5]],
    }


def _passing(run: dict[str, Any]) -> None:
    bad = {k: v[0] for k, v in run["tests"].items() if v[0] not in {"pass", "unsupported"}}
    if run["status"] != 0 or bad:
        raise SystemExit(
            f"bench_run: the other run does not pass (exit {run['status']}, "
            f"{len(bad)} tests not passing: {sorted(bad)[:5]}):\n{run['stderr']}"
        )


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def bench(other: str, pairs: int, seed: int, profile: str, warmup: int = 1) -> dict[str, Any]:
    """A B A B ... after *warmup* pairs; the figures of every counted pair."""
    adapter = OTHERS.get(other, other)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        work = Path(tmp)
        for i in range(warmup + pairs):
            ref = run_once("reference", seed, profile, work, f"a{i}")
            oth = run_once(adapter, seed, profile, work, f"b{i}")
            _passing(oth)
            if ref["status"] != 0:
                raise SystemExit(f"bench_run: the reference run failed:\n{ref['stderr']}")
            if i < warmup:
                continue
            rows.append(
                {
                    "reference_wall_s": ref["wall_s"],
                    "other_wall_s": oth["wall_s"],
                    "ratio": oth["wall_s"] / ref["wall_s"],
                    "reference_cpu_s": ref["cpu_s"],
                    "other_harness_cpu_s": oth["harness_cpu_s"],
                    "other_host_cpu_s": oth["host_cpu_s"],
                    **split(ref, oth),
                }
            )
    return summarize(rows, other, adapter, seed, profile)


def summarize(
    rows: list[dict[str, Any]], other: str, adapter: str, seed: int, profile: str
) -> dict[str, Any]:
    ratios = [r["ratio"] for r in rows]
    shared = [r["shared_ratio"] for r in rows if r["shared_ratio"] is not None]
    suite_cpu = [r["other_harness_cpu_s"] / r["reference_cpu_s"] for r in rows]
    differential = _median([r["differential_other_s"] for r in rows])
    reference_s = _median([r["reference_wall_s"] for r in rows])
    other_s = _median([r["other_wall_s"] for r in rows])
    host = _median([r["other_host_cpu_s"] for r in rows])
    note = (
        f"{len(rows)} interleaved pairs (A: --adapter reference, B: {other}), seed {seed}, "
        f"--hypothesis-profile {profile}; whole dsh-conformance run processes, wall. "
        f"B runs {rows[0]['differential_tests']} differential tests A skips as a "
        f"self-comparison ({differential:.1f} s of B's test time); the "
        f"{rows[0]['shared_tests']} tests both run: {_median(shared):.2f}x. "
        f"CPU: A {_median([r['reference_cpu_s'] for r in rows]):.1f} s; B's harness "
        f"{_median([r['other_harness_cpu_s'] for r in rows]):.1f} s "
        f"({_median(suite_cpu):.2f}x A's), B's host {host:.1f} s"
    )
    return {
        "ratio": round(_median(ratios), 3),
        "low": round(min(ratios), 3),
        "high": round(max(ratios), 3),
        "reference_s": round(reference_s, 2),
        "other_s": round(other_s, 2),
        "shared_ratio": round(_median(shared), 3) if shared else None,
        "note": note,
        "other": other,
        "adapter": adapter,
        "seed": seed,
        "profile": profile,
        "cpu": {
            "reference_s": round(_median([r["reference_cpu_s"] for r in rows]), 2),
            "other_harness_s": round(_median([r["other_harness_cpu_s"] for r in rows]), 2),
            "other_host_s": round(host, 2),
            "harness_ratio": round(_median(suite_cpu), 3),
        },
        "differential_other_s": round(differential, 2),
        "pairs": [{k: v for k, v in r.items()} for r in rows],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--other",
        default="served",
        help="served (default), in-process, or an adapter name as run --adapter takes it",
    )
    parser.add_argument("--pairs", type=int, default=3, help="counted A B pairs (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="uncounted pairs first")
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--profile", default="quick", help="Hypothesis profile (default quick)")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here too")
    options = parser.parse_args(argv)
    result = bench(options.other, options.pairs, options.seed, options.profile, options.warmup)
    text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if options.out is not None:
        options.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
