"""Every test's ``dsh-conformance run`` without ``--report-dir`` writes its reports to
a folder of its own (``$DSH_REPORT_DIR``), not to ``dsh-report/`` in the checkout: two
xdist workers would otherwise write one record at once."""

from __future__ import annotations

import hashlib

import pytest


@pytest.fixture(autouse=True)
def _own_report_dir(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("DSH_REPORT_DIR", str(tmp_path_factory.getbasetemp() / "reports" / name))
