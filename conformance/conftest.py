"""Fixtures shared by the conformance suite."""

from __future__ import annotations

import pytest

from dsh_conformance import pytest_plugin
from dsh_conformance.adapters.client import Implementation


@pytest.fixture(scope="session")
def impl(pytestconfig: pytest.Config) -> Implementation:
    """The implementation under test (``--dsh-adapter``)."""
    return pytest_plugin.implementation(pytestconfig)


@pytest.fixture(scope="session")
def oracle(pytestconfig: pytest.Config) -> Implementation:
    """The reference model, for differential comparisons."""
    return pytest_plugin.oracle(pytestconfig)
