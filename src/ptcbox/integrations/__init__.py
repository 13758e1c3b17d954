"""Adapters that hand ptcbox's ``run_code`` to agent frameworks, one module per framework.

Each module needs its framework, installed with its extra, and is imported only when you
import it (``import ptcbox`` imports none of them):

- :mod:`ptcbox.integrations.pydantic_ai` (``ptcbox[pydantic-ai]``): a pydantic-ai
  toolset with the ``run_code`` tool.
- :mod:`ptcbox.integrations.openai_agents` (``ptcbox[openai-agents]``): an OpenAI Agents
  SDK ``FunctionTool``.
- :mod:`ptcbox.integrations.langchain` (``ptcbox[langchain]``): a LangChain
  ``StructuredTool``.
- :mod:`ptcbox.integrations.fastmcp` (``ptcbox[fastmcp]``): ptcbox as the sandbox of
  FastMCP's ``CodeMode`` (``PtcboxSandboxProvider``).

All three wrap one :class:`~ptcbox.agent_glue.RunCodeTool`, which you create (and close)
yourself, so the sandbox runtime's lifetime stays yours: ``async with RunCodeTool(tools)
as run_code: ...``. The framework sees the same name, description (your tools as Python
stubs) and JSON schema a ptcbox agent sees, and gets ``CodeResult.render()`` back.
"""

__all__: list[str] = []
