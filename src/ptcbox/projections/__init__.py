"""Projections: how tools appear inside a snippet.

Re-exports :class:`ToolProjection`, :class:`DirectProjection`, :func:`validate_namespace`
and the argument binder the runtimes use.
"""

from ptcbox.projections._binding import ArgumentBinder, binder_for
from ptcbox.projections._protocol import DirectProjection, ToolProjection, validate_namespace

__all__ = [
    "ArgumentBinder",
    "DirectProjection",
    "ToolProjection",
    "binder_for",
    "validate_namespace",
]
