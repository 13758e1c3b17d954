"""Optional adapters to other frameworks, one module per framework, each behind its extra.

Nothing here is imported by ``import ptcbox``; import the module you need, e.g.
``from ptcbox.integrations.fastmcp import PtcboxSandboxProvider`` (extra ``fastmcp``).
"""

__all__: list[str] = []
