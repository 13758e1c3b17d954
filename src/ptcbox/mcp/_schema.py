"""JSON Schema (an MCP tool's ``inputSchema`` / ``outputSchema``) as Python types.

A tool's input schema becomes an :class:`inspect.Signature` (required parameters first,
defaults, enums as ``Literal``, nested objects as ``TypedDict`` classes) and its output
schema the return annotation, so :func:`ptcbox.projections._stubs.render_stubs` shows
the model the exact call and result shapes. ``$ref`` into ``$defs``/``definitions`` is
resolved (pydantic-generated schemas use it for every model); recursion is cut at a
fixed depth with ``dict[str, Any]``.

The ``{"result": X}`` wrapper the MCP SDKs put around non-object results (an ``int``
tool declares ``{"properties": {"result": {"type": "integer"}}, "required":
["result"]}``) is recognised by :func:`result_wrapper`, so the annotation is ``int`` and
the value is unwrapped.
"""

from __future__ import annotations

import inspect
import json
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, Union

__all__ = ["MCPParam", "SchemaTypes", "python_identifier", "result_wrapper"]

_MAX_DEPTH = 6
_SCALARS: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
}


@dataclass(frozen=True, slots=True)
class MCPParam:
    """One parameter of an MCP tool as the snippet sees it.

    Attributes:
        python_name: The identifier in the signature (``from`` becomes ``from_``).
        wire_name: The property name the server expects.
        required: Whether the schema lists it in ``required``.
        description: The schema's ``description``, if any.
    """

    python_name: str
    wire_name: str
    required: bool
    description: str | None


def python_identifier(name: str, *, fallback: str = "tool") -> str:
    """Turn any MCP name (``get-stock``, ``fs.read``, ``a/b``, ``class``) into an identifier.

    Runs of characters that cannot appear in an identifier become ``_``; a leading digit
    or underscore gets a letter prefix (snippets cannot call ``_names``); keywords get a
    trailing ``_``.

    Args:
        name: The name as the server spells it.
        fallback: Used when nothing usable is left.

    Returns:
        A valid, non-keyword identifier that does not start with ``_``.
    """
    text = re.sub(r"\W+", "_", name, flags=re.ASCII).strip("_")
    if not text:
        text = fallback
    if text[0].isdigit():
        text = f"{fallback}_{text}"
    if keyword.iskeyword(text) or keyword.issoftkeyword(text):
        text += "_"
    return text


def result_wrapper(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """Return the inner schema when ``schema`` is the ``{"result": X}`` wrapper, else ``None``.

    Args:
        schema: A tool's output schema.

    Returns:
        The schema of ``result`` for an object schema whose only property is a required
        ``result``; ``None`` otherwise.
    """
    if not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or list(properties) != ["result"]:
        return None
    if list(schema.get("required") or []) != ["result"]:
        return None
    inner = properties["result"]
    return inner if isinstance(inner, Mapping) else {}


class SchemaTypes:
    """Builds annotations from the schemas of one server, sharing generated classes.

    Args:
        prefix: Prepended to generated class names (keeps several servers apart).
    """

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        self._classes: dict[str, type] = {}
        self._by_ref: dict[tuple[int, str], Any] = {}
        self._by_shape: dict[str, type] = {}  # one class per distinct object schema

    # -- public ------------------------------------------------------------------------

    def signature(
        self, tool_name: str, input_schema: Mapping[str, Any], returns: Any
    ) -> tuple[inspect.Signature, tuple[MCPParam, ...]]:
        """Build the call signature of a tool from its input schema.

        Args:
            tool_name: The tool's Python name (names the classes of nested arguments).
            input_schema: The ``inputSchema`` object.
            returns: The return annotation.

        Returns:
            The signature (required parameters first, then optional ones with their
            schema default, or ``None``) and the parameters' name mapping.
        """
        properties = input_schema.get("properties")
        if not isinstance(properties, Mapping):
            properties = {}
        required = {str(n) for n in input_schema.get("required") or [] if n in properties}
        taken: set[str] = set()
        specs: list[MCPParam] = []
        params: list[inspect.Parameter] = []
        ordered = [n for n in properties if n in required] + [
            n for n in properties if n not in required
        ]
        for wire in ordered:
            prop = properties[wire] if isinstance(properties[wire], Mapping) else {}
            python = python_identifier(str(wire), fallback="arg")
            while python in taken:
                python += "_"
            taken.add(python)
            annotation = self.annotation(prop, input_schema, f"{tool_name}_{python}")
            if wire in required:
                default: Any = inspect.Parameter.empty
            elif "default" in prop:
                default = prop["default"]
            else:
                default = None
                if annotation is not Any and not _allows_none(annotation):
                    annotation = annotation | None
            params.append(
                inspect.Parameter(
                    python,
                    inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    default=default,
                    annotation=annotation,
                )
            )
            description = prop.get("description")
            specs.append(
                MCPParam(
                    python_name=python,
                    wire_name=str(wire),
                    required=wire in required,
                    description=str(description) if description else None,
                )
            )
        extra = input_schema.get("additionalProperties")
        if not properties and extra not in (False, None):
            params.append(
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD, annotation=Any)
            )
        return inspect.Signature(params, return_annotation=returns), tuple(specs)

    def returns(self, tool_name: str, output_schema: Mapping[str, Any] | None) -> Any:
        """The return annotation for an output schema (``Any`` when there is none).

        Args:
            tool_name: The tool's Python name (names generated classes).
            output_schema: The ``outputSchema`` object, or ``None``.
        """
        if not isinstance(output_schema, Mapping):
            return Any
        inner = result_wrapper(output_schema)
        if inner is not None:
            return self.annotation(inner, output_schema, f"{tool_name}_result")
        return self.annotation(output_schema, output_schema, f"{tool_name}_result")

    def annotation(self, schema: Any, root: Mapping[str, Any], hint: str, depth: int = 0) -> Any:
        """The annotation for one (sub)schema.

        Args:
            schema: The JSON schema.
            root: The document ``$ref`` pointers are resolved against.
            hint: A name for a generated class when the schema has no ``title``.
            depth: Nesting depth so far (recursion stops at a fixed depth).
        """
        if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
            return Any
        ref = schema.get("$ref")
        if isinstance(ref, str):
            key = (id(root), ref)
            if key in self._by_ref:
                return self._by_ref[key]
            self._by_ref[key] = dict[str, Any]  # placeholder while a recursive ref resolves
            target = _resolve(root, ref)
            name = ref.rsplit("/", 1)[-1]
            result = self.annotation(target, root, name, depth + 1) if target else Any
            self._by_ref[key] = result
            return result
        if "const" in schema:
            return _literal([schema["const"]])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return _literal(schema["enum"])
        for combo in ("anyOf", "oneOf"):
            options = schema.get(combo)
            if isinstance(options, list) and options:
                parts = [self.annotation(o, root, hint, depth + 1) for o in options]
                return _union(parts)
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return self.annotation(all_of[0], root, hint, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            parts = [self.annotation({**schema, "type": k}, root, hint, depth + 1) for k in kind]
            return _union(parts)
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            items = schema.get("items")
            if isinstance(items, Mapping):
                return list[self.annotation(items, root, f"{hint}_item", depth + 1)]  # type: ignore[misc]
            return list[Any]
        if kind == "object" or "properties" in schema:
            return self._object(schema, root, hint, depth)
        return Any

    # -- objects -----------------------------------------------------------------------

    def _object(
        self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str, depth: int
    ) -> Any:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping) or not properties:
            extra = schema.get("additionalProperties")
            if isinstance(extra, Mapping):
                return dict[str, self.annotation(extra, root, f"{hint}_value", depth + 1)]  # type: ignore[misc]
            return dict[str, Any]
        shape = _canonical(schema, root)
        known = self._by_shape.get(shape)
        if known is not None:
            return known  # the same model in another tool's schema: one class, shown once
        name = self._class_name(str(schema.get("title") or hint))
        fields: dict[str, Any] = {}
        for key, sub in properties.items():
            if not str(key).isidentifier() or keyword.iskeyword(str(key)):
                return dict[str, Any]  # a TypedDict cannot spell this key as a class body
            fields[str(key)] = self.annotation(sub, root, f"{name}_{key}", depth + 1)
        required = set(schema.get("required") or [])
        cls: Any = TypedDict(name, fields, total=required >= set(fields))  # type: ignore[misc]
        cls.__module__ = "ptcbox.mcp.schema"
        description = schema.get("description")
        if isinstance(description, str) and description.strip():
            cls.__doc__ = description.strip()
        self._classes[name] = cls
        self._by_shape[shape] = cls
        return cls

    def _class_name(self, text: str) -> str:
        words = re.split(r"[^0-9A-Za-z]+", text)
        base = "".join(w[:1].upper() + w[1:] for w in words if w) or "Result"
        if base[0].isdigit():
            base = "T" + base
        base = self._prefix + base
        name, n = base, 2
        while name in self._classes:
            name, n = f"{base}{n}", n + 1
        return name


def _canonical(schema: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    """A key equal for equal object schemas (``$ref`` targets inlined one level)."""

    def inline(node: Any, depth: int) -> Any:
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and depth < _MAX_DEPTH:
                target = _resolve(root, ref)
                if target is not None:
                    return inline(target, depth + 1)
            return {k: inline(v, depth) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [inline(v, depth) for v in node]
        return node

    return json.dumps(inline(schema, 0), sort_keys=True, default=str)


def _resolve(root: Mapping[str, Any], ref: str) -> Mapping[str, Any] | None:
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, Mapping) else None


def _literal(values: list[Any]) -> Any:
    usable = [v for v in values if isinstance(v, str | int | float | bool) or v is None]
    if not usable:
        return Any
    return Literal[tuple(usable)]


def _union(parts: list[Any]) -> Any:
    if any(p is Any for p in parts):
        return Any
    unique: list[Any] = []
    for part in parts:
        if part not in unique:
            unique.append(part)
    if len(unique) == 1:
        return unique[0]
    return Union[tuple(unique)]  # noqa: UP007 - built from a runtime list


def _allows_none(annotation: Any) -> bool:
    if annotation is type(None):
        return True
    args = getattr(annotation, "__args__", ())
    return type(None) in args
