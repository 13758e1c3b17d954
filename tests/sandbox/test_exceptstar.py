"""sandbox/_exceptstar.py: except* runs; groups with their own split/derive are refused."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._exceptstar import check_except_star


def test_real_groups_and_plain_exceptions_pass() -> None:
    check_except_star(ValueError(1))
    check_except_star(ExceptionGroup("g", [ValueError(1)]))

    class Sub(ExceptionGroup):  # a subclass that keeps the real split/derive
        pass

    check_except_star(Sub("g", [ValueError(1)]))


def test_own_split_or_derive_is_refused() -> None:
    class Split(ExceptionGroup):
        def split(self, *a):  # type: ignore[no-untyped-def, override]
            return 1

    class Derive(ExceptionGroup):
        def derive(self, excs):  # type: ignore[no-untyped-def, override]
            return Derive(self.message, excs)

    inst = ExceptionGroup("g", [ValueError(1)])
    inst.split = lambda *a: 1  # type: ignore[method-assign]
    for group, name in ((Split("g", [ValueError()]), "split"),
                        (Derive("g", [ValueError()]), "derive"), (inst, "split")):  # fmt: skip
        with pytest.raises(PolicyViolation, match=rf"overrides {name}\(\)"):
            check_except_star(group)


def test_nested_except_star_in_methods_runs(sandbox_run: Callable) -> None:
    code = """
class Job:
    def run(self):
        try:
            try:
                raise ExceptionGroup("a", [ValueError(1), TypeError(2)])
            except* ValueError:
                raise KeyError(3)
        except* (KeyError, TypeError) as eg:
            self.seen = sorted(type(e).__name__ for e in eg.exceptions)
        return self.seen
Job().run()
"""
    plain: dict[str, object] = {}
    exec(code.replace("Job().run()", "out = Job().run()"), plain)
    assert sandbox_run(code).value == plain["out"] == ["ExceptionGroup", "KeyError"]
