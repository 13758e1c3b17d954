"""The validated projection: a tool that checks its arguments before it runs.

:class:`ValidatedProjection` validates the snippet's keyword arguments with the tool's
pydantic parameter model (lax mode: ``"3"`` becomes ``3`` for an ``int`` parameter,
nested dicts become models), injects a context argument the snippet never passes, and
calls the function with the validated values. Its ``signature`` omits the injected
parameter, so runtimes bind positional arguments exactly as the model sees the tool.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ptcbox._jsonable import to_jsonable
from ptcbox.projections._stubs import format_signature

__all__ = ["ValidatedProjection", "describe_validation_error", "preview"]

_PREVIEW_CHARS = 200


class ValidatedProjection:
    """A tool projection that validates arguments with a pydantic model before calling.

    Args:
        name: The name the snippet calls the tool by.
        fn: The tool function, sync or async. Async functions stay async: calling the
            projection returns a coroutine that the runtime awaits on the host's loop.
        model: The parameter model. Each field's *alias* is the parameter name (so any
            parameter name works, even ones that clash with ``BaseModel`` attributes);
            the model should forbid extra fields.
        signature: The signature the snippet sees: the function's parameters without
            the injected context parameter, with the return annotation.
        doc: Description shown in stubs and ``help()``.
        context_parameter: Name of the parameter that receives a context object, or
            ``None``.
        context_factory: Called once per call to build that context object.
        result_adapter: Applied to the function's return value (awaited value for async
            functions) before it reaches the snippet; may raise to report a failure.

    Raises:
        ValueError: If ``context_parameter`` is given without ``context_factory``.
    """

    __slots__ = (
        "_adapter",
        "_context_factory",
        "_context_parameter",
        "_doc",
        "_fields",
        "_fn",
        "_is_async",
        "_model",
        "_name",
        "_signature",
    )

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        model: type[BaseModel],
        signature: inspect.Signature,
        doc: str | None = None,
        context_parameter: str | None = None,
        context_factory: Callable[[], Any] | None = None,
        result_adapter: Callable[[Any], Any] | None = None,
    ) -> None:
        if context_parameter is not None and context_factory is None:
            raise ValueError("context_parameter needs a context_factory")
        self._name = name
        self._fn = fn
        self._model = model
        self._signature = signature
        self._doc = doc
        self._context_parameter = context_parameter
        self._context_factory = context_factory
        self._adapter = result_adapter
        self._is_async = inspect.iscoroutinefunction(fn)
        self._fields = tuple(
            (field_name, info.alias or field_name)
            for field_name, info in model.model_fields.items()
        )

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._name

    @property
    def doc(self) -> str | None:
        """The tool's description, or ``None``."""
        return self._doc

    @property
    def signature(self) -> inspect.Signature:
        """The signature the snippet sees (no injected context parameter)."""
        return self._signature

    @property
    def model(self) -> type[BaseModel]:
        """The pydantic model that validates the arguments."""
        return self._model

    @property
    def fn(self) -> Callable[..., Any]:
        """The wrapped function."""
        return self._fn

    @property
    def is_async(self) -> bool:
        """``True`` when the function is a coroutine function."""
        return self._is_async

    def validate(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Validate keyword arguments and return the values the function receives.

        Args:
            kwargs: Parameter name to value, as the snippet passed them.

        Returns:
            Every parameter (defaults filled in) converted to its annotated type; the
            context parameter is not included.

        Raises:
            TypeError: If the arguments do not fit; the message names the tool's
                signature, each problem and what was given.
        """
        try:
            instance = self._model.model_validate(dict(kwargs))
        except ValidationError as exc:
            raise TypeError(
                describe_validation_error(self._name, self._signature, exc, kwargs)
            ) from None
        return {alias: getattr(instance, field_name) for field_name, alias in self._fields}

    def __call__(self, **kwargs: Any) -> Any:
        """Validate ``kwargs`` and call the tool; an async tool returns a coroutine.

        Raises:
            TypeError: If the arguments do not fit the tool's parameters.
        """
        values = self.validate(kwargs)
        if self._context_parameter is not None and self._context_factory is not None:
            values[self._context_parameter] = self._context_factory()
        if self._is_async:
            return self._call_async(values)
        result = self._fn(**values)
        return result if self._adapter is None else self._adapter(result)

    async def _call_async(self, values: dict[str, Any]) -> Any:
        result = await self._fn(**values)
        return result if self._adapter is None else self._adapter(result)

    def __repr__(self) -> str:
        return f"ValidatedProjection(name={self._name!r}, fn={self._fn!r})"


def describe_validation_error(
    name: str,
    signature: inspect.Signature | None,
    error: ValidationError,
    given: object,
) -> str:
    """Explain a validation failure in words a model can act on.

    The text names the tool's signature, each problem (parameter and reason) and a
    preview of what was given, e.g.::

        get_expenses(employee_id: str, quarter: str) got invalid arguments:
          - quarter: Input should be a valid string (given 3)
          - missing required argument 'employee_id'
        Given: {"quarter": 3}

    Args:
        name: The tool's name.
        signature: The signature the caller sees, or ``None``.
        error: The pydantic error.
        given: What the caller passed (any value; shown as a JSON preview).

    Returns:
        The multi-line message.
    """
    shown = format_signature(name, signature)
    lines = [f"{shown} got invalid arguments:"]
    for item in error.errors(include_url=False):
        loc = ".".join(str(part) for part in item.get("loc", ()))
        kind = item.get("type", "")
        if kind == "missing":
            lines.append(f"  - missing required argument {loc!r}")
        elif kind == "extra_forbidden":
            lines.append(f"  - unexpected argument {loc!r}")
        else:
            where = f"{loc}: " if loc else ""
            lines.append(
                f"  - {where}{item.get('msg', 'invalid')} (given {preview(item.get('input'))})"
            )
    lines.append(f"Given: {preview(given, raw_text=True)}")
    return "\n".join(lines)


def preview(value: object, limit: int = _PREVIEW_CHARS, *, raw_text: bool = False) -> str:
    """Return a short JSON-like preview of ``value`` for error messages.

    Args:
        value: Any value.
        limit: Longest preview, in characters.
        raw_text: Show a string as it is (it is the raw argument text a model sent)
            instead of as a JSON string; an empty string shows as ``(empty)``.

    Returns:
        The preview, cut with ``...`` when longer than ``limit``.
    """
    if raw_text and isinstance(value, str):
        text = value if value.strip() else "(empty)" if not value else repr(value)
        return text if len(text) <= limit else text[: limit - 3] + "..."
    try:
        text = json.dumps(to_jsonable(value), ensure_ascii=False)
    except (TypeError, ValueError):  # pragma: no cover - to_jsonable output always encodes
        text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
