"""Ownership marks (``_owner.py``): read from the exact class's ``__dict__``, never forged.

F2: the marks were read with ``getattr``, so a class-dict descriptor named like a mark
(``_ptc_private_ok_ = D()`` with ``D.__get__`` returning the owner) forged ``private_ok()``
and opened every private attribute of a host class (the event loop of ``asyncio.Queue``).
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._owner import (
    OWNED_ATTR,
    PRIVATE_ATTR,
    SANDBOX_MARK,
    is_owned,
    private_ok,
    register_class,
)


class _Forger:
    """A descriptor that answers any class-level lookup with the owner class."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return owner


class _MarkOnMeta(type):
    """A metaclass whose data descriptor answers the mark lookups."""

    @property
    def _ptc_private_ok_(cls) -> Any:
        return cls

    @property
    def _ptc_owned_(cls) -> Any:
        return SANDBOX_MARK


def test_descriptor_named_like_a_mark_forges_nothing() -> None:
    queue_sub = type("Q", (asyncio.Queue,), {PRIVATE_ATTR: _Forger(), OWNED_ATTR: _Forger()})
    assert getattr(queue_sub, PRIVATE_ATTR) is queue_sub  # what the old lookup saw
    assert not private_ok(queue_sub())
    assert not private_ok(queue_sub)
    assert not is_owned(queue_sub())
    assert not is_owned(queue_sub)


def test_metaclass_descriptor_forges_nothing() -> None:
    cls = _MarkOnMeta("C", (), {})
    assert getattr(cls, PRIVATE_ATTR) is cls and getattr(cls, OWNED_ATTR) is SANDBOX_MARK
    assert not private_ok(cls)
    assert not is_owned(cls)


def test_marks_are_per_class_and_a_host_base_denies_private_access() -> None:
    class Own:
        pass

    class Mixed(Own, asyncio.Queue):  # type: ignore[type-arg]
        pass

    register_class(Own)
    register_class(Mixed)
    assert private_ok(Own()) and is_owned(Own())
    assert is_owned(Mixed()) and not private_ok(Mixed())

    class Unregistered(Own):
        pass

    # a subclass built outside the class statement (no mark of its own) is not the snippet's
    assert not is_owned(Unregistered) and not private_ok(Unregistered())


def test_register_class_drops_a_copied_private_mark() -> None:
    class Old:
        pass

    register_class(Old)
    assert private_ok(Old)
    new = type("New", (), dict(vars(Old)))  # as dataclass(slots=True) copies the dict
    assert new.__dict__[PRIVATE_ATTR] is Old
    register_class(new)
    assert PRIVATE_ATTR not in new.__dict__
    assert private_ok(new)


def test_builtin_bases_count_by_identity_not_by_module_name(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import collections
        P = collections.namedtuple("P", "a", module="builtins")
        class Q(P):
            def peek(self):
                return self._tuplegetter
        Q(1).peek()
        """
    )
    with pytest.raises(PolicyViolation, match="private attribute"):
        sandbox_run(code)
    code = "class S(str):\n    def f(self):\n        self._n = 1\n        return self._n\nS().f()"
    assert sandbox_run(code).value == 1  # builtin bases keep private access


@pytest.mark.parametrize(
    "code",
    [
        "import asyncio\nclass Q(asyncio.Queue):\n    pass\nQ()._get_loop",
        "import asyncio\nclass Q(asyncio.Queue):\n    def f(self):\n        return self._loop\n"
        "Q().f()",
        "import asyncio\nclass Q(asyncio.Queue):\n    def f(self):\n        return self._get_loop()"
        "\nQ().f()",
    ],
)
def test_snippet_subclass_of_a_host_class_gets_no_private_access(
    sandbox_run: Callable, code: str
) -> None:
    with pytest.raises(PolicyViolation):
        sandbox_run(code)
