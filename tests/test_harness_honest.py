"""A green cannot lie (issue 23, D-175..D-179): a run that did not finish, tested nothing
applicable or lacks a required capability exits non-zero with its own status, and every
report says why at the top; the footer's exit status is the one the command exits with;
configuration errors exit 78 before any collection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import TESTS, cli, run_args
from test_harness_cli_errors import invoke, one_error

from dsh_conformance import badge
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RecordWriter, RunRecord, TestResult, load_record
from dsh_conformance.reporting import html, jsonreport, junit, markdown
from dsh_conformance.reporting.exitstatus import run_exit_status
from dsh_conformance.reporting.problems import run_problems
from dsh_conformance.reporting.verdict import verdicts

QUICK = ("--seed", "7", "--hypothesis-profile", "quick")


def reports(out: Path) -> dict[str, str]:
    return {
        name: (out / name).read_text(encoding="utf-8")
        for name in ("report.md", "report.html", "junit.xml", "report.json", "badge.json")
    }


def assert_reports_say(out: Path, code: str) -> None:
    """Every report of *out* says NOT A PASS (*code*) before anything else it says."""
    text = reports(out)
    md = text["report.md"]
    assert f"NOT A PASS ({code})" in md
    assert md.index(f"NOT A PASS ({code})") < md.index("| verdict |")
    page = text["report.html"]
    assert page.index(f"NOT A PASS ({code})") < page.index('class="verdicts"')
    xml = text["junit.xml"]
    assert xml.index('name="run"') < xml.index("<testcase", xml.index('name="run"') + 1) or (
        xml.count("<testcase") == 1
    )
    assert f'type="{code}"' in xml
    assert 'name="verdict.seed" value="pass"' not in xml
    data = json.loads(text["report.json"])
    assert next(iter(data)) == "problems"
    assert data["problems"][0]["code"] == code
    assert data["verdicts"]["seed"]["passed"] is False
    assert json.loads(text["badge.json"])["color"] == "red"


def hand_record(
    path: Path, footer: dict[str, object] | None, *outcomes: str, **header: object
) -> RunRecord:
    writer = RecordWriter(path)
    writer.header(
        {
            "spec_profile": "seed",
            "adapter": {"name": "x", "capabilities": ["uri"]},
            "selected": 5,
            **header,
        }
    )
    for index, outcome in enumerate(outcomes):
        writer.test(
            TestResult(f"conformance/test_uri.py::t{index}", Outcome(outcome), ("URI-001",))
        )
    if footer is not None:
        writer.footer(footer)
    writer.close()
    return load_record(path)


@pytest.mark.parametrize(
    ("footer", "code", "status"),
    [
        ({"status": "aborted", "reason": "worker gw1 died"}, "aborted", 3),
        ({"status": "interrupted", "signal": "SIGINT"}, "interrupted", 130),
        (None, "truncated", 3),
        ({"status": "stopped", "reason": "-x"}, "stopped", 1),
    ],
)
def test_an_unfinished_run_of_passing_tests_is_not_a_pass(
    tmp_path: Path, footer: dict[str, object] | None, code: str, status: int
) -> None:
    """Before: only a missing footer failed; an ``aborted`` footer exited 0, said pass."""
    record = hand_record(tmp_path / "r.jsonl", footer, "pass", "pass")
    assert [p.code for p in run_problems(record)] == [code]
    assert run_exit_status(record, "seed") == status
    seed, profile = verdicts(record)
    assert not seed.passed
    assert not profile.passed
    assert seed.label.startswith("FAIL (")
    md = markdown.render(record)
    assert md.index(f"NOT A PASS ({code})") < md.index("| verdict |")
    assert f'type="{code}"' in junit.render(record)
    report = jsonreport.render(record)
    assert json.loads(report)["complete"] is False
    assert json.loads(badge.render(report))["color"] == "red"
    assert f"NOT A PASS ({code})" in html.render([record])
    assert run_problems(record, incomplete_ok=True) == ()


def test_nothing_applicable_and_a_missing_required_capability_are_not_a_pass(
    tmp_path: Path,
) -> None:
    complete = {"status": "complete"}
    empty = hand_record(tmp_path / "e.jsonl", complete, "unsupported", "skipped")
    assert [p.code for p in run_problems(empty)] == ["no-applicable-test"]
    assert run_exit_status(empty, "seed") == 5
    allowed = hand_record(tmp_path / "a.jsonl", complete, "unsupported", gate={"allow_empty": True})
    assert run_exit_status(allowed, "seed") == 0
    required = hand_record(
        tmp_path / "q.jsonl", complete, "pass", gate={"require": ["uri", "side"]}
    )
    (problem,) = run_problems(required)
    assert problem.code == "missing-capability"
    assert "side" in problem.message
    assert "uri," not in problem.message
    assert run_exit_status(required, "seed") == 1
    met = hand_record(tmp_path / "m.jsonl", complete, "pass", gate={"require": ["uri"]})
    assert run_exit_status(met, "seed") == 0


def test_summary_rejects_a_record_with_two_headers(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    hand_record(one, {"status": "complete"}, "pass")
    two = tmp_path / "two.jsonl"
    two.write_text(one.read_text(encoding="utf-8") * 2, encoding="utf-8")
    status, _, err = invoke("summary", str(two))
    assert status == 65, err
    one_error(err, "duplicate-header")
    after = tmp_path / "after.jsonl"
    lines = one.read_text(encoding="utf-8").splitlines(keepends=True)
    after.write_text("".join(lines) + lines[1], encoding="utf-8")
    status, _, err = invoke("summary", str(after))
    assert status == 65, err
    one_error(err, "line-after-footer")


def test_an_empty_adapter_fails_by_default_and_says_why(tmp_path: Path) -> None:
    """Before: exit 0 and "seed conformance: pass (108 requirements)"."""
    out = tmp_path / "out"
    done = cli(*run_args("python:honest_kit:Empty", out, "-c", "uri", *QUICK))
    assert done.returncode == 5, done.stderr
    assert "error[no-applicable-test] no applicable test ran" in done.stderr
    assert "--allow-empty" in done.stderr
    assert_reports_say(out, "no-applicable-test")
    record = load_record(out / "record.jsonl")
    assert record.footer is not None
    assert record.footer["exit_status"] == 5
    assert json.loads((out / "badge.json").read_text())["message"] == "nothing tested"
    allowed = cli(*run_args("python:honest_kit:Empty", out, "-c", "uri", "--allow-empty", *QUICK))
    assert allowed.returncode == 0, allowed.stderr


def test_require_fails_a_host_that_dropped_a_capability(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = run_args("python:honest_kit:UriOnly", out, "-r", "URI-001", *QUICK, "--fail-on", "seed")
    done = cli(*argv, "--require", "uri", "--require", "side")
    assert done.returncode == 1, done.stderr
    assert "error[missing-capability] the run requires side" in done.stderr
    assert_reports_say(out, "missing-capability")
    record = load_record(out / "record.jsonl")
    assert record.header["gate"]["require"] == ["side", "uri"]
    assert record.footer is not None
    assert record.footer["exit_status"] == 1
    assert "--require side" in markdown.render(record)  # the replay command keeps it
    assert cli(*argv, "--require", "uri").returncode == 0


def test_a_killed_worker_fails_the_run(tmp_path: Path) -> None:
    """``kill -9`` of one xdist worker mid-run.  Before: exit 0, every report said pass."""
    pytest.importorskip("xdist")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(TESTS), "DSH_KIT_ONCE": str(tmp_path / "once")}
    argv = run_args("python:honest_kit:KillsItsWorker", out, "-r", "URI-*", *QUICK)
    done = subprocess.run(
        [sys.executable, "-m", "dsh_conformance.cli", *argv, "--workers", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert (tmp_path / "once").exists()  # a worker did die
    assert done.returncode == 3, done.stderr
    assert "error[aborted] the run was aborted: worker gw" in done.stderr
    assert "died mid-run" in done.stderr
    assert_reports_say(out, "aborted")
    record = load_record(out / "record.jsonl")
    assert record.ending == "aborted"
    assert record.footer is not None
    assert record.footer["exit_status"] == 3


def test_the_footer_says_the_exit_status_the_command_ends_with(tmp_path: Path) -> None:
    """A profile-only failure under the seed gate: pytest said 1, the command exits 0."""
    out = tmp_path / "out"
    argv = run_args(
        "python:fauxmplementations:padded",
        out,
        "-r",
        "REF-010",
        "-k",
        "uri-encode-empty",
        *QUICK,
        "--fail-on",
        "seed",
    )
    done = cli(*argv)
    assert done.returncode == 0, done.stderr
    record = load_record(out / "record.jsonl")
    assert any(t.outcome is Outcome.FAIL for t in record.tests)
    assert record.footer is not None
    assert record.footer["exit_status"] == 0
    assert json.loads((out / "report.json").read_text())["problems"] == []


@pytest.mark.parametrize(
    "spec",
    [
        'subprocess:node "x.mjs',
        "python:nomodule_xyz:make",
        "python:json:nofactory",
        "python:os:getcwd",
        "python:json:loads",
        "python:a:b:c",
        "nope",
    ],
)
def test_a_bad_adapter_name_is_one_configuration_error(spec: str) -> None:
    """Before: a traceback from smoke for the first six."""
    for command in ("smoke", "run"):
        status, _out, err = invoke(command, "--adapter", spec)
        assert status == 78, err
        one_error(err, "DSH_INVALID_ARGUMENT")
        assert "running:" not in err  # rejected before the suite is collected


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (("run", "-r", "NOPE-999"), "unknown-requirement"),
        (("run", "-c", "nocap"), "unknown-capability"),
        (("run", "--require", "nocap"), "unknown-capability"),
        (("spec", "NOPE-999"), "unknown-requirement"),
    ],
)
def test_configuration_errors_exit_78_before_collection(
    argv: tuple[str, ...], code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: exit 5 after a whole collection (run), 2 after 30-48 s (spec)."""
    from dsh_conformance import runner

    def no_collection(*args: object, **kwargs: object) -> None:
        raise AssertionError("the suite was collected before the usage check")

    monkeypatch.setattr(runner, "run", no_collection)
    monkeypatch.setattr(runner, "collect", no_collection)
    status, _, err = invoke(*argv)
    assert status == 78, err
    one_error(err, code)


def test_the_input_that_crashed_the_adapter_is_shrunk_and_shown(tmp_path: Path) -> None:
    """An adapter whose process exits on a session id holding U+0000.  Before: no report
    showed the arguments, and Hypothesis saw a flaky failure it could not shrink."""
    served = [sys.executable, "-m", "dsh_conformance.adapters.serve"]
    adapter = "subprocess:" + " ".join([*served, "--adapter", "python:honest_kit:DiesOnNul"])
    out = tmp_path / "out"
    done = cli(
        *run_args(adapter, out, "-r", "URI-002", "-k", "test_every_js_string_round_trips"),
        *QUICK,
    )
    assert done.returncode == 1, done.stderr
    record = load_record(out / "record.jsonl")
    (test,) = record.tests
    assert test.outcome is Outcome.CRASH
    request = {"op": "uri.encode", "args": {"sessionId": "\x00"}}  # shrunk to the minimum
    assert json.loads(test.request) == request
    assert "Flaky" not in test.longrepr  # the crash replays: an ordinary failure
    line = next(x for x in (out / "record.jsonl").read_text().splitlines() if '"test"' in x)
    assert json.loads(line)["request"] == request
    shown = '{"op":"uri.encode","args":{"sessionId":"\\u0000"}}'  # JSON, escaped
    assert f"request in flight: {shown}" in test.message
    for name in ("report.md", "report.html", "junit.xml"):
        assert "\x00" not in (out / name).read_text(encoding="utf-8")
    assert shown in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("log", ["starting up", '{"level":"info","msg":"ready"}'])
def test_a_log_line_before_the_handshake_is_named_as_such(log: str) -> None:
    """Before: "an unsolicited line arrived ... (a duplicate or extra reply)"."""
    import shlex

    from dsh_conformance.adapters.contract import AdapterFault
    from dsh_conformance.adapters.subprocess import SubprocessAdapter

    serve = shlex.join([sys.executable, "-m", "dsh_conformance.adapters.serve"])
    adapter = SubprocessAdapter(["sh", "-c", f"echo {shlex.quote(log)}; exec {serve}"], timeout=10)
    try:
        with pytest.raises(AdapterFault) as caught:
            adapter.handshake()
    finally:
        adapter.close()
    assert caught.value.kind == "protocol"
    assert "stdout before the handshake" in caught.value.message
    assert "duplicate" not in caught.value.message


def test_smoke_passes_on_the_pinned_upstream_release() -> None:
    """Before: exit 70, ``retention`` declared without ``retention.truncate`` (the release
    keeps truncateWithNotice private).  Now the op has its own capability (D-181), which
    the shim does not declare, so smoke failing means the shim broke."""
    from test_upstream_shim import shim_command

    shim_command()  # skips without Node (fails under CI)
    status, out, err = invoke("smoke", "--adapter", "upstream")
    assert status == 0, out + err
    assert "retention ops" in out
    assert "retention.truncate" not in out.split("capabilities", 1)[1].split("\n", 1)[0]


def test_a_failure_the_manifest_expects_is_shrunk_like_any_other(tmp_path: Path) -> None:
    """D-183 (revised by issue 41): a manifest changes no example a test runs, so an
    expected failure is found, shrunk and blamed exactly as an unexpected one: the same
    adapter calls, the same blame, the same shrunk input.  Before, an expected test ran
    without shrinking and another example (another requirement) was its last."""
    test = "conformance/test_uri.py::test_encode_is_scheme_plus_base64url_of_json_stringify"
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        f'adapter = "pads-long-ids"\n\n[[expect]]\nid = "{test}"\nstatus = "xfail"\n'
        'reason = "URI-004: padded on purpose"\n',
        encoding="utf-8",
    )
    adapter = "python:honest_kit:PadsLongIds"
    select = ("-r", "URI-004", "-k", "test_encode_is_scheme_plus_base64url", *QUICK)
    expected = cli(*run_args(adapter, tmp_path / "a", *select, "--expectations", str(manifest)))
    shrunk = cli(*run_args(adapter, tmp_path / "b", *select, "--fail-on", "profile"))
    assert expected.returncode == 0, expected.stderr
    assert shrunk.returncode == 1, shrunk.stderr
    quiet, loud = (
        load_record(tmp_path / "a" / "record.jsonl"),
        load_record(tmp_path / "b" / "record.jsonl"),
    )
    mine, theirs = quiet.by_nodeid()[test], loud.by_nodeid()[test]
    assert (str(mine.outcome), str(theirs.outcome)) == ("xfail", "fail")
    assert mine.blame == theirs.blame == ("URI-004",)
    assert mine.failure["checks"] == theirs.failure["checks"]
    assert quiet.footer is not None
    assert loud.footer is not None
    assert quiet.footer["calls"] == loud.footer["calls"]


def test_failures_that_fail_the_gate_come_first_in_full_with_a_replay(tmp_path: Path) -> None:
    """Before: file order, messages cut near 400 characters, no per-test replay."""
    long = "x" * 1500 + " the end"
    path = tmp_path / "r.jsonl"
    writer = RecordWriter(path)
    writer.header(
        {
            "spec_profile": "seed",
            "adapter": {"name": "x", "capabilities": ["uri"]},
            "selected": 3,
            "hypothesis": {"profile": "quick", "seed": 5},
        }
    )
    for name, outcome, blame, message in (
        ("a_profile", "fail", "URI-005", "profile message"),  # profile MUST (D-5)
        ("b_seed", "fail", "URI-001", long),  # seed MUST
        ("c_crash", "crash", "URI-002", "crash message"),
    ):
        writer.test(
            TestResult(
                f"conformance/test_uri.py::test_{name}[p]",
                Outcome(outcome),
                (blame,),
                message=message,
                blame=(blame,),
            )
        )
    writer.footer({"status": "complete"})
    writer.close()
    record = load_record(path)
    md = markdown.render(record)
    order = [md.index(f"test_{n}[p]`") for n in ("c_crash", "b_seed", "a_profile")]
    assert order == sorted(order)
    assert long in md  # whole
    assert "--test 'conformance/test_uri.py::test_b_seed[p]'" in md  # exactly its case
    assert "--seed 5" in md
    page = html.render([record])
    order = [page.index(f"test_{n}[p]</code> ") for n in ("c_crash", "b_seed", "a_profile")]
    assert order == sorted(order)


def test_an_adapter_that_cannot_start_leaves_a_footer_with_its_exit_status(
    tmp_path: Path,
) -> None:
    import shlex

    dies = "subprocess:" + shlex.join([sys.executable, "-c", "raise SystemExit(3)"])
    out = tmp_path / "out"
    done = cli(*run_args(dies, out, "-r", "URI-001", *QUICK))
    assert done.returncode == 70, done.stderr
    record = load_record(out / "record.jsonl")
    assert record.ending == "aborted"
    assert record.footer is not None
    assert record.footer["exit_status"] == 70
