"""ToolProjection, DirectProjection and validate_namespace."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ptcbox.projections import DirectProjection, ToolProjection, validate_namespace


def add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b


async def fetch(q: str) -> str:
    """Fetch something."""
    return q.upper()


def test_direct_projection_calls_the_function_with_keywords() -> None:
    projection = DirectProjection(name="add", fn=add)
    assert projection(a=1, b=5) == 6
    assert projection.name == "add"
    assert projection.doc == "Add two numbers."
    assert projection.is_async is False
    assert isinstance(projection, ToolProjection)


def test_direct_projection_doc_override_and_missing_doc() -> None:
    assert DirectProjection("add", add, doc="Custom.").doc == "Custom."
    assert DirectProjection("f", lambda: 1).doc is None


def test_async_function_returns_a_coroutine_for_the_runtime_to_await() -> None:
    projection = DirectProjection("fetch", fetch)
    assert projection.is_async is True
    assert asyncio.run(projection(q="x")) == "X"


def test_signature_resolves_string_annotations() -> None:
    # this module uses `from __future__ import annotations`: annotations are strings
    projection = DirectProjection("add", add)
    assert projection.signature is not None
    assert str(projection.signature) == "(a: int, b: int = 2) -> int"


def test_signature_falls_back_when_an_annotation_does_not_evaluate() -> None:
    def broken(x: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    projection = DirectProjection("broken", broken)
    assert projection.signature is not None
    assert "NoSuchType" in str(projection.signature)


def test_non_callable_is_refused() -> None:
    with pytest.raises(TypeError, match="callable"):
        DirectProjection("x", 3)  # type: ignore[arg-type]


class _Custom:
    """A hand-written projection satisfying the protocol."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def doc(self) -> str | None:
        return None

    def __call__(self, **kwargs: Any) -> Any:
        return kwargs


def test_validate_namespace_accepts_matching_names() -> None:
    validate_namespace({"add": DirectProjection("add", add), "custom": _Custom("custom")})


@pytest.mark.parametrize(
    ("key", "name", "message"),
    [
        ("add", "plus", "does not match"),
        ("not-an-id", "not-an-id", "identifier"),
        ("1abc", "1abc", "identifier"),
        ("class", "class", "keyword"),
        ("match", "match", "keyword"),
        ("_hidden", "_hidden", "underscore"),
    ],
)
def test_validate_namespace_refuses_bad_names(key: str, name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_namespace({key: DirectProjection(name, add)})


def test_validate_namespace_refuses_non_projections() -> None:
    with pytest.raises(TypeError, match="not a ToolProjection"):
        validate_namespace({"add": add})  # type: ignore[dict-item]
