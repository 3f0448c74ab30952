"""report.html in a real browser: headless Chromium driven by Selenium (issue 38).

A host author opens report.html and reads the first failure without scrolling; the
filters hide and show rows; an implementation's strings (its name, its results) stay
text, never markup or script; the page logs no error.  Needs Debian's ``chromium`` and
``chromium-driver`` and the ``selenium`` package (the ``test`` extra); skips locally
without them, and fails under CI=true, where .ci/run installs them.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli

CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def _missing() -> str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed (pip install -e '.[test]')"
    if CHROMIUM is None or DRIVER is None:
        return (
            "Debian's chromium and chromium-driver are not installed "
            "(apt-get install -y chromium chromium-driver)"
        )
    return ""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _missing()
    if missing:
        if CI:
            pytest.fail(f"CI must test report.html in a browser: {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument("--window-size=1280,800")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(DRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of a run against an implementation whose strings are hostile HTML."""
    out = tmp_path_factory.mktemp("hostile") / "out"
    done = cli(
        "run",
        "--adapter",
        "python:hostile_kit:hostile",
        "--requirement",
        "URI-*",
        "--seed",
        "7",
        "--hypothesis-profile",
        "quick",
        "--report-dir",
        str(out),
    )
    assert done.returncode == 1, done.stderr
    return out / "report.html"


@pytest.fixture(scope="module")
def page(browser: Any, report: Path) -> Any:
    browser.get(report.as_uri())
    return browser


def test_the_first_failure_is_readable_above_the_fold(page: Any) -> None:
    from selenium.webdriver.common.by import By

    first = page.find_element(By.CSS_SELECTOR, "li.failure .check")
    top, height = page.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return [r.top, window.innerHeight];",
        first,
    )
    assert top < height, "the first failure is below the fold"
    text = first.text
    assert "URI-" in text or "REF-010" in text  # the requirement, then what failed
    assert "actual" in text or "input" in text  # as JSON, not a traceback
    traceback = page.find_element(By.CSS_SELECTOR, "li.failure details")
    assert traceback.get_attribute("open") is None  # the traceback is folded


def test_the_filters_hide_and_show_requirement_rows(page: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    rows = page.find_elements(By.CSS_SELECTOR, "#requirements tbody tr")
    assert len(rows) > 2
    others = page.find_elements(By.CSS_SELECTOR, "li.failure tr, table.verdicts tr")

    def shown() -> list[str]:
        return [r.get_attribute("data-statuses") for r in rows if r.is_displayed()]

    query = page.find_element(By.ID, "q")
    query.send_keys("URI-004")
    assert len(shown()) == 1
    query.clear()
    query.send_keys(" ")  # oninput fires; a blank filter keeps every row
    query.clear()
    page.execute_script("applyFilter()")
    assert len(shown()) == len(rows)
    Select(page.find_element(By.ID, "s")).select_by_value("fail")
    failing = shown()
    assert failing
    assert len(failing) < len(rows)
    assert all("fail" in statuses.split() for statuses in failing)
    assert all(o.is_displayed() for o in others)  # the filters touch requirement rows only
    Select(page.find_element(By.ID, "s")).select_by_value("")
    assert len(shown()) == len(rows)


def test_implementation_strings_stay_text(page: Any) -> None:
    from selenium.webdriver.common.by import By

    assert page.execute_script("return window.__pwned === undefined")
    assert not page.find_elements(By.CSS_SELECTOR, 'img[src="x"]')
    assert len(page.find_elements(By.TAG_NAME, "script")) == 1  # the report's own
    assert '<img src=x onerror="window.__pwned=1">' in page.find_element(By.TAG_NAME, "body").text


def test_the_page_logs_no_error(page: Any) -> None:
    errors = [e for e in page.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, errors
