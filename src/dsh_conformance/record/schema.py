"""Record lines against spec/schemas/record.json, both ways.

Reading, a line the schema refuses is one ``RecordError`` (65), never a traceback
further on; writing, a field the schema refuses is left out and named (D-215), so the
suite never writes a record it would refuse to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from dsh_conformance.errors import RecordError
from dsh_conformance.model import jsstr

if TYPE_CHECKING:
    from dsh_conformance.spec.compiled import Compiled

FORMAT: Final = "dsh-conformance-record"
FORMAT_VERSION: Final = 1


@cache
def _validators() -> dict[str, Compiled]:
    """Each line kind's schema, compiled once per process: jsonschema-rs says whether a
    line is valid, jsonschema names the first error of one it does not call valid, so
    every message is jsonschema's, word for word (D-499, D-500)."""
    from dsh_conformance.spec import schema
    from dsh_conformance.spec.compiled import Compiled

    defs = schema("record.json")["$defs"]
    return {
        kind: Compiled({"$defs": defs, "$ref": f"#/$defs/{kind}"})
        for kind in ("header", "test", "footer")
    }


@cache
def _required(kind: str) -> frozenset[str]:
    from dsh_conformance.spec import schema

    return frozenset(schema("record.json")["$defs"][kind]["required"])


def conform(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """*data* made to follow the record schema: each field (or list item) the schema
    refuses is left out, and named in the list returned (D-215).  A line that still
    breaks the schema (a required field is wrong) is written as it is: ``load_record``
    then names it, and the harness is at fault."""
    from dsh_conformance.reporting.escape import json_text

    line = dict(data)
    kind = line.get("type")
    dropped: list[str] = []
    if kind not in ("header", "test", "footer"):
        return line, dropped
    for _ in range(50):
        try:  # the schema judges the JSON the line becomes, not Python values
            plain = jsstr.parse(json_text(line))
        except (TypeError, ValueError):
            return line, dropped
        error = next(iter(_validators()[kind].iter_errors(plain)), None)
        if error is None or not error.absolute_path:
            return line, dropped
        path: list[Any] = list(error.absolute_path)
        key = path[0]
        required = _required(str(kind))
        at = "/".join(str(p) for p in path)
        if len(path) >= 2 and isinstance(line.get(key), list) and isinstance(path[1], int):
            items = list(line[key])
            dropped.append(f"{at} left out ({error.message[:300]})")
            del items[path[1]]
            line[key] = items
        elif key not in required:
            dropped.append(f"{key} left out ({error.message[:300]})")
            del line[key]
        else:
            return line, dropped
    return line, dropped


def check_line(data: Any, where: str) -> dict[str, Any]:
    """Validate one record line against spec/schemas/record.json (``RecordError``)."""
    if not isinstance(data, dict) or data.get("type") not in ("header", "test", "footer"):
        raise RecordError(
            "record-not-json",
            f"{where}: not a record line (a JSON object with type header, test or footer)",
        )
    error = next(iter(_validators()[data["type"]].iter_errors(data)), None)
    if error is not None:
        at = "/".join(str(p) for p in error.absolute_path) or "(the line)"
        raise RecordError(
            "record-invalid",
            f"{where}: {data['type']} line, {at}: {error.message}",
            hint="the record does not follow spec/schemas/record.json: was it edited by hand "
            "or written by another version?",
        )
    return data
