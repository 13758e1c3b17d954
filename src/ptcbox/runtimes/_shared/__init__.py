"""What both runtimes share; the modules the child may import are marked.

- :mod:`~ptcbox.runtimes._shared._awaitable`: tool calls a snippet can ``await``
  (child too).
- :mod:`~ptcbox.runtimes._shared._value`: size caps of values crossing the tool boundary
  (child too).
- :mod:`~ptcbox.runtimes._shared._output`: the capped output buffer and the live relay
  (child too).
- :mod:`~ptcbox.runtimes._shared._error_text`: error text for the model, the snippet's
  frames only (child too).
- :mod:`~ptcbox.runtimes._shared._exit`: script exit semantics of ``SystemExit``
  (child too).
- :mod:`~ptcbox.runtimes._shared._host`: host side only: timeouts and the tool table.
"""

__all__: list[str] = []
