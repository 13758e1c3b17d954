"""Issue 12: process-wide and thread-wide stdlib state must not carry a snippet's objects
to other executions or to the host (ThreadRuntime; SubprocessRuntime where it applies).

Attacks that poison process-wide state run in a child Python, so that a success cannot
poison the test process itself. The positive control of each is the same snippet under
``SandboxPolicy.trusted()``, which has no such protection, or plain host code.
"""

from __future__ import annotations

import pytest

from attacks._child import child_output

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# == 1. typing's subscription caches (items 1 and 2) =====================================

TYPING_CHILD = """
import asyncio, sys, typing
from ptcbox import ThreadRuntime, resolve_tools
from ptcbox.sandbox import SandboxPolicy
trusted = sys.argv[1] == "trusted"
policy = SandboxPolicy.trusted() if trusted else SandboxPolicy()
calls = []
def secret_tool() -> str:
    \"\"\"A's tool.\"\"\"
    calls.append("called")
    return "tool-ran"
A = '''
import typing
class K:
    def __init__(self, tool):
        self.secret = "A-secret"
        self.tool = tool
    def __call__(self):
        pass
    def __hash__(self):
        return hash(complex)
    def __eq__(self, other):
        return True
typing.Optional[K(secret_tool)]
typing.List[K(secret_tool)]
'''
B = '''
import typing
class Probe:
    def __call__(self):
        pass
    def __hash__(self):
        return hash(complex)
    def __eq__(self, other):
        return True
got = typing.get_args(typing.List[Probe()])[0]
print(type(got).__name__, getattr(got, "secret", None))
if hasattr(got, "tool"):
    print(got.tool())
'''
async def main():
    async with ThreadRuntime(policy) as runtime:
        a = await runtime.execute(A, resolve_tools([secret_tool]), timeout=10)
        b = await runtime.execute(B, {}, timeout=10)
    print("A", a.ok, a.error)
    print("B", b.ok, repr(b.stdout), b.error)
asyncio.run(main())
print("host Optional[complex] args", typing.get_args(typing.Optional[complex]))
print("host List[complex] args", typing.get_args(typing.List[complex]))
print("tool calls", calls)
"""


@pytest.mark.parametrize("mode", ["trusted", "restricted"])
def test_typing_caches_carry_no_snippet_object(mode: str) -> None:
    """Execution A subscribes typing with an object that hashes like ``str`` and equals
    everything; B's equal probe must not get A's object (and A's tool) back, nor may the
    host's own ``Optional[complex]``. Trusted code has no protection: the positive control."""
    out = child_output(TYPING_CHILD, mode, timeout=30)
    assert "A True None" in out, out
    if mode == "trusted":  # the leak is real without the guard
        assert "K A-secret" in out, out
        assert "tool calls ['called']" in out, out
        assert "host Optional[complex] args (<class 'complex'>, <class 'NoneType'>)" not in out, out
        return
    assert "B True 'Probe None\\n' None" in out, out
    assert "host Optional[complex] args (<class 'complex'>, <class 'NoneType'>)" in out, out
    assert "host List[complex] args (<class 'complex'>,)" in out, out
    assert "tool calls []" in out, out
