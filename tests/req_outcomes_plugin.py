"""A pytest plugin for subprocess runs: write {nodeid, reqs, outcome} per test as JSON Lines.

Enabled with ``-p req_outcomes_plugin`` (tests/ on PYTHONPATH) and ``REQ_OUTCOMES=path``.
"""

from __future__ import annotations

import json
import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        reqs = sorted({str(a) for m in item.iter_markers("req") for a in m.args})
        line = {"nodeid": item.nodeid, "reqs": reqs, "outcome": report.outcome}
        with open(os.environ["REQ_OUTCOMES"], "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Find failures but do not shrink them: this run only asks *which* tests fail."""
    from hypothesis import Phase, settings

    settings.register_profile(
        "req-outcomes",
        parent=settings.get_profile("ci"),
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
    settings.load_profile("req-outcomes")
