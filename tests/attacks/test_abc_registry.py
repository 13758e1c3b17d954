"""ABC registries are process-wide: a snippet class cannot register into a shared ABC.

``ABCMeta.__subclasscheck__`` of an abstract class consults the registries of its
subclasses, so ``class X(collections.abc.Mapping): ...`` then ``X.register(int)`` made
``isinstance(5, Mapping)`` true for the whole process (red-team finding of this stop):
in ThreadRuntime the host's own checks (``inspect.isawaitable``, pydantic, ``json``)
answered wrongly, and so did every later execution (also a reused subprocess worker).
``Mapping.register(int)`` itself was already refused (a class the snippet does not own).

The positive control runs the snippet under ``SandboxPolicy.trusted()`` in a child
Python (it poisons the process it runs in) and shows the host's ``isinstance`` changed.
The default policy refuses ``X.register`` on the line that reads it, in both runtimes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from attacks._child import child_output

from .conftest import TOOLS

pytestmark = pytest.mark.anyio

# id: (snippet, line of the refusal, the shared ABC, the host check the control shows)
ATTACKS: dict[str, tuple[str, int, str, str]] = {
    "mapping": (
        "import collections.abc\nclass X(collections.abc.Mapping):\n    pass\n"
        "X.register(int)\nprint('registered')",
        4, "Mapping", "isinstance(5, collections.abc.Mapping)",
    ),
    "number": (
        "import numbers\nclass N(numbers.Integral):\n    pass\nN.register(str)\n"
        "print('registered')",
        4, "Integral", "isinstance('x', numbers.Number)",
    ),
    "awaitable_via_getattr": (
        "import collections.abc\nclass W(collections.abc.Awaitable):\n    pass\n"
        "reg = getattr(W, 'register')\nreg(dict)\nprint('registered')",
        4, "Awaitable", "inspect.isawaitable({})",
    ),
}  # fmt: skip

CONTROL = """
import collections.abc, inspect, json, numbers, sys
import ptcbox
code, check = sys.argv[1], sys.argv[2]
result = ptcbox.execute(code, policy=ptcbox.SandboxPolicy.trusted(), runtime="thread")
print(json.dumps([result.stdout, eval(check)]))
"""


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_control_changes_the_hosts_isinstance(attack: str) -> None:
    code, _, _, check = ATTACKS[attack]
    out = child_output(CONTROL, code, check, timeout=60)
    stdout, poisoned = json.loads(out.strip().splitlines()[-1])
    assert stdout == "registered\n" and poisoned is True, out


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_registering_into_a_shared_abc_is_refused(attack: str, runtime: Any) -> None:
    code, line, abc_name, _ = ATTACKS[attack]
    result = await runtime.execute(code, TOOLS)
    assert result.error_type == "PolicyViolation", result
    error = result.error or ""
    assert f'File "<snippet>", line {line}, in <module>' in error, error
    assert (
        f"would change isinstance() of {abc_name}, an abstract class shared with the host"
        in error.rstrip().splitlines()[-1]
    ), error
    assert result.stdout == ""
    import collections.abc
    import inspect

    assert not isinstance(5, collections.abc.Mapping) and not inspect.isawaitable({})
    assert sys.modules["numbers"].Number not in str.__mro__
