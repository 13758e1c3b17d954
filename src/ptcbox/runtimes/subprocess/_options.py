"""Checks of :class:`~ptcbox.runtimes.SubprocessRuntime`'s constructor arguments."""

from __future__ import annotations

from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._dataspecs import missing_data_libs

__all__ = ["check_options"]


def check_options(
    policy: SandboxPolicy,
    *,
    max_workers: int,
    min_idle: int,
    rotate_template_after: int | None,
    max_executions_per_worker: int,
    max_open_files: int,
) -> None:
    """Refuse out-of-range options and a data policy whose libraries are missing.

    Raises:
        ValueError: A numeric option is out of range.
        ImportError: The policy allows numpy or pandas and it is not installed.
    """
    if max_workers < 1:
        raise ValueError(f"max_workers must be at least 1, got {max_workers}")
    if min_idle < 0:
        raise ValueError(f"min_idle must be >= 0, got {min_idle}")
    if rotate_template_after is not None and rotate_template_after < 1:
        raise ValueError(f"rotate_template_after must be >= 1, got {rotate_template_after}")
    if max_executions_per_worker < 1:
        raise ValueError(
            f"max_executions_per_worker must be at least 1, got {max_executions_per_worker}"
        )
    if max_open_files < 16:
        raise ValueError(f"max_open_files must be at least 16, got {max_open_files}")
    missing = missing_data_libs(policy.allowed_imports)
    if missing:
        raise ImportError(
            f"the policy allows {' and '.join(missing)}, "
            f"which {'are' if len(missing) > 1 else 'is'} not installed: "
            "pip install 'ptcbox[data]'"
        )
