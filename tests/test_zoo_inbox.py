"""The zoo's inbox members, each killed and blamed on its own ids (tests/zoo/kills.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from zoo.kills import pytest_generate_tests, results, test_member_is_killed_on_its_own_ids

__all__ = ["pytest_generate_tests", "results", "test_member_is_killed_on_its_own_ids"]

AREA = "inbox"
