"""A single JSON document for dashboards: run problems, verdicts and the gate first, then
header, totals, requirements, tests."""

from __future__ import annotations

from typing import Any

from dsh_conformance.record import RunRecord
from dsh_conformance.reporting.escape import json_text
from dsh_conformance.reporting.judgement import judge
from dsh_conformance.reporting.rows import compliance


def build(record: RunRecord) -> dict[str, Any]:
    judgement = judge(record)
    rows = judgement.rows
    problems = judgement.problems
    return {  # what fails the run and the gate first (D-461), then what ran
        "problems": [p.to_json() for p in problems],
        "ending": record.ending,
        "complete": record.ending == "complete",
        "verdicts": {v.name: v.to_json() for v in judgement.verdicts},
        "gate": judgement.gate.to_json(),
        "notices": list(judgement.notices),
        "implementation": record.adapter_label,
        "components": record.components,
        "header": dict(record.header),
        "suite_problems": record.suite_problems,
        "truncated": record.truncated,
        "totals": {str(k): v for k, v in sorted(record.totals().items())},
        "compliance": compliance(record),
        "expectation_problems": record.expectation_problems,
        "requirements": [
            {
                "id": row.id,
                "level": row.level,
                "verdict": row.verdict,
                "title": row.title,
                "status": row.status,
                "counts": {str(k): v for k, v in sorted(row.counts.items())},
                "tests_passing": len(row.passing),
                "tests_failing": len(row.failing),
                "tests": [t.nodeid for t in row.tests],
            }
            for row in rows
        ],
        "tests": [t.to_json() for t in record.tests],
        "reviews": [item.to_json() for item in judgement.reviews],
    }


def render(record: RunRecord) -> str:
    return json_text(build(record)) + "\n"
