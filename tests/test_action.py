"""action.yml, run locally: its shell steps as GitHub would run them (bash -eo pipefail,
inputs and step outputs substituted, ``if: always()`` honoured after a failure).

The install step is not run (it would replace this checkout's editable install); the
suite's own ``dsh-conformance`` is on PATH instead.  ``uses:`` steps are checked, not run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load_action() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _expand(text: str, context: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        expr = match.group(1)
        assert expr in context, f"the local runner does not know ${{{{ {expr} }}}}"
        return context[expr]

    return EXPR.sub(value, text)


def run_action(tmp_path: Path, inputs: dict[str, str]) -> tuple[list[tuple[str, int]], str]:
    """Run the action's steps; returns (step name, exit status) pairs and the step summary."""
    action = load_action()
    context = {"github.action_path": str(ROOT)}
    for name, spec in action["inputs"].items():
        context[f"inputs.{name}"] = inputs.get(name, str(spec.get("default", "")))
    summary = tmp_path / "summary.md"
    summary.write_text("")
    env_base = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(TESTS),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    failed = False
    ran: list[tuple[str, int]] = []
    for number, step in enumerate(action["runs"]["steps"]):
        condition = str(step.get("if", ""))
        if failed and "always()" not in condition:
            continue
        if "uses" in step or step["name"] == "Install dsh-conformance":
            continue
        output = tmp_path / f"output-{number}"
        output.write_text("")
        env = {k: _expand(str(v), context) for k, v in step.get("env", {}).items()}
        script = tmp_path / f"step-{number}.sh"
        script.write_text(_expand(step["run"], context))
        assert step["shell"] == "bash"
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            env={**env_base, **env, "GITHUB_OUTPUT": str(output)},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        ran.append((step["name"], done.returncode))
        failed = failed or done.returncode != 0
        for line in output.read_text().splitlines():
            key, _, val = line.partition("=")
            context[f"steps.{step.get('id')}.outputs.{key}"] = val
    return ran, summary.read_text(encoding="utf-8")


def test_every_step_uses_bash_or_a_pinned_action_and_reports_are_uploaded_always() -> None:
    steps = load_action()["runs"]["steps"]
    install = next(s for s in steps if s["name"] == "Install dsh-conformance")
    assert "pip install" in install["run"]
    assert install["env"]["DSH_ACTION_PATH"] == "${{ github.action_path }}"
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert "always()" in upload["if"]
    assert upload["with"]["path"] == "${{ inputs.report-dir }}"
    summary = next(s for s in steps if s["name"] == "Write the step summary")
    assert summary["if"] == "always()"
    for step in steps:
        assert "uses" in step or step["shell"] == "bash"
        # inputs reach scripts through env, never spliced into the script text
        assert "inputs." not in step.get("run", "")


def test_a_failing_run_still_writes_the_summary(tmp_path: Path) -> None:
    """Also: ``args`` splits like a shell without expansion (a quoted -k expression stays
    one word; a glob stays a glob even where a file matches it), ``require`` reaches the
    run (D-178)."""
    (tmp_path / "SER-001-a-file").write_text("")  # bash would expand SER-001* to this
    ran, summary = run_action(
        tmp_path,
        {
            "adapter": "python:fauxmplementations:unescaped_lt",
            "args": "--hypothesis-profile quick --requirement SER-001* "
            '-k "not no_such_test and not other_test"',
            "require": "serialization, uri",
            "report-dir": "out",
        },
    )
    assert ran == [("Run the conformance suite", 1), ("Write the step summary", 0)]
    assert summary.startswith("## dsh-conformance: faux: unescaped")
    assert "| SER-001 | seed | MUST | ❌ fail |" in summary
    assert (tmp_path / "out" / "report.html").is_file()
    from dsh_conformance.record import load_record

    header = load_record(tmp_path / "out" / "record.jsonl").header
    assert header["filters"]["requirements"] == ["SER-001*"]
    assert header["filters"]["keyword"] == "not no_such_test and not other_test"
    assert header["gate"]["require"] == ["serialization", "uri"]


def test_an_adapter_that_cannot_start_gets_a_red_summary(tmp_path: Path) -> None:
    dies = "subprocess:" + shlex.join([sys.executable, "-c", "raise SystemExit(3)"])
    ran, summary = run_action(tmp_path, {"adapter": dies, "report-dir": "out"})
    assert ran == [("Run the conformance suite", 70), ("Write the step summary", 0)]
    # the run that could not start still writes its report (D-310): it says why, and
    # neither a verdict nor the gate reads as a pass
    assert "NOT A PASS (aborted)" in summary
    assert "exited with status 3 while answering" in summary
    assert "✅" not in summary
    ran, summary = run_action(
        tmp_path, {"adapter": "python:no_such_module_here:factory", "report-dir": "out2"}
    )
    assert ran == [("Run the conformance suite", 78), ("Write the step summary", 0)]
    assert "exit code 78" in summary


def test_the_readme_snippets_write_the_summary_after_a_failing_run_too() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Testing your own implementation", 1)[1].split("\n## ", 1)[0]
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    assert len(blocks) == 2
    action_step = next(s for s in blocks[0] if "dsh-conformance@" in s.get("uses", ""))
    assert set(action_step["with"]) <= set(load_action()["inputs"])
    summary = next(s for s in blocks[1] if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    assert summary["if"] == "always()"
    assert "||" in summary["run"], "exit 70 leaves no report.md: a missing file must not fail"
