"""Binding snippet call arguments to a tool's parameters."""

from __future__ import annotations

from typing import Any

import pytest

from ptcbox.projections import DirectProjection, binder_for


def search(query: str, limit: int = 10, *, exact: bool = False) -> list[str]:
    """Search."""
    return []


def test_keywords_take_the_fast_path_and_are_copied() -> None:
    binder = binder_for(DirectProjection("search", search))
    kwargs = {"query": "cats"}
    bound = binder.bind((), kwargs)
    assert bound == {"query": "cats"}
    assert bound is not kwargs


def test_positional_arguments_are_bound_by_name() -> None:
    binder = binder_for(DirectProjection("search", search))
    assert binder.bind(("cats", 3), {"exact": True}) == {
        "query": "cats",
        "limit": 3,
        "exact": True,
    }


@pytest.mark.parametrize(
    ("args", "kwargs", "fragment"),
    [
        ((), {"q": "cats"}, "search() got an unexpected keyword argument 'q'"),
        ((), {}, "search() missing 1 required positional argument: 'query'"),
        (("a", 1, True), {}, "search() takes from 1 to 2 positional arguments but 3 were given"),
        (("a",), {"query": "b"}, "search() got multiple values for argument 'query'"),
        ((), {"query": "a", "zz": 2}, "search() got an unexpected keyword argument 'zz'"),
    ],
)
def test_wrong_arguments_raise_type_error_naming_the_signature(
    args: tuple[Any, ...], kwargs: dict[str, Any], fragment: str
) -> None:
    binder = binder_for(DirectProjection("search", search))
    with pytest.raises(TypeError) as raised:
        binder.bind(args, kwargs)
    assert str(raised.value) == fragment  # exactly CPython's words for such a function
    with pytest.raises(TypeError) as plain:
        search(*args, **kwargs)
    assert str(plain.value) == fragment
    # the signature is a PEP 678 note (tracebacks and CodeResult.render() show it)
    assert raised.value.__notes__ == [
        "tool signature: search(query: str, limit: int = 10, *, exact: bool = False)"
    ]


def test_var_keyword_tools_accept_any_keyword() -> None:
    def anything(**options: Any) -> None:
        return None

    binder = binder_for(DirectProjection("anything", anything))
    assert binder.bind((), {"x": 1, "y": 2}) == {"x": 1, "y": 2}
    with pytest.raises(TypeError, match=r"^anything\(\) takes 0 positional arguments but 1 was"):
        binder.bind((1,), {})


def test_var_positional_and_positional_only_cannot_reach_a_tool() -> None:
    def star(*items: int) -> None:
        return None

    def pos_only(a: int, /) -> None:
        return None

    with pytest.raises(TypeError, match="extra positional"):
        binder_for(DirectProjection("star", star)).bind((1, 2), {})
    with pytest.raises(TypeError, match="positional-only"):
        binder_for(DirectProjection("pos_only", pos_only)).bind((1,), {})


class _KeywordsOnly:
    name = "kw"
    doc = None

    def __call__(self, **kwargs: Any) -> Any:
        return kwargs


def test_projection_without_a_signature_takes_keywords_only() -> None:
    binder = binder_for(_KeywordsOnly())
    assert binder.signature_text == "kw(**kwargs)"
    assert binder.bind((), {"a": 1}) == {"a": 1}
    with pytest.raises(TypeError, match=r"^kw\(\) takes 0 positional arguments but 1 was given"):
        binder.bind((1,), {})
