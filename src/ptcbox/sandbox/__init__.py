"""The sandbox: policy, restricted compile, guarded builtins and read-only modules.

Runtimes use it in three steps::

    compiled = compile_snippet(code, policy)              # cached; may raise
    g = build_globals(policy, tools=..., stdout=..., stderr=...)
    exec(compiled.code, g)    # or: await eval(compiled.code, g) if compiled.is_async
    value = g.get(VALUE_NAME) if compiled.has_value else None
"""

from ptcbox.sandbox._builtins import EXCLUDED_BUILTINS
from ptcbox.sandbox._compile import VALUE_NAME, CompiledSnippet, compile_snippet
from ptcbox.sandbox._globals import TextSink, build_globals
from ptcbox.sandbox._modules import EXCLUDED_MODULES
from ptcbox.sandbox._policy import DEFAULT_ALLOWED_IMPORTS, SandboxPolicy

__all__ = [
    "DEFAULT_ALLOWED_IMPORTS",
    "EXCLUDED_BUILTINS",
    "EXCLUDED_MODULES",
    "VALUE_NAME",
    "CompiledSnippet",
    "SandboxPolicy",
    "TextSink",
    "build_globals",
    "compile_snippet",
]
