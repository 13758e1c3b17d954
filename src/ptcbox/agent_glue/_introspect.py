"""Reading a tool function: name checks, parameter fields, descriptions."""

from __future__ import annotations

import inspect
import keyword
import typing
from collections.abc import Callable
from typing import Any

import docstring_parser
from pydantic import Field

from ptcbox.agent_glue._context import ToolContext

__all__ = ["check_name", "describe", "inspect_function", "projection_doc"]

_MAX_NAME = 64


def check_name(name: str) -> None:
    """Check a tool name: an ASCII identifier, no keyword, no leading underscore, <= 64.

    Raises:
        ValueError: If the name is not acceptable.
    """
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise ValueError(f"tool name {name!r} must be an ASCII Python identifier")
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name.startswith("_"):
        raise ValueError(f"tool name {name!r} is a keyword or starts with an underscore")
    if len(name) > _MAX_NAME:
        raise ValueError(f"tool name {name!r} is longer than {_MAX_NAME} characters")


def describe(parsed: docstring_parser.Docstring) -> str:
    """The docstring's description: short and long parts, one blank line apart."""
    parts = [p.strip() for p in (parsed.short_description, parsed.long_description) if p]
    return "\n\n".join(parts)


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    if isinstance(annotation, str):
        return annotation.replace(" ", "") in {"ToolContext", "ToolContext|None"}
    return ToolContext in typing.get_args(annotation)


def inspect_function(
    fn: Callable[..., Any], name: str, parsed: docstring_parser.Docstring
) -> tuple[str | None, inspect.Signature, dict[str, Any]]:
    """Read a tool function's parameters.

    Returns:
        ``(context_parameter, visible_signature, fields)``: the name of the parameter
        annotated ``ToolContext`` (or ``None``); the signature without it, annotations
        resolved; and ``create_model`` fields named ``p<index>`` with the parameter
        name as alias.

    Raises:
        ValueError: For ``*args``, ``**kwargs`` or positional-only parameters.
        TypeError: For an annotation that cannot be resolved.
    """
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        hints = {}
    docs = {p.arg_name: " ".join((p.description or "").split()) for p in parsed.params}
    context_parameter: str | None = None
    visible: list[inspect.Parameter] = []
    fields: dict[str, Any] = {}
    for index, param in enumerate(signature.parameters.values()):
        annotation = hints.get(param.name, param.annotation)
        if _is_context(annotation):
            context_parameter = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ValueError(
                f"tool {name!r}: parameter {param.name!r} is {param.kind.description}; "
                "tools take named parameters only"
            )
        if isinstance(annotation, str):
            raise TypeError(
                f"tool {name!r}: cannot resolve the annotation {annotation!r} of parameter "
                f"{param.name!r}; define the type at module level"
            )
        field_type = Any if annotation is param.empty else annotation
        default = ... if param.default is param.empty else param.default
        fields[f"p{index}"] = (
            field_type,
            Field(default, alias=param.name, description=docs.get(param.name) or None),
        )
        visible.append(param.replace(annotation=annotation))
    returns = hints.get("return", signature.return_annotation)
    return (
        context_parameter,
        signature.replace(parameters=visible, return_annotation=returns),
        fields,
    )


def projection_doc(
    description: str, parsed: docstring_parser.Docstring, signature: inspect.Signature
) -> str:
    blocks = [description] if description else []
    params = [p for p in parsed.params if p.description and p.arg_name in signature.parameters]
    if params:
        blocks.append(
            "Args:\n"
            + "\n".join(
                f"    {p.arg_name}: {' '.join((p.description or '').split())}" for p in params
            )
        )
    if parsed.returns is not None and parsed.returns.description:
        blocks.append("Returns:\n    " + " ".join(parsed.returns.description.split()))
    return "\n\n".join(blocks)
