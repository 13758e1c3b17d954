"""What crosses between a RayRuntime caller and its actors: JSON text, nothing else.

The caller sends each execution's request (the code, the timeout, the tools as
:func:`tool_descriptor` data) and each tool's reply (:func:`reply_text`); the actor
streams back batches of events as JSON text (:func:`event_batch`): tool calls, cancelled
calls, finished-call records, output chunks, and the final result
(``CodeResult.to_dict()``). Values keep their Python types across both hops through the
value codec (:mod:`ptcbox.runtimes._shared._codec`) and a tool's exception keeps its type
through :mod:`ptcbox.runtimes._shared._tool_errors`, exactly as between SubprocessRuntime's
host and worker; the caller only ever parses JSON text the actor sent
(:func:`parse_batch`) and builds only the codec's types from it.
"""

from __future__ import annotations

import inspect
from typing import Any

import orjson

from ptcbox._result import CodeResult, ToolCallRecord
from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._shared._codec import decode, encode
from ptcbox.runtimes._shared._error_text import describe_exception
from ptcbox.runtimes._shared._host import ToolSpec
from ptcbox.runtimes._shared._tool_errors import exception_payload, rebuild_tool_error

__all__ = [
    "ShownText",
    "event_batch",
    "json_globals",
    "parse_batch",
    "read_reply",
    "record_from_data",
    "reply_text",
    "result_from_data",
    "signature_from_descriptor",
    "tool_descriptor",
]

_PARAMETER_KINDS = (  # by their int values, 0 to 4
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    inspect.Parameter.VAR_POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY,
    inspect.Parameter.VAR_KEYWORD,
)


class ShownText:
    """A stand-in for an annotation or a default value: shows as the caller's text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def tool_descriptor(spec: ToolSpec) -> dict[str, Any]:
    """A tool as the actor sees it: name, doc, async or not, and its parameters.

    The parameters carry their names, kinds, and the text of annotations and defaults,
    so the actor binds arguments and words errors exactly as the caller's binder does.
    """
    doc = spec.projection.doc
    signature = spec.binder.signature
    params: list[list[Any]] | None = None
    if signature is not None:
        params = []
        for param in signature.parameters.values():
            annotation = (
                None
                if param.annotation is param.empty
                else inspect.formatannotation(param.annotation)
            )
            default = None if param.default is param.empty else repr(param.default)
            params.append([param.name, int(param.kind), annotation, default])
    return {
        "name": spec.name,
        "doc": doc if isinstance(doc, str) else None,
        "async": spec.is_async,
        "params": params,
    }


def signature_from_descriptor(params: list[list[Any]] | None) -> inspect.Signature | None:
    """Rebuild the signature a :func:`tool_descriptor` describes (actor side)."""
    if params is None:
        return None
    empty = inspect.Parameter.empty
    built = [
        inspect.Parameter(
            name,
            _PARAMETER_KINDS[kind],
            default=empty if default is None else ShownText(default),
            annotation=empty if annotation is None else ShownText(annotation),
        )
        for name, kind, annotation, default in params
    ]
    return inspect.Signature(built)


def reply_text(ok: bool, value: Any) -> str:
    """A tool's reply as JSON text: its value, or its exception as data (caller side)."""
    if ok:
        return orjson.dumps({"ok": True, "v": encode(value)}).decode()
    return orjson.dumps(
        {"ok": False, "exc": exception_payload(value), "message": describe_exception(value)}
    ).decode()


def read_reply(text: str, tool: str) -> Any:
    """The value of a reply, or raise the tool's exception rebuilt as its type (actor side).

    Raises:
        Exception: The tool's exception (also a :class:`~ptcbox.errors.ToolError`).
    """
    reply = orjson.loads(text)
    if reply.get("ok") is True:
        return decode(reply.get("v"))
    message = reply.get("message")
    raise rebuild_tool_error(reply.get("exc"), tool, message if isinstance(message, str) else "")


def event_batch(events: list[dict[str, Any]]) -> str:
    """Events as the JSON text of one batch (actor side)."""
    return orjson.dumps(events).decode()


def parse_batch(item: Any) -> list[dict[str, Any]]:
    """The events of one batch (caller side): JSON text, a list of objects.

    Raises:
        WireProtocolError: If the item is not such text.
    """
    if type(item) is not str:
        raise WireProtocolError(f"the Ray actor sent a {type(item).__name__}, not JSON text")
    try:
        events = orjson.loads(item)
    except orjson.JSONDecodeError as exc:
        raise WireProtocolError(f"the Ray actor sent malformed JSON: {exc}") from None
    if type(events) is not list or not all(type(e) is dict for e in events):
        raise WireProtocolError("the Ray actor sent something other than a list of events")
    return events


def record_from_data(data: dict[str, Any]) -> ToolCallRecord:
    """A :class:`ToolCallRecord` from its ``to_dict()`` data."""
    ok = data.get("ok")
    error = data.get("error")
    arguments = data.get("arguments")
    duration = data.get("duration_s")
    return ToolCallRecord(
        str(data.get("name")),
        arguments if isinstance(arguments, dict) else {},
        ok if ok is None or isinstance(ok, bool) else False,
        error if isinstance(error, str) else None,
        float(duration) if isinstance(duration, int | float) else 0.0,
    )


def result_from_data(data: dict[str, Any], duration_s: float) -> CodeResult:
    """A :class:`CodeResult` from its ``to_dict()`` data, with the caller's duration.

    Raises:
        WireProtocolError: If a field has the wrong type.
    """
    try:
        stdout, stderr = data["stdout"], data["stderr"]
        return_code, error, error_type = data["return_code"], data["error"], data["error_type"]
        calls = data["tool_calls"]
        if not (
            type(stdout) is str
            and type(stderr) is str
            and type(return_code) is int
            and (error is None or type(error) is str)
            and (error_type is None or type(error_type) is str)
            and type(calls) is list
            and all(type(call) is dict for call in calls)
        ):
            raise TypeError
        return CodeResult(
            stdout=stdout,
            stderr=stderr,
            return_code=return_code,
            error=error,
            error_type=error_type,
            timed_out=data.get("timed_out") is True,
            value=data.get("value"),
            tool_calls=tuple(record_from_data(call) for call in calls),
            duration_s=duration_s,
            truncated=data.get("truncated") is True,
        )
    except (KeyError, TypeError):
        raise WireProtocolError("the Ray actor sent a malformed result") from None


def json_globals(extra_globals: Any) -> dict[str, Any]:
    """``extra_globals`` checked to be JSON-compatible, as a new dict.

    Raises:
        TypeError: A key is not a ``str`` or a value is not JSON-compatible.
    """
    out: dict[str, Any] = {}
    for key, value in (extra_globals or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"extra_globals keys must be str, got {key!r}")
        try:
            orjson.dumps(
                value, option=orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
            )
        except TypeError as exc:
            if "64-bit" not in str(exc):
                raise TypeError(
                    f"extra_globals[{key!r}] is not JSON-compatible ({exc}); RayRuntime "
                    "sends extra_globals to the actor's worker process as JSON"
                ) from None
        out[key] = value
    return out
