"""The command lines that rerun a run, or one test of it, with the same examples."""

from __future__ import annotations

from pathlib import Path

from dsh_conformance.profiles import PROFILES
from dsh_conformance.record import RunRecord, TestResult


def replay_test_command(record: RunRecord, test: TestResult) -> str:
    """The command that reruns just *test*, this one case or parameter, with the same
    examples (same seed)."""
    import shlex

    return shlex.join([*shlex.split(replay_command(record, filters=False)), "--test", test.nodeid])


def _is_builtin(manifest: str, adapter: str) -> bool:
    """Whether *manifest* is the one a run of *adapter* loads anyway: the replay need not
    name it (an absolute path into site-packages helps nobody)."""
    from dsh_conformance.adapters.expectations import builtin_manifest

    builtin = builtin_manifest(adapter)
    return builtin is not None and Path(manifest).resolve() == builtin.resolve()


def replay_command(record: RunRecord, *, filters: bool = True) -> str:
    """The command line that reruns *record* with the same examples (same seed)."""
    import shlex

    header = record.header
    hypothesis = header.get("hypothesis") or {}
    selection = (header.get("filters") or {}) if filters else {}
    argv = ["dsh-conformance", "run", "--adapter", str((header.get("adapter") or {}).get("name"))]
    if hypothesis.get("seed") is not None:
        argv += ["--seed", str(hypothesis["seed"])]
    if hypothesis.get("profile") in PROFILES:  # the suite's own, `fixed` included
        argv += ["--hypothesis-profile", str(hypothesis["profile"])]
    if hypothesis.get("max_examples_option"):
        argv += ["--max-examples", str(hypothesis["max_examples_option"])]
    argv += ["--spec-profile", str(header.get("spec_profile", "seed"))]
    for requirement in selection.get("requirements") or ():
        argv += ["--requirement", str(requirement)]
    for capability in selection.get("capabilities") or ():
        argv += ["--capability", str(capability)]
    for test in selection.get("tests") or ():
        argv += ["--test", str(test)]
    if selection.get("keyword"):
        argv += ["-k", str(selection["keyword"])]
    if header.get("expectations") and not _is_builtin(str(header["expectations"]), argv[3]):
        argv += ["--expectations", str(header["expectations"])]
    gate = header.get("gate") or {}
    for capability in gate.get("require") or ():
        argv += ["--require", str(capability)]
    if gate.get("allow_empty"):
        argv.append("--allow-empty")
    return shlex.join(argv)
