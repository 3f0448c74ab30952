"""JUnit XML: the gate as test cases, the seed verdict as a ``conformance`` suite.

The first suite has one testcase per conformance test (requirement ids as properties),
the results that fail the gate first (D-461): a failure no manifest expects is a
``<failure>``, a crash, timeout or unreadable result an ``<error>``, an unexpected pass a
``<failure>``, a failure the manifest expects ``<skipped>`` with its reason; a run problem
is an ``<error>`` testcase before them all (D-175).  The second suite, ``conformance``, has
one testcase per seed MUST (D-463): a ``<failure>`` when the requirement fails (expected by
a manifest or not: conformance never reads it, D-210), ``<skipped>`` when nothing judged
it, passing otherwise.  So a JUnit publisher shows the gate and the seed verdict both.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Final

from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RunRecord
from dsh_conformance.reporting import failuretext
from dsh_conformance.reporting.escape import for_xml
from dsh_conformance.reporting.gate import NOT_REPRODUCED
from dsh_conformance.reporting.judgement import Judgement, judge
from dsh_conformance.reporting.reviews import review_state
from dsh_conformance.reporting.rows import (
    FAILED_STATUSES,
    INCONCLUSIVE,
    NOT_APPLICABLE,
    UNRELIABLE,
    UNSUPPORTED,
    UNTESTED,
    XFAIL,
)

_FAILURE = {Outcome.FAIL: "failure", Outcome.XPASS: "failure"}
_ERROR = {Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.PROTOCOL}


def render(record: RunRecord) -> str:
    totals = record.totals()
    suite = ET.Element(
        "testsuite",
        name=f"dsh-conformance {for_xml(record.adapter_label)}",
        tests=str(len(record.tests)),
        failures=str(totals[Outcome.FAIL] + totals[Outcome.XPASS]),
        errors=str(sum(totals[o] for o in _ERROR)),
        skipped=str(sum(totals[o] for o in (Outcome.SKIPPED, Outcome.UNSUPPORTED, Outcome.XFAIL))),
        time=f"{sum(t.duration for t in record.tests):.3f}",
    )
    judgement = judge(record)
    problems = judgement.problems
    if problems:  # first, as an error CI tools show: the run itself did not pass (D-175)
        suite.set("tests", str(len(record.tests) + 1))
        suite.set("errors", str(int(suite.get("errors", "0")) + 1))
        case = ET.SubElement(suite, "testcase", classname="dsh-conformance", name="run")
        first = problems[0]
        ET.SubElement(
            case,
            "error",
            message=for_xml(f"NOT A PASS ({first.code}): {first.message}"),
            type=first.code,
        ).text = for_xml("\n".join(f"{p.code}: {p.message} ({p.hint})" for p in problems))
    gating = {t.nodeid for t in judgement.gate.unexpected}
    ordered = [t for t in record.tests if t.nodeid in gating]
    for test in ordered + [t for t in record.tests if t.nodeid not in gating]:
        file, _, name = test.nodeid.partition("::")
        case = ET.SubElement(
            suite,
            "testcase",
            classname=file.removesuffix(".py").replace("/", "."),
            name=for_xml(name),
            time=f"{test.duration:.6f}",
        )
        props = ET.SubElement(case, "properties")
        for req in test.requirements:
            ET.SubElement(props, "property", name="requirement", value=req)
        for req in test.blame:
            ET.SubElement(props, "property", name="blames", value=req)
        ET.SubElement(props, "property", name="outcome", value=str(test.outcome))
        if test.not_reproduced:  # a pass its entry expected to fail (D-422)
            ET.SubElement(props, "property", name="expected", value=NOT_REPRODUCED)
        message = for_xml(test.message)
        body = for_xml(test.longrepr or test.message)
        if test.outcome in _FAILURE or test.outcome in _ERROR:  # D-310: the failure first
            message = for_xml(failuretext.headline(test))
            body = for_xml(failuretext.plain(record, test))
        if test.outcome in _FAILURE:
            ET.SubElement(case, "failure", message=message, type=str(test.outcome)).text = body
        elif test.outcome in _ERROR:
            ET.SubElement(case, "error", message=message, type=str(test.outcome)).text = body
        elif test.outcome in (Outcome.SKIPPED, Outcome.UNSUPPORTED, Outcome.XFAIL):
            why = f" (expected by {test.expectation}: {test.expectation_reason})"
            why = for_xml(why) if test.expectation else ""
            ET.SubElement(case, "skipped", message=f"{test.outcome}: {message}{why}")
    suite_props = ET.Element("properties")
    ET.SubElement(suite_props, "property", name="run.ending", value=for_xml(record.ending))
    for problem in problems:
        ET.SubElement(suite_props, "property", name="run.problem", value=for_xml(problem.code))
    for verdict in judgement.verdicts:
        ET.SubElement(suite_props, "property", name=f"verdict.{verdict.name}", value=verdict.label)
        ET.SubElement(
            suite_props,
            "property",
            name=f"verdict.{verdict.name}.headline",
            value=for_xml(verdict.headline),
        )
        if verdict.failing or verdict.warnings:
            ET.SubElement(
                suite_props,
                "property",
                name=f"verdict.{verdict.name}.failing",
                value=" ".join(verdict.failing + verdict.warnings),
            )
    ET.SubElement(suite_props, "property", name="gate", value=for_xml(judgement.gate.label))
    for notice in judgement.notices:
        ET.SubElement(suite_props, "property", name="notice", value=for_xml(notice))
    for name, version in record.components.items():
        ET.SubElement(
            suite_props, "property", name=f"component.{for_xml(name)}", value=for_xml(version)
        )
    for item in judgement.reviews:  # D-199: listed, never a failure
        ET.SubElement(
            suite_props,
            "property",
            name=f"review.{for_xml(item.requirement)}",
            value=for_xml(review_state(item)),
        )
    suite.insert(0, suite_props)
    if record.truncated:
        ET.SubElement(suite, "system-err").text = "TRUNCATED: the run did not finish"
    suites = ET.Element("testsuites", name="dsh-conformance")
    suites.append(suite)
    suites.append(conformance_suite(judgement))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


#: How a seed MUST's status shows in the ``conformance`` suite: failed, or skipped with a
#: reason (every other status passes).
_NOT_JUDGED: Final = {
    UNSUPPORTED: "not judged: the implementation does not declare the capability",
    UNRELIABLE: "not judged: the adapter broke in every test of it (a run problem)",
    UNTESTED: "not judged: no test of this run judged it",
    INCONCLUSIVE: "not judged: every test citing it stopped on another requirement first",
    NOT_APPLICABLE: "not judged: no applicable test",
}


def conformance_suite(judgement: Judgement) -> ET.Element:
    """One testcase per seed MUST (D-463): the seed verdict as a JUnit publisher shows it."""
    musts = [r for r in judgement.rows if r.verdict == "seed" and r.level == "MUST"]
    failed = [r for r in musts if r.status in FAILED_STATUSES]
    skipped = [r for r in musts if r.status in _NOT_JUDGED]
    suite = ET.Element(
        "testsuite",
        name="conformance",
        tests=str(len(musts)),
        failures=str(len(failed)),
        errors="0",
        skipped=str(len(skipped)),
        time="0",
    )
    props = ET.SubElement(suite, "properties")
    seed = judgement.seed
    ET.SubElement(props, "property", name="verdict.seed", value=for_xml(seed.label))
    ET.SubElement(props, "property", name="verdict.seed.headline", value=for_xml(seed.headline))
    for row in musts:
        case = ET.SubElement(
            suite, "testcase", classname="conformance.seed", name=f"{row.id} {for_xml(row.title)}"
        )
        if row.status in FAILED_STATUSES:
            expected = " (expected by the manifest: still a failure)" if row.status == XFAIL else ""
            tests = "\n".join(f"{t.nodeid}: {failuretext.headline(t)}" for t in row.failing[:50])
            ET.SubElement(
                case,
                "failure",
                message=for_xml(f"{row.id} fails{expected}: {len(row.failing)} tests blame it"),
                type=row.status,
            ).text = for_xml(f"{row.quote}\n\n{tests}")
        elif row.status in _NOT_JUDGED:
            ET.SubElement(case, "skipped", message=_NOT_JUDGED[row.status])
    return suite
