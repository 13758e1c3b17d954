"""Discovery mode for large catalogs: names and summaries up front, full stubs on demand.

With hundreds of tools, inlining every stub in the ``run_code`` description defeats the
point of code mode. :class:`DiscoveryRunCodeTool` lists each tool as one line (its call
signature without types, and its summary) and adds two ordinary tools to the namespace:

- ``search_tools(query, limit=5)``: the full stubs of the best matches (BM25 over names,
  descriptions and parameter names, with the ``bm25s`` library, imported on first use);
- ``help(name)``: the full stub of one tool.

Both are plain :class:`~ptcbox.DirectProjection` tools; the sandbox is unchanged (the
same design as Anthropic's tool search and Cloudflare's ``search`` + ``execute`` pair).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ptcbox.agent_glue import RunCodeTool
from ptcbox.projections import DirectProjection, ToolProjection
from ptcbox.projections._stubs import render_stubs

__all__ = ["DiscoveryRunCodeTool", "ToolIndex", "catalog_lines"]

_DISCOVERY_NOTE = (
    "Only the names and summaries of the tools are listed below. Before calling a tool, "
    "get its exact parameters and return shape: print(search_tools('what you need')) "
    "prints the full Python stubs of the best matches, print(help('tool_name')) the stub "
    "of one tool. Then call the tools directly."
)
_SEARCH_DOC = """Find tools by what they do; returns their full Python stubs.

Args:
    query: Words describing what you need, e.g. "stock level of an item".
    limit: At most this many tools (1 to 20).

Returns:
    The stubs of the best matching tools, best first, as Python source text.
"""
_HELP_DOC = """The full Python stub of one tool (parameters, return shape, docs).

Args:
    name: The tool's name as a string, e.g. "get_stock".

Returns:
    The stub as Python source text.
"""
_RESERVED = ("search_tools", "help")


class ToolIndex:
    """A BM25 index over a namespace of tools.

    Args:
        namespace: Tool name to projection (the tools that can be found).
    """

    def __init__(self, namespace: Mapping[str, ToolProjection]) -> None:
        self._namespace = dict(namespace)
        self._names = sorted(self._namespace)
        self._retriever: Any = None

    def stub(self, name: str) -> str:
        """The full stub of one tool (with the classes it uses)."""
        return render_stubs({name: self._namespace[name]})

    def search(self, query: str, limit: int = 5) -> list[str]:
        """Names of the tools that best match ``query``, best first (empty when none do)."""
        if not self._names or not query.strip():
            return []
        import bm25s  # noqa: PLC0415 - optional (the mcp extra), loaded on first search

        if self._retriever is None:
            corpus = [_words(name, self._namespace[name]) for name in self._names]
            retriever = bm25s.BM25()
            retriever.index(
                bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
            )
            self._retriever = retriever
        tokens = bm25s.tokenize([_split(query)], stopwords="en", show_progress=False)
        k = min(limit, len(self._names))
        found, scores = self._retriever.retrieve(tokens, k=k, show_progress=False)
        return [self._names[int(i)] for i, s in zip(found[0], scores[0], strict=True) if s > 0]


def catalog_lines(namespace: Mapping[str, ToolProjection]) -> str:
    """One line per tool: ``name(param, param=...)  # summary``, sorted by name."""
    lines = []
    for name in sorted(namespace):
        projection = namespace[name]
        signature = getattr(projection, "signature", None)
        params = []
        if signature is not None:
            for param in signature.parameters.values():
                if param.kind is param.VAR_KEYWORD:
                    params.append(f"**{param.name}")
                elif param.kind is param.VAR_POSITIONAL:
                    params.append(f"*{param.name}")
                else:
                    optional = param.default is not param.empty
                    params.append(f"{param.name}=..." if optional else param.name)
        summary = _summary(projection.doc)
        lines.append(f"{name}({', '.join(params)})" + (f"  # {summary}" if summary else ""))
    return "\n".join(lines)


class DiscoveryRunCodeTool(RunCodeTool):
    """:class:`~ptcbox.RunCodeTool` whose description lists names and summaries only.

    Takes the same arguments as ``RunCodeTool``. The namespace gains ``search_tools``
    and ``help`` (see the module docstring), so a catalog of hundreds of tools costs a
    line each in the description, and the code pulls the stubs it needs.

    Raises:
        ValueError: If a tool is already named ``search_tools`` or ``help``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._index: ToolIndex | None = None
        self._index_key: tuple[str, ...] = ()
        existing = super().namespace()
        clash = [name for name in _RESERVED if name in existing]
        if clash:
            raise ValueError(
                f"discovery mode adds the tools search_tools and help; rename your {clash[0]!r}"
            )

    @property
    def description(self) -> str:
        """The intro, how to discover tools, and one line per tool."""
        full = super().description
        intro = full.split("\n\n```python", 1)[0]
        catalog = catalog_lines(super().namespace())
        return f"{intro}\n\n{_DISCOVERY_NOTE}\n\n```\n{catalog}\n```"

    def index(self) -> ToolIndex:
        """The search index over the current tools (rebuilt when they change)."""
        tools = super().namespace()
        key = tuple(sorted(tools))
        if self._index is None or key != self._index_key:
            self._index, self._index_key = ToolIndex(tools), key
        return self._index

    def namespace(self, parent: Any = None) -> dict[str, ToolProjection]:
        """The tools, plus ``search_tools`` and ``help``."""
        tools = super().namespace(parent)
        names = set(tools)

        def search_tools(query: str, limit: int = 5) -> str:
            if not isinstance(query, str):
                raise TypeError("search_tools(query): query must be a string")
            if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 20:
                raise ValueError("search_tools(limit=...): limit must be an int from 1 to 20")
            found = self.index().search(query, limit)
            if not found:
                return f"# no tool matches {query!r}; the tools are:\n" + ", ".join(sorted(names))
            return render_stubs({name: tools[name] for name in found})

        def help(name: str) -> str:  # the name models reach for
            if not isinstance(name, str) or (name.startswith("<") and name.endswith(">")):
                raise TypeError(
                    "help() takes the tool's name as a string (tools cannot be passed to "
                    f"tools): help('{min(names, default='tool_name')}')"
                )
            key = name.strip().removesuffix("()")
            if key not in names:
                close = self.index().search(key, 3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise ValueError(f"no tool named {name!r}{hint} Try search_tools('...').")
            return self.index().stub(key)

        tools["search_tools"] = DirectProjection("search_tools", search_tools, _SEARCH_DOC)
        tools["help"] = DirectProjection("help", help, _HELP_DOC)
        return tools


def _summary(doc: str | None) -> str:
    if not doc:
        return ""
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(first.split())[:160]


def _split(text: str) -> str:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return re.sub(r"[_\-./]+", " ", text)


def _words(name: str, projection: ToolProjection) -> str:
    signature = getattr(projection, "signature", None)
    params = " ".join(signature.parameters) if signature is not None else ""
    return _split(f"{name} {name} {projection.doc or ''} {params}")
