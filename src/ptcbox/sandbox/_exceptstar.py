"""``try/except*`` with the CVE-2025-22153 route closed.

CPython before 3.12.9/3.13.2 trusts the value an exception group's ``split`` method
returns while matching ``except*`` clauses (gh-128049): a group subclass whose ``split``
returns something other than a tuple corrupts memory. RestrictedPython therefore refuses
``try/except*`` outright. ptcbox compiles it with a check first (see ``_transform``)::

    try:
        try: BODY
        except BaseException as _exc_star_: _except_star_(_exc_star_); raise
    except* ...

:func:`check_except_star` lets an exception reach the ``except*`` clauses only if
``split`` and ``derive`` of its group resolve to ``BaseExceptionGroup``'s own (looked up
in the class dicts of the MRO, and no instance attribute of either name). Later clauses
call ``split`` on the rest the first split built through that real ``derive``: a fresh
``BaseExceptionGroup``, which nothing else has seen. A non-group exception is wrapped by
the interpreter itself.
"""

from __future__ import annotations

from typing import Any, Final

from ptcbox.errors import PolicyViolation

__all__ = ["EXCEPT_STAR_GUARD", "check_except_star"]

EXCEPT_STAR_GUARD: Final = "_except_star_"
_REAL: Final = {name: BaseExceptionGroup.__dict__[name] for name in ("split", "derive")}
_EXC_DICT: Final[Any] = BaseException.__dict__["__dict__"]


def _lookup(cls: type, name: str) -> Any:
    for base in cls.__mro__:
        if name in base.__dict__:
            return base.__dict__[name]
    return None


def check_except_star(exc: BaseException) -> None:
    """Raise unless ``except*`` may match ``exc`` (see the module docstring).

    Raises:
        PolicyViolation: ``exc`` is an exception group with its own ``split``/``derive``.
    """
    if not isinstance(exc, BaseExceptionGroup):
        return
    own = _EXC_DICT.__get__(exc)
    for name, real in _REAL.items():
        if _lookup(type(exc), name) is not real or name in own:
            raise PolicyViolation(
                f"except* cannot match a {type(exc).__name__} that overrides {name}() "
                "(CVE-2025-22153); catch it with a plain `except` clause instead"
            )
