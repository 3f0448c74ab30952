"""The placement split: how an admitted prompt and its contexts become log events.

Seed 000, "Snapshot and projection" and "Message ownership": after admission, absent or
separate placement writes an independent ``context/message``, while ``prompt-prefix``
placement bakes the contexts and the effective request into one prompt event whose
model-hidden envelope keeps the direct display content and the source/retention metadata
(ENV-050..ENV-058).  The same function serves queued prompts (``user/message``) and drained
steering (``steering/message``), so both paths place contexts identically (ENV-060).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from dsh_conformance.model.frozen import FrozenDict, freeze

#: The one request delimiter block, written after all prefix blocks (ENV-053, D-63).
DELIMITER_TEXT: Final = "\n\n## My request:\n"
DELIMITER: Final = FrozenDict({"type": "text", "text": DELIMITER_TEXT})
PROMPT_PREFIX: Final = "prompt-prefix"


def is_prefix(context: object) -> bool:
    """Only the exact string ``prompt-prefix`` bakes; anything else is separate (D-64)."""
    return isinstance(context, Mapping) and context.get("placement") == PROMPT_PREFIX


def _blocks(value: object) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, tuple | list) else ()


@frozen
class PreparedPrompt:
    """The prompt event's data and the contexts that follow it as ``context/message``."""

    data: FrozenDict
    separate: tuple[FrozenDict, ...]


def context_message_data(context: Mapping[str, Any]) -> FrozenDict:
    """``context/message`` data for a separate context: ``{content, source, meta?}``.

    ``placement`` is dropped; ``meta`` is present only when the context had one (ENV-051).
    """
    out: dict[str, Any] = {"content": context.get("content"), "source": context.get("source")}
    if "meta" in context:
        out["meta"] = context["meta"]
    return FrozenDict(out)


def prepare_prompt_message(
    content: object, source: object, contexts: Sequence[Mapping[str, Any]]
) -> PreparedPrompt:
    """ENV-050..ENV-057: split *contexts* by placement and build the prompt event data.

    Without prefix contexts the data is ``{content, source}`` with no envelope key.  With
    them, content is every prefix block (in context order), then exactly one delimiter
    block, then the effective prompt; the envelope holds ``displayContent`` (the effective
    prompt) and ``prefixContexts`` (``{source, meta?}`` per prefix context).
    """
    prefix = [c for c in contexts if is_prefix(c)]
    separate = tuple(context_message_data(c) for c in contexts if not is_prefix(c))
    if not prefix:
        return PreparedPrompt(FrozenDict({"content": content, "source": source}), separate)
    baked: list[Any] = []
    for context in prefix:
        baked.extend(_blocks(context.get("content")))
    baked.append(DELIMITER)
    baked.extend(_blocks(content))
    prefix_contexts = []
    for context in prefix:
        entry: dict[str, Any] = {"source": context.get("source")}
        if "meta" in context:
            entry["meta"] = context["meta"]
        prefix_contexts.append(entry)
    data = freeze(
        {
            "content": tuple(baked),
            "source": source,
            "envelope": {"displayContent": content, "prefixContexts": prefix_contexts},
        }
    )
    return PreparedPrompt(data, separate)
