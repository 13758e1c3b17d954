"""The alive checks: where restricted code reads ``_alive_.running``, and why.

:class:`~ptcbox.sandbox._transform.PtcTransformer` inserts them (unless
``alive_checks=False``); the thread runtime binds ``_alive_`` (see :data:`ALIVE_ATTR`).
"""

from __future__ import annotations

import ast

from ptcbox.sandbox._astnodes import copy_locations, load_name

__all__ = ["ALIVE_ATTR", "ALIVE_NAME", "alive_check", "alive_read"]

ALIVE_NAME = "_alive_"
ALIVE_ATTR = "running"
"""Restricted code reads ``_alive_.running`` at the start of every function body, lambda,
``except`` handler and ``finally`` block (unless ``alive_checks=False``).

Those are the places where snippet code can start running when nobody runs the
snippet: the garbage collector closes a suspended generator or coroutine of the snippet
(``GeneratorExit`` at its ``yield``/``await``, so its handlers run, and whatever its
unwinding calls: ``__exit__`` of its ``with`` blocks, ``close()`` of an iterator it
delegates to) on whatever thread runs the collection, possibly long after the
execution ended. The thread runtime binds ``_alive_`` to a ``threading.local`` whose
``running`` is set only in the execution's thread while its snippet code runs, so such
code fails at its first line with ``AttributeError`` (every handler starts with the
check, so none can swallow it). A C-level attribute read, ~50 ns per function call.
Elsewhere ``running`` is always there. A worker process needs no check: it dies with
its execution.

Where suspended code *resumes* (each step of a generator expression, the code after a
``yield``/``await``, driven by host code through a builtin the snippet installed as a
hook: red-team R1) is checked by :mod:`ptcbox.sandbox._resume`."""


def alive_read() -> ast.Attribute:
    """The expression ``_alive_.running``."""
    return ast.Attribute(value=load_name(ALIVE_NAME), attr=ALIVE_ATTR, ctx=ast.Load())


def alive_check(where: ast.AST) -> ast.Expr:
    """The statement ``_alive_.running``, positioned at ``where``."""
    check = ast.Expr(value=alive_read())
    copy_locations(check, where)
    return check
