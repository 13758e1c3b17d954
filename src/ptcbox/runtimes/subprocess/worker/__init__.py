"""The only code that runs in SubprocessRuntime's sandboxed child process.

It imports the standard library, :mod:`ptcbox.runtimes._wire`, :mod:`ptcbox.sandbox` and
a short allowlist (``tests/test_architecture.py`` walks its imports); nothing of the
host runtimes or the agent glue. This ``__init__`` re-exports nothing, so importing a
module of the child imports only what that module imports.

- :mod:`~ptcbox.runtimes.subprocess.worker._template`: the warm template process that
  forks the workers.
- :mod:`~ptcbox.runtimes.subprocess.worker._main`: a worker's set-up and its run loop.
- :mod:`~ptcbox.runtimes.subprocess.worker._io`: the worker's end of the channel
  (tool calls, output, the event loop for top-level ``await``).
- :mod:`~ptcbox.runtimes.subprocess.worker._config`: what the host hands a worker (its
  configuration, the policy, compiled snippets); the host imports it to build them.
- The OS walls: :mod:`~ptcbox.runtimes.subprocess.worker._rlimits` (rlimits, process
  attributes, the empty network namespace), :mod:`~ptcbox.runtimes.subprocess.worker._seccomp`
  (the seccomp filter), :mod:`~ptcbox.runtimes.subprocess.worker._landlock` (the file
  system) and :mod:`~ptcbox.runtimes.subprocess.worker._audit` (the audit hook).
"""

__all__: list[str] = []
