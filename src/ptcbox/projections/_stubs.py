"""Render a namespace of tools as Python stubs, and count tokens.

The stubs go into the ``run_code`` tool's description, so a model knows each tool's
exact name, parameters and return shape::

    class Expense(TypedDict):
        amount: float
        category: str

    def get_expenses(employee_id: str, quarter: str) -> list[Expense]:
        \"\"\"Return the expenses of one employee in one quarter.

        Args:
            employee_id: The employee's id, e.g. "e1".
        \"\"\"

Output is deterministic: tools sorted by name, referenced classes (``TypedDict``,
pydantic models, dataclasses, enums) rendered once, before the first function that
uses them. Token counts use the ``o200k_base`` encoding (bpe-openai).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import inspect
import types
import typing
import warnings
from collections.abc import Mapping
from typing import Any

import docstring_parser
from pydantic import BaseModel

from ptcbox.projections._protocol import ToolProjection

__all__ = ["count_tokens", "format_annotation", "format_signature", "render_stubs"]

_INDENT = "    "
_MAX_CLASS_DEPTH = 4


@functools.cache
def _encoding() -> Any:
    with warnings.catch_warnings():  # bpe-openai reads its data with a deprecated API
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # noqa: PLC0415 - loads vocabularies; only when tokens are counted

        return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """Count the tokens of ``text`` in OpenAI's ``o200k_base`` encoding.

    Special-token text such as ``<|endoftext|>`` counts as ordinary text.

    Args:
        text: Any string.

    Returns:
        The number of tokens.
    """
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))


def render_stubs(namespace: Mapping[str, ToolProjection]) -> str:
    """Render every tool of ``namespace`` as a Python stub.

    Args:
        namespace: Tool name to projection. A projection's ``signature`` attribute is
            used when present (``ValidatedProjection``, ``DirectProjection``), else
            ``inspect.signature``; ``doc`` is parsed as a Google/NumPy/reST docstring.

    Returns:
        Valid Python source (``ast.parse`` accepts it), ending with a newline; ``""``
        for an empty namespace.
    """
    renderer = _Renderer()
    blocks = [renderer.function(name, namespace[name]) for name in sorted(namespace)]
    return "\n\n".join([*renderer.class_blocks, *blocks]) + "\n" if blocks else ""


def format_annotation(annotation: Any) -> str:
    """Render a type annotation the way it is written in source.

    Args:
        annotation: A type, a typing construct or a string (forward reference).

    Returns:
        E.g. ``"list[dict[str, int]]"``, ``"str | None"``, ``"Literal['a', 'b']"``.
    """
    return _Renderer(collect=False).annotation(annotation)


def format_signature(name: str, signature: inspect.Signature | None) -> str:
    """Render a call signature without its return annotation, for error messages.

    Args:
        name: The tool's name.
        signature: Its signature, or ``None`` (rendered as ``name(**kwargs)``).

    Returns:
        E.g. ``"get_expenses(employee_id: str, quarter: str = 'Q3')"``.
    """
    if signature is None:
        return f"{name}(**kwargs)"
    return f"{name}({_Renderer(collect=False).parameters(signature)})"


class _Renderer:
    def __init__(self, *, collect: bool = True) -> None:
        self._collect = collect
        self._seen: set[type] = set()
        self.class_blocks: list[str] = []
        self._depth = 0

    # -- functions ---------------------------------------------------------------------

    def function(self, name: str, projection: ToolProjection) -> str:
        signature = _signature_of(projection)
        if signature is None:
            head = f"def {name}(**kwargs: Any) -> Any:"
        else:
            returns = signature.return_annotation
            shown = "Any" if returns is inspect.Signature.empty else self.annotation(returns)
            head = f"def {name}({self.parameters(signature)}) -> {shown}:"
        return f"{head}\n{_docstring(projection.doc, _INDENT)}"

    def parameters(self, signature: inspect.Signature) -> str:
        parts: list[str] = []
        kinds = [p.kind for p in signature.parameters.values()]
        star_done = inspect.Parameter.VAR_POSITIONAL in kinds
        for param in signature.parameters.values():
            if param.kind is param.KEYWORD_ONLY and not star_done:
                parts.append("*")
                star_done = True
            text = param.name
            if param.kind is param.VAR_POSITIONAL:
                text = "*" + text
            elif param.kind is param.VAR_KEYWORD:
                text = "**" + text
            if param.annotation is not param.empty:
                text += f": {self.annotation(param.annotation)}"
            if param.default is not param.empty:
                joiner = " = " if param.annotation is not param.empty else "="
                text += joiner + _default(param.default)
            parts.append(text)
            if param.kind is param.POSITIONAL_ONLY and _last_positional_only(signature, param):
                parts.append("/")
        return ", ".join(parts)

    # -- annotations -------------------------------------------------------------------

    def annotation(self, annotation: Any) -> str:
        if isinstance(annotation, str):
            return annotation
        if annotation is None or annotation is type(None):
            return "None"
        if annotation is Any:
            return "Any"
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is typing.Annotated:
            return self.annotation(args[0])
        if origin is typing.Union or origin is types.UnionType:
            return " | ".join(self.annotation(arg) for arg in args)
        if origin is typing.Literal:
            return "Literal[" + ", ".join(repr(arg) for arg in args) + "]"
        if origin is not None:
            base = self._class_name(origin) if isinstance(origin, type) else _bare(origin)
            if not args:
                return base
            if base == "Callable" and len(args) == 2 and isinstance(args[0], list):
                params = "[" + ", ".join(self.annotation(a) for a in args[0]) + "]"
                return f"Callable[{params}, {self.annotation(args[1])}]"
            return f"{base}[" + ", ".join(self._arg(arg) for arg in args) + "]"
        if isinstance(annotation, typing.TypeVar):
            return annotation.__name__
        if isinstance(annotation, type):
            self._maybe_collect(annotation)
            return self._class_name(annotation)
        return _bare(annotation)

    def _arg(self, arg: Any) -> str:
        if arg is Ellipsis:
            return "..."
        if isinstance(arg, list):
            return "[" + ", ".join(self.annotation(a) for a in arg) + "]"
        return self.annotation(arg)

    @staticmethod
    def _class_name(kind: type) -> str:
        if kind.__module__ in ("builtins", "typing", "collections.abc"):
            return kind.__qualname__
        return kind.__name__

    # -- referenced classes ------------------------------------------------------------

    def _maybe_collect(self, cls: type) -> None:
        if not self._collect or cls in self._seen or self._depth >= _MAX_CLASS_DEPTH:
            return
        if cls.__module__ in ("builtins", "typing", "collections.abc", "datetime", "decimal"):
            return
        if _is_typeddict(cls):
            kind = "TypedDict"
            fields = list(typing.get_type_hints(cls).items())
        elif isinstance(cls, type) and issubclass(cls, BaseModel):
            kind = "BaseModel"
            fields = [(n, f.annotation) for n, f in cls.model_fields.items()]
        elif dataclasses.is_dataclass(cls):
            kind = "dataclass"
            hints = _hints(cls)
            fields = [(f.name, hints.get(f.name, f.type)) for f in dataclasses.fields(cls)]
        elif issubclass(cls, enum.Enum):
            self._seen.add(cls)
            members = [f"{_INDENT}{m.name} = {_default(m.value)}" for m in cls]
            self.class_blocks.append(f"class {cls.__name__}(Enum):\n" + "\n".join(members))
            return
        else:
            return
        self._seen.add(cls)
        self._depth += 1
        try:
            lines = [f"{_INDENT}{name}: {self.annotation(ann)}" for name, ann in fields]
        finally:
            self._depth -= 1
        head = "@dataclass\nclass " if kind == "dataclass" else "class "
        bases = "" if kind == "dataclass" else f"({kind})"
        summary = _summary(inspect.getdoc(cls)) if kind != "TypedDict" else ""
        body = ([f'{_INDENT}"""{_escape(summary)}"""'] if summary else []) + (
            lines or [f"{_INDENT}pass"]
        )
        self.class_blocks.append(f"{head}{cls.__name__}{bases}:\n" + "\n".join(body))


def _signature_of(projection: ToolProjection) -> inspect.Signature | None:
    signature = getattr(projection, "signature", None)
    if isinstance(signature, inspect.Signature):
        return signature
    try:
        return inspect.signature(projection)
    except (TypeError, ValueError):
        return None


def _last_positional_only(signature: inspect.Signature, param: inspect.Parameter) -> bool:
    names = [p.name for p in signature.parameters.values() if p.kind is p.POSITIONAL_ONLY]
    return bool(names) and names[-1] == param.name


def _default(value: Any) -> str:
    text = repr(value)
    try:
        if ast.literal_eval(text) == value:
            return text
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return "..."


def _bare(obj: Any) -> str:
    name = getattr(obj, "__name__", None) or getattr(obj, "_name", None)
    if isinstance(name, str):
        return name
    return repr(obj).replace("typing.", "").replace("collections.abc.", "")


def _is_typeddict(cls: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, dict) and hasattr(cls, "__total__")


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # unresolvable forward references: fall back to raw annotations
        return dict(getattr(cls, "__annotations__", {}))


def _summary(doc: str | None) -> str:
    if not doc:
        return ""
    parsed = docstring_parser.parse(doc)
    return (parsed.short_description or "").strip()


def _docstring(doc: str | None, indent: str) -> str:
    if not doc or not doc.strip():
        return f"{indent}..."
    parsed = docstring_parser.parse(doc)
    paragraphs = [p for p in (parsed.short_description, parsed.long_description) if p]
    text = "\n\n".join(p.strip() for p in paragraphs)
    documented = [p for p in parsed.params if p.description]
    if documented:
        args = "\n".join(
            f"{_INDENT}{p.arg_name}: {' '.join(p.description.split())}"  # type: ignore[union-attr]
            for p in documented
        )
        text = f"{text}\n\nArgs:\n{args}" if text else f"Args:\n{args}"
    if parsed.returns is not None and parsed.returns.description:
        returns = " ".join(parsed.returns.description.split())
        text = (
            f"{text}\n\nReturns:\n{_INDENT}{returns}" if text else f"Returns:\n{_INDENT}{returns}"
        )
    if not text:
        text = doc.strip()
    escaped = _escape(text)
    if "\n" not in escaped:
        return f'{indent}"""{escaped}"""'
    body = "\n".join((indent + line) if line.strip() else "" for line in escaped.splitlines())
    return f'{indent}"""{body.lstrip()}\n{indent}"""'


def _escape(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return text[:-1] + '\\"' if text.endswith('"') else text
