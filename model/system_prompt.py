"""Agent options and the deterministic system prompt derived from them.

The system prompt is a pure function of the agent options and the session header's cwd
(upstream ``renderPrompt``: sections ordered by ``order``, ``{{var}}`` interpolation, empty
sections dropped, joined by a blank line; research note B §4.9, D-70).  A forked child
built with the same options and cwd therefore has byte-identical system prompt bytes
(AC-01), and any option change changes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from attrs import field, frozen

from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, freeze, thaw
from dsh_conformance.model.inbox import snapshot

IDENTITY: Final = "You are an AI agent powered by the DeepSeek Harness SDK."
_VAR: Final = re.compile(r"\{\{(provider|model|cwd)\}\}")


def _bad(message: str) -> DshError:
    return DshError(ErrorCode.INVALID_ARGUMENT, message)


@frozen
class ToolSpec:
    """A scripted tool: its request schema and its fixed result."""

    name: str
    description: str = ""
    parameters: Any = field(factory=lambda: FrozenDict({"type": "object"}), converter=freeze)
    result: Any = field(factory=lambda: ({"type": "text", "text": "ok"},), converter=freeze)
    is_error: bool = False

    def schema(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": thaw(self.parameters),
        }


@frozen
class AgentOptions:
    """What the agent is built from: provider/model, prompt sections, tools, model fallback.

    ``fallback`` is the scripted model's answer once its script is exhausted; ``None`` makes
    an exhausted script a step error (AGENT_SCRIPT_EXHAUSTED).
    """

    provider: str = "mock"
    model: str = "scripted"
    persona: str = ""
    sections: tuple[tuple[int, str], ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    fallback: Any = field(factory=lambda: FrozenDict({"text": "Done."}), converter=freeze)

    @classmethod
    def from_json(cls, data: object) -> AgentOptions:
        if data is None:
            return cls()
        value = snapshot(data)
        if not isinstance(value, Mapping):
            raise _bad("agent options must be an object")
        extra = set(value) - {"provider", "model", "persona", "sections", "tools", "fallback"}
        if extra:
            raise _bad(f"unknown agent option(s): {', '.join(sorted(extra))}")
        sections = []
        for section in value.get("sections", ()):
            if not isinstance(section, Mapping) or not isinstance(section.get("text"), str):
                raise _bad("a prompt section is {text, order?}")
            order = section.get("order", 0)
            if not isinstance(order, int) or isinstance(order, bool):
                raise _bad("a prompt section order is an integer")
            sections.append((order, section["text"]))
        tools = []
        for tool in value.get("tools", ()):
            if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
                raise _bad("a tool is {name, description?, parameters?, result?, isError?}")
            tools.append(
                ToolSpec(
                    name=tool["name"],
                    description=str(tool.get("description", "")),
                    parameters=tool.get("parameters", {"type": "object"}),
                    result=tool.get("result", ({"type": "text", "text": "ok"},)),
                    is_error=bool(tool.get("isError", False)),
                )
            )
        for key in ("provider", "model", "persona"):
            if key in value and not isinstance(value[key], str):
                raise _bad(f"agent option {key} must be a string")
        return cls(
            provider=value.get("provider", "mock"),
            model=value.get("model", "scripted"),
            persona=value.get("persona", ""),
            sections=tuple(sections),
            tools=tuple(tools),
            fallback=value.get("fallback", {"text": "Done."}),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "persona": self.persona,
            "sections": [{"order": o, "text": t} for o, t in self.sections],
            "tools": [
                {**t.schema(), "result": thaw(t.result), "isError": t.is_error} for t in self.tools
            ],
            "fallback": thaw(self.fallback),
        }

    def tool(self, name: str) -> ToolSpec | None:
        return next((t for t in self.tools if t.name == name), None)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """Request tool schemas, sorted by name (upstream default order)."""
        return [t.schema() for t in sorted(self.tools, key=lambda t: t.name)]


def render_system_prompt(options: AgentOptions, cwd: str | None) -> str:
    """D-70: identity (order -100), persona (order 0), then option sections, by order."""
    sections: list[tuple[int, int, str]] = [(-100, 0, IDENTITY), (0, 1, options.persona)]
    sections += [(order, 2 + i, text) for i, (order, text) in enumerate(options.sections)]
    variables = {"provider": options.provider, "model": options.model, "cwd": cwd or ""}
    rendered = [_VAR.sub(lambda m: variables[m.group(1)], text) for _, _, text in sorted(sections)]
    return "\n\n".join(text for text in rendered if text)
