"""Regenerate the committed conformance reports under reports/ (one command).

    python tools/make_reports.py            # every report
    python tools/make_reports.py upstream   # only the runs whose name starts with 'upstream'

Each run uses the Hypothesis ``ci`` profile with a fixed seed, so a report changes only
when the suite, the model or the implementation changes.  Per run it writes
``reports/<name>.md``, ``reports/<name>.json`` and the shields.io endpoint badge
``reports/badge-<name>.json`` (from the JSON report, so always in step with it);
``reports/upstream-divergences.md`` lists every expectation-manifest entry of the upstream
adapter with the requirement it concerns and its traced cause, and ``reports/README.md``
indexes them.  Runs that need the upstream adapter fail loudly when Node or its packages
are missing: a committed report must never silently lose a run.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
REPORTS: Final = ROOT / "reports"
SEED: Final = 20260824  # the rc.8 publication date: any fixed number would do
MANIFEST: Final = ROOT / "adapters" / "expectations" / "upstream.toml"

#: name -> (adapter, spec profile, description)
RUNS: Final = {
    "reference-seed": ("reference", "seed", "the reference model against the seed profile"),
    "upstream-seed": (
        "upstream",
        "seed",
        "the published 0.1.0-rc.8 packages against the seed profile (with the manifest)",
    ),
    "upstream-release": (
        "upstream",
        "release",
        "the published 0.1.0-rc.8 packages against the release profile",
    ),
}
REQUIREMENT_ID: Final = re.compile(
    r"\b(?:URI|MENTION|SER|PROJ|RET|PREP|ENV|INBOX|HOST|REL|REF|SIDE|JS|GEN)-\d{3}\b"
)


def run_one(name: str, adapter: str, profile: str) -> dict[str, Any]:
    from dsh_conformance import runner
    from dsh_conformance.adapters.expectations import builtin_manifest
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting import jsonreport, markdown
    from dsh_conformance.reporting.exitstatus import run_failed
    from dsh_conformance.reporting.judgement import judge

    manifest = builtin_manifest(adapter)
    options = runner.RunOptions(
        adapter=adapter,
        hypothesis_profile="ci",
        seed=SEED,
        spec_profile=profile,
        expectations=str(manifest) if manifest and profile == "seed" else None,
    )
    with tempfile.TemporaryDirectory(prefix="dsh-report-") as tmp:
        record_path = Path(tmp) / "record.jsonl"
        status = runner.run(options, record_path)
        if not record_path.exists():
            raise SystemExit(f"{name}: the run produced no record (pytest status {status})")
        record = load_record(record_path)
    text = markdown.render(record, failures_limit=200)
    (REPORTS / f"{name}.md").write_text(relative(text), "utf-8")
    data = stable(json.loads(jsonreport.render(record)))
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    (REPORTS / f"{name}.json").write_text(relative(text), "utf-8")
    totals = record.totals()
    judgement = judge(record)  # the one verdict model every report renders (D-214)
    seed, profile_verdict = judgement.verdicts
    return {
        "failed": run_failed(record),
        "totals": {str(k): v for k, v in totals.items()},
        "verdicts": {
            "seed": seed.label,
            profile_verdict.title: profile_verdict.label,
            "gate": judgement.gate.label,
        },
    }


def badges() -> None:
    """reports/badge-<name>.json for every committed JSON report, and badge-<name>.md: the
    badge as Markdown whose tooltip names every component that ran (D-187)."""
    from dsh_conformance import badge

    for name in RUNS:
        report = REPORTS / f"{name}.json"
        if report.exists():
            text = badge.render(report.read_text("utf-8"))
            (REPORTS / f"badge-{name}.json").write_text(text, "utf-8")
            markdown = badge.markdown(report.read_text("utf-8"))  # static: renders anywhere
            (REPORTS / f"badge-{name}.md").write_text(markdown, "utf-8")


def relative(text: str) -> str:
    """Paths inside the checkout, relative to it (a committed report names no home folder)."""
    return text.replace(str(ROOT) + "/", "")


def stable(data: dict[str, Any]) -> dict[str, Any]:
    """Drop what changes on every run (timestamps, durations) so report diffs mean something."""
    data.get("header", {}).pop("started", None)
    for test in data.get("tests", []):
        test.pop("duration", None)
    return data


def _blamed_by_entry() -> dict[str, list[str]]:
    """Expectation entry id -> the requirement ids its tests blamed in upstream-seed.json."""
    report = REPORTS / "upstream-seed.json"
    if not report.exists():
        return {}
    out: dict[str, list[str]] = {}
    for test in json.loads(report.read_text("utf-8")).get("tests", []):
        entry = test.get("expectation")
        if entry and test.get("outcome") == "xfail":
            ids = test.get("blame") or test.get("requirements") or []
            out.setdefault(entry, [])
            out[entry] += [i for i in ids if i not in out[entry]]
    return out


def divergences() -> str:
    """The manifest as two tables: seed divergences (a quoted sentence of a note is broken)
    and reference-profile differences (a decision or identity with the reference model)."""
    from dsh_conformance.spec import load_catalog

    catalog = load_catalog().requirements
    data = tomllib.loads(MANIFEST.read_text("utf-8"))
    blamed = _blamed_by_entry()
    rows: dict[str, list[str]] = {"seed": [], "profile": []}
    for entry in data["expect"]:
        reason = str(entry["reason"])
        found = list(dict.fromkeys(REQUIREMENT_ID.findall(reason.split(":", 1)[0])))
        if str(entry["id"]) in blamed:  # what the run actually blamed beats the reason
            found = blamed[str(entry["id"])]
        if not found and str(entry["id"]) in catalog:
            found = [str(entry["id"])]
        kind = (
            "seed"
            if any(catalog[i].verdict == "seed" for i in found if i in catalog)
            else "profile"
        )
        cause = reason.split(":", 1)[1].strip() if ":" in reason else reason
        test = str(entry["id"]).replace("|", "\\|")
        rows[kind].append(
            f"| {', '.join(found)} | {entry['status']} | `{test}` | {cause.replace('|', '/')} |"
        )
    head = ["| requirement | status | test | what the release does (cause) |", "|---|---|---|---|"]
    lines = [
        "# Where the published release differs from the seed",
        "",
        "Generated by `python tools/make_reports.py` from "
        "`adapters/expectations/upstream.toml` (the strict manifest the upstream run is "
        "checked against). `xfail`: the test runs and fails for the stated cause; "
        "`unsupported`: the published API offers no way to run it.",
        "",
        f"## Seed divergences ({len(rows['seed'])} entries)",
        "",
        "Entries that concern a requirement quoted from a design note (the seed verdict).",
        "",
        *head,
        *rows["seed"],
        "",
        f"## Reference-profile differences ({len(rows['profile'])} entries)",
        "",
        "Entries that concern only the project's decisions or identity with the reference "
        "model: the notes allow what the release does, or are silent about it.",
        "",
        *head,
        *rows["profile"],
    ]
    return "\n".join(lines) + "\n"


def index(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# Conformance reports",
        "",
        "Regenerate with `python tools/make_reports.py` (Hypothesis `ci` profile, seed "
        f"`{SEED}`). The upstream runs need Node >= 20.6 and "
        "`npm ci --prefix adapters/upstream`.",
        "",
        "| report | what | conformance verdicts; the gate | tests |",
        "|---|---|---|---|",
    ]
    for name, (_, _, what) in RUNS.items():
        result = results.get(name)
        if result is None:
            continue
        totals = ", ".join(f"{n} {o}" for o, n in result["totals"].items() if n)
        judged = "; ".join(f"{k}: {v}" for k, v in (result.get("verdicts") or {}).items())
        lines.append(
            f"| [{name}]({name}.md) ([json]({name}.json)) | {what} | {judged} | {totals} |"
        )
    lines += [
        "",
        "Divergences of the release, each traced to a requirement: "
        "[upstream-divergences.md](upstream-divergences.md).",
        "",
        "Every published release set (0.1.0-rc.6, rc.7, rc.8, 0.1.1-rc.2), requirement by "
        "requirement: [upstream-matrix.md](upstream-matrix.md) ([json](upstream-matrix.json)); "
        "regenerate with `python tools/make_matrix.py`.",
        "",
        "The suite's strength: [kill-matrix.md](kill-matrix.md) ([json](kill-matrix.json)), "
        "every broken implementation of the zoo (`tests/zoo/`) with the requirement ids the "
        "suite blamed it on; regenerate with `python tools/kill_matrix.py`.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    REPORTS.mkdir(exist_ok=True)
    wanted = argv[1:] or list(RUNS)
    results: dict[str, dict[str, Any]] = {}
    summary_path = REPORTS / "summary.json"
    if summary_path.exists():
        results.update(json.loads(summary_path.read_text("utf-8")))
    failed = False
    for name, (adapter, profile, _) in RUNS.items():
        if not any(name.startswith(w) for w in wanted):
            continue
        print(f"make_reports: {name} ({adapter}, profile {profile})", file=sys.stderr)
        results[name] = run_one(name, adapter, profile)
        failed |= bool(results[name]["failed"])
    summary_path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", "utf-8")
    (REPORTS / "upstream-divergences.md").write_text(divergences(), "utf-8")
    badges()
    (REPORTS / "README.md").write_text(index(results), "utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
