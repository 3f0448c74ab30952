"""Regenerate the upstream release matrix: ``reports/upstream-matrix.md`` and ``.json``.

One column per published release set (``adapters/upstream/sets/<set>/``, D-186), one row
per requirement, with the set's status for it in the seed run (seed profile with the
upstream manifest: the seed and reference-profile verdicts) and the release run (release
profile).  The page opens with what changed from each set to the next, requirement by
requirement (regressions: a test judging it moved to worse; fixes: it stopped failing),
then the three conformance verdicts per set with the seed MUSTs each set fails (D-218):
the manifest gates a run, it never colours a verdict.  Each set is installed from its
committed lockfile into a cache folder (``npm ci --legacy-peer-deps``, reused while the
lockfile is unchanged) and run as ``--adapter upstream:<cache>/<set>/node_modules``, the
way a host runs its own install (D-185).

    python tools/make_matrix.py                   # every set, both profiles
    python tools/make_matrix.py --sets 0.1.0-rc.8 0.1.1-rc.2
    python tools/make_matrix.py --records DIR     # keep each run's record.jsonl in DIR
    python tools/make_matrix.py --from-records DIR  # re-render from kept records, no run
    python tools/make_matrix.py --jobs 4          # sets in parallel (one core each)
    python tools/make_matrix.py --hypothesis-profile quick   # a fast look (not committed)

Runs use the Hypothesis ``ci`` profile and make_reports' fixed seed, so the matrix changes
only when the suite, the manifest or a set changes.  A set that cannot be installed or
started is a column of errors, never a silently missing column.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
REPORTS: Final = ROOT / "reports"
SETS_DIR: Final = ROOT / "adapters" / "upstream" / "sets"
SEED: Final = 20260824  # the same fixed seed as tools/make_reports.py
PROFILES: Final = ("seed", "release")
#: The set the adapter pins; other columns name the components that differ from it.
PINNED: Final = "0.1.0-rc.8"
FILES: Final = ("package.json", "package-lock.json")


def available_sets() -> list[str]:
    from packaging.version import Version

    names = [p.name for p in SETS_DIR.iterdir() if (p / "package-lock.json").is_file()]
    return sorted(names, key=Version)


def _lock_key(release: str) -> str:
    digest = hashlib.sha256()
    for name in FILES:
        digest.update((SETS_DIR / release / name).read_bytes())
    return digest.hexdigest()[:12]


def install(release: str, cache: Path) -> Path:
    """``node_modules`` of *release*, installed once per lockfile into *cache*."""
    from dsh_conformance.adapters.upstream import host, npm_executable

    target = cache / f"{release}-{_lock_key(release)}"
    modules = target / "node_modules"
    if modules.is_dir():
        try:
            host.check_install(modules)
            return modules
        except Exception:
            shutil.rmtree(target, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=cache))
    try:
        for name in FILES:
            shutil.copy2(SETS_DIR / release / name, staging / name)
        subprocess.run(
            [
                npm_executable(),
                "ci",
                "--legacy-peer-deps",
                "--prefer-offline",
                "--no-audit",
                "--no-fund",
            ],
            cwd=staging,
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
        host.check_install(staging / "node_modules")
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return modules


def run(modules: Path, profile: str, out: Path, hypothesis: str = "ci") -> Path:
    """One suite run on *modules*; the path of its record."""
    out.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "dsh_conformance.cli", "run"]
    argv += ["--adapter", f"upstream:{modules}", "--spec-profile", profile]
    argv += ["--hypothesis-profile", hypothesis, "--seed", str(SEED), "--report-dir", str(out)]
    if profile != "seed":
        argv.append("--no-expectations")  # the manifest's entries name seed-profile tests
    env = {k: v for k, v in os.environ.items() if k != "DSH_UPSTREAM_NODE_MODULES"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    record = out / "record.jsonl"
    if not record.exists():
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"no record (exit {done.returncode}): {tail}")
    return record


def run_set(release: str, cache: Path, keep: Path, hypothesis: str) -> dict[str, Path | str]:
    """Install *release* and run both profiles on it: record paths, or why not."""
    started = time.monotonic()
    try:
        modules = install(release, cache)
    except Exception as exc:
        return {p: f"install failed: {exc}" for p in PROFILES}
    print(f"make_matrix: {release} installed ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    records: dict[str, Path | str] = {}
    for profile in PROFILES:
        began = time.monotonic()
        try:
            records[profile] = run(modules, profile, keep / release / profile, hypothesis)
        except Exception as exc:
            records[profile] = str(exc)
        took = time.monotonic() - began
        print(f"make_matrix: {release} {profile} run ({took:.0f} s)", file=sys.stderr)
    return records


def summarise(release: str, records: Mapping[str, Path | str]) -> dict[str, Any]:
    """The matrix column of *release* from its records (or error strings)."""
    from dsh_conformance.outcomes import Outcome
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting.gate import gate_of
    from dsh_conformance.reporting.rows import requirement_rows
    from dsh_conformance.reporting.verdict import verdicts

    column: dict[str, Any] = {
        "set": release,
        "components": {},
        "verdicts": {},
        "totals": {},
        "problems": [],
        "ending": {},
        "rows": {},
        "records": {p: str(r) for p, r in records.items() if isinstance(r, Path)},
        "seed_failing": [],
        "headlines": {},
        "gate": {},
    }
    for profile, source in records.items():
        if isinstance(source, str):
            column["verdicts"][profile] = f"error: {source}"
            continue
        record = load_record(source)
        column["components"] = column["components"] or record.components
        column["ending"][profile] = record.ending
        column["totals"][profile] = {str(k): v for k, v in sorted(record.totals().items())}
        column["problems"] += [
            f"{p.get('kind')}: {p.get('id')}" for p in record.expectation_problems
        ]
        rows = requirement_rows(record)
        column["gate"][profile] = gate_of(record).label
        for verdict in verdicts(record, rows):
            name = "release" if profile == "release" and verdict.name == "profile" else verdict.name
            if profile == "release" and verdict.name == "seed":
                continue  # the release run's seed rows are the seed run's (fewer tests)
            column["verdicts"][name] = verdict.label
            column["headlines"][name] = verdict.headline
            if name == "seed":
                column["seed_failing"] = list(verdict.failing)
        for row in rows:
            if profile == "release" and row.verdict != "profile":
                continue
            kind = "release" if profile == "release" else row.verdict
            column["rows"][row.id] = {
                "status": row.status,
                # tests that pass / that judge it: a status can hold while tests move
                "passing": f"{row.counts.get(Outcome.PASS, 0)}/{sum(row.counts.values())}",
                "verdict": kind,
                "level": row.level,
                "title": row.title,
            }
    return column


def steps(columns: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Test by test, what changed from each set to the next: any outcome change (pass →
    xfail under a conditional entry included) and changed failures (D-189), since
    requirement statuses can agree while a test's outcome or failure reason moved."""
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting.moves import failure_change

    failing = {"fail", "error", "crash", "timeout", "xfail"}
    out = []
    for old, new in itertools.pairwise(columns):
        step: dict[str, Any] = {"from": old["set"], "to": new["set"], "tests": []}
        for profile in PROFILES:
            if profile not in old["records"] or profile not in new["records"]:
                step["tests"].append({"profile": profile, "test": "(not run)", "change": "—"})
                continue
            before = load_record(old["records"][profile]).by_nodeid()
            after = load_record(new["records"][profile]).by_nodeid()
            for nodeid in sorted(set(before) | set(after)):
                was, now = before.get(nodeid), after.get(nodeid)
                a = str(was.outcome) if was else "absent"
                b = str(now.outcome) if now else "absent"
                change = f"{a} → {b}" if a != b else ""
                if not change and was and now and a in failing:
                    reasons = failure_change(was, now)
                    change = "; ".join(f"{w}: {o or '—'} → {n or '—'}" for w, o, n in reasons)
                    change = f"changed failure ({change})" if change else ""
                if change:
                    step["tests"].append({"profile": profile, "test": nodeid, "change": change})
        out.append(step)
    return out


def changes(columns: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Requirement by requirement, what changed from each set to the next (D-218):
    regressions (a test judging it moved to worse, ``diff``'s gate, even where the
    requirement already failed) and fixes (it failed, expected or not, and now passes)."""
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting.diff import diff

    failed = {"fail", "xfail"}
    out = []
    for old, new in itertools.pairwise(columns):
        step: dict[str, Any] = {
            "from": old["set"],
            "to": new["set"],
            "regressions": {},
            "fixes": [],
        }
        for profile in PROFILES:
            if profile not in old["records"] or profile not in new["records"]:
                continue
            result = diff(
                load_record(old["records"][profile]), load_record(new["records"][profile])
            )
            for change in result.worse:
                for rid in change.requirements:
                    step["regressions"].setdefault(rid, []).append(f"{change.old} → {change.new}")
        for rid in sorted(set(old["rows"]) & set(new["rows"])):
            was, now = old["rows"][rid]["status"], new["rows"][rid]["status"]
            if was in failed and now == "pass":
                step["fixes"].append(rid)
        step["regressions"] = {
            rid: _moves(moves) for rid, moves in sorted(step["regressions"].items())
        }
        out.append(step)
    return out


def _moves(moves: Sequence[str]) -> str:
    """``6 tests: pass → xfail`` for a requirement's moves to worse."""
    counted: dict[str, int] = {}
    for move in moves:
        counted[move] = counted.get(move, 0) + 1
    return ", ".join(f"{n} × {move}" for move, n in counted.items())


def build(columns: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ids: dict[str, dict[str, Any]] = {}
    for column in columns:
        for rid, row in column["rows"].items():
            ids.setdefault(rid, {k: row[k] for k in ("verdict", "level", "title")})
    order = {"seed": 0, "profile": 1, "release": 2}
    requirements = []
    for rid in sorted(ids, key=lambda i: (order.get(ids[i]["verdict"], 3), i)):
        statuses = {c["set"]: c["rows"].get(rid, {}).get("status", "absent") for c in columns}
        passing = {c["set"]: c["rows"].get(rid, {}).get("passing", "") for c in columns}
        ran = {(statuses[c["set"]], passing[c["set"]]) for c in columns if c["rows"]}
        requirements.append(
            {
                "id": rid,
                **ids[rid],
                "status": statuses,
                "passing": passing,
                # an errored set would differ everywhere: only sets that ran are compared
                "differs": len(ran) > 1,
            }
        )
    pinned: dict[str, str] = next((c["components"] for c in columns if c["set"] == PINNED), {})
    sets = []
    for column in columns:
        moved = {
            name: version
            for name, version in column["components"].items()
            if pinned and pinned.get(name) != version
        }
        sets.append(
            {
                "set": column["set"],
                "lockfile": f"adapters/upstream/sets/{column['set']}/package-lock.json",
                "verdicts": column["verdicts"],
                "headlines": column.get("headlines", {}),
                "gate": column.get("gate", {}),
                "seed_failing": column.get("seed_failing", []),
                "ending": column["ending"],
                "totals": column["totals"],
                "expectation_problems": column["problems"],
                "components": column["components"],
                "differs_from_pinned": moved,
            }
        )
    return {
        "generated_by": "python tools/make_matrix.py",
        "hypothesis": {"profile": "ci", "seed": SEED},
        "pinned": PINNED,
        "sets": sets,
        "changes": changes(columns),
        "steps": steps(columns),
        "requirements": requirements,
    }


_ICON: Final = {
    "pass": "✅ pass",
    "fail": "❌ fail",
    "xfail": "❌ fail (expected)",
    "unsupported": "➖ unsupported",
    "not applicable": "· n/a",
    "untested": "❔ untested",
    "inconclusive": "… inconclusive",
    "absent": "—",
}


def _cell(text: str) -> str:
    from dsh_conformance.reporting.escape import for_markdown_cell

    return for_markdown_cell(text, 600)


def _code(text: str) -> str:
    """A test id as one inert code span (escapes inside a span would show as backslashes)."""
    from dsh_conformance.reporting.escape import for_markdown_code

    return for_markdown_code(text, 600)


def render(data: Mapping[str, Any]) -> str:
    sets = [s["set"] for s in data["sets"]]
    head = "| | " + " | ".join(f"`{s}`" for s in sets) + " |"
    rule = "|---|" + "---|" * len(sets)
    lines = [
        "# Upstream release matrix",
        "",
        "The published `@deepseek-ai/dsh-*` release sets, each installed from its committed "
        "lockfile (`adapters/upstream/sets/<set>/`, `npm ci --legacy-peer-deps`) and run as "
        "a host runs its own install (`--adapter upstream:<node_modules>`): the seed profile "
        "with the upstream manifest (seed and reference-profile verdicts), then the release "
        "profile. Regenerate with `python tools/make_matrix.py` (Hypothesis "
        f"`{data['hypothesis']['profile']}` profile, seed `{data['hypothesis']['seed']}`). "
        f"`{data['pinned']}` is the adapter's pin. The verdicts are conformance, from what "
        "each set did: an expected failure of the manifest fails them as any failure does; "
        "the manifest only gates a run (its gate row).",
        "",
        "## What changed from each set to the next",
        "",
    ]
    for change in data.get("changes", []):
        regressions = change["regressions"]
        lines.append(
            f"- `{change['from']}` → `{change['to']}`: "
            + (
                f"**{len(regressions)} regressed** ("
                + "; ".join(f"{rid}: {_cell(moves)}" for rid, moves in regressions.items())
                + ")"
                if regressions
                else "no regression"
            )
            + (f"; fixed: {', '.join(change['fixes'])}" if change["fixes"] else "; nothing fixed")
        )
    lines += [
        "",
        "## Verdicts",
        "",
        head,
        rule,
    ]
    for name, title in (
        ("seed", "seed conformance"),
        ("profile", "reference profile"),
        ("release", "release profile"),
    ):
        cells = [s["verdicts"].get(name, "—") for s in data["sets"]]
        lines.append(f"| {title} | " + " | ".join(_cell(c) for c in cells) + " |")
    cells = [", ".join(s.get("seed_failing", [])) or "none" for s in data["sets"]]
    lines.append("| seed MUSTs failing | " + " | ".join(_cell(c) for c in cells) + " |")
    cells = [s.get("gate", {}).get("seed", "—") for s in data["sets"]]
    lines.append("| gate (seed run, manifest) | " + " | ".join(_cell(c) for c in cells) + " |")
    for profile in PROFILES:
        cells = [
            ", ".join(f"{n} {o}" for o, n in s["totals"].get(profile, {}).items() if n) or "—"
            for s in data["sets"]
        ]
        lines.append(f"| tests ({profile} run) | " + " | ".join(cells) + " |")
    cells = [", ".join(s["expectation_problems"]) or "none" for s in data["sets"]]
    lines.append("| expectation problems | " + " | ".join(_cell(c) for c in cells) + " |")
    from dsh_conformance.record import components_text

    cells = [components_text(s["differs_from_pinned"]) or "—" for s in data["sets"]]
    lines.append(f"| components unlike `{data['pinned']}` | " + " | ".join(cells) + " |")
    differing = [r for r in data["requirements"] if r["differs"]]
    lines += ["", f"## Where the sets differ ({len(differing)} requirements)", ""]
    lines += (
        _rows(differing, sets) if differing else ["None: every requirement has the same status."]
    )
    lines += ["", "## Test by test, from each set to the next", ""]
    for step in data.get("steps", []):
        tests = step["tests"]
        lines.append(
            f"- `{step['from']}` → `{step['to']}`: " + ("no test changed" if not tests else "")
        )
        lines += [
            f"  - {t['profile']}: {_code(t['test'])}: {_cell(t['change'])}" for t in tests[:40]
        ]
        if len(tests) > 40:
            lines.append(f"  - … and {len(tests) - 40} more (upstream-matrix.json)")
    lines += ["", f"## Every requirement ({len(data['requirements'])})", ""]
    lines += _rows(data["requirements"], sets)
    return "\n".join(lines) + "\n"


def _rows(rows: Sequence[Mapping[str, Any]], sets: Sequence[str]) -> list[str]:
    out = [
        "| requirement | verdict | level | " + " | ".join(f"`{s}`" for s in sets) + " | title |",
        "|---|---|---|" + "---|" * len(sets) + "---|",
    ]
    for row in rows:
        counts = set(row.get("passing", {}).values())
        cells = " | ".join(
            _ICON.get(row["status"][s], row["status"][s])
            + (f" ({row['passing'][s]} pass)" if len(counts) > 1 and row["passing"][s] else "")
            for s in sets
        )
        out.append(
            f"| {row['id']} | {row['verdict']} | {row['level']} | {cells} | {_cell(row['title'])} |"
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", help="sets to run (default: every committed set)")
    parser.add_argument("--cache", type=Path, help="install folder (default: the user cache)")
    parser.add_argument("--records", type=Path, help="keep each run's record and reports here")
    parser.add_argument("--from-records", type=Path, help="render from records kept earlier")
    parser.add_argument("--out", type=Path, default=REPORTS, help="folder of the matrix files")
    parser.add_argument("--jobs", type=int, default=1, help="sets run at once (default 1)")
    parser.add_argument(
        "--hypothesis-profile", default="ci", help="ci for the committed matrix (default)"
    )
    args = parser.parse_args(argv)
    from dsh_conformance.adapters.upstream import cache_root

    sets = args.sets or available_sets()
    unknown = set(sets) - set(available_sets())
    if unknown:
        print(f"make_matrix: no committed set {', '.join(sorted(unknown))}", file=sys.stderr)
        return 64
    cache = args.cache or cache_root() / "sets"
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dsh-matrix-") as tmp:
        keep = args.from_records or args.records or Path(tmp)

        def column(release: str) -> dict[str, Any]:
            if args.from_records:
                found: dict[str, Path | str] = {}
                for profile in PROFILES:
                    path = keep / release / profile / "record.jsonl"
                    found[profile] = path if path.exists() else f"no record at {path}"
                return summarise(release, found)
            return summarise(release, run_set(release, cache, keep, args.hypothesis_profile))

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            columns = list(pool.map(column, sets))
        data = build(columns)
    if args.hypothesis_profile != "ci":
        data["hypothesis"]["profile"] = args.hypothesis_profile
    args.out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    (args.out / "upstream-matrix.json").write_text(text, "utf-8")
    (args.out / "upstream-matrix.md").write_text(render(data), "utf-8")
    took = time.monotonic() - started
    print(f"make_matrix: wrote {args.out / 'upstream-matrix.md'} ({took:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
