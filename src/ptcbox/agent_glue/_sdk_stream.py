"""The reply of one SDK request as a :class:`~ptcbox.agent_glue.ModelStream`, for every
provider (OpenAI chat, Responses, Anthropic).

:class:`SdkStream` holds what the three share: the whole (non-streaming) reply or the
events of a stream turned into :class:`StreamedPart` items, the SDK's API errors and
anything else that breaks the stream (a cut connection, a malformed event) turned into
:class:`ChatProviderError`, a stream that ends before its API's final event reported as
cut, and closing. A provider's subclass says how one event or one whole reply becomes
parts (``_event``, ``_whole``), which exception type is its SDK's API error, and when
its stream is complete.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

from ptcbox.agent_glue._messages import Usage
from ptcbox.agent_glue._provider import ChatProviderError, StreamedPart, broken_stream

__all__ = ["SdkStream", "translate_api_error"]


def translate_api_error(exc: Any, *, streaming: bool = False) -> ChatProviderError:
    """An SDK's ``APIError`` as a :class:`ChatProviderError` (HTTP status kept, >= 400).

    Args:
        exc: The SDK's exception (it has ``message`` and maybe ``status_code``).
        streaming: Whether it broke a stream being read (the message says so).
    """
    status = getattr(exc, "status_code", None)
    where = "the response stream broke: " if streaming else ""
    return ChatProviderError(
        f"{where}{type(exc).__name__}: {exc.message}",
        status_code=status if isinstance(status, int) and status >= 400 else None,
    )


class SdkStream:
    """Parts of one reply of an SDK, streamed or whole.

    Args:
        response: What the SDK returned: an async iterable of events when
            ``streaming``, else the whole reply.
        streaming: Whether ``response`` is a stream.
    """

    cut_message: ClassVar[str] = "the response stream ended early: the connection was cut"
    """The error when the stream ends before its final event."""

    def __init__(self, response: Any, *, streaming: bool) -> None:
        self._response = response
        self._streaming = streaming
        self._id: str | None = None
        self._finish_reason: str | None = None
        self._usage: Usage | None = None

    @property
    def id(self) -> str | None:
        """The reply's id, once seen."""
        return self._id

    @property
    def finish_reason(self) -> str | None:
        """Why the model stopped, once known."""
        return self._finish_reason

    @property
    def usage(self) -> Usage | None:
        """Token usage, once reported."""
        return self._usage

    async def __aiter__(self) -> AsyncIterator[StreamedPart]:
        if not self._streaming:
            for part in self._whole(self._response):
                yield part
            return
        api_error = self._api_error()
        try:
            async for event in self._response:
                for part in self._event(event):
                    yield part
        except ChatProviderError:
            raise
        except api_error as exc:
            raise translate_api_error(exc, streaming=True) from exc
        except Exception as exc:  # malformed event, cut connection: the stream broke
            raise broken_stream(exc) from exc
        if not self._complete():
            raise ChatProviderError(self.cut_message)

    async def aclose(self) -> None:
        """Close the stream (the connection goes back to the pool)."""
        close = getattr(self._response, "close", None)
        if self._streaming and close is not None:
            await close()

    # -- what each provider says ---------------------------------------------------------

    def _api_error(self) -> type[Exception]:
        """The SDK's API error class (imported by the provider already)."""
        raise NotImplementedError

    def _whole(self, reply: Any) -> list[StreamedPart]:
        """The parts of a whole reply; records its id, finish reason and usage."""
        raise NotImplementedError

    def _event(self, event: Any) -> list[StreamedPart]:
        """The parts of one stream event (often none); records what it reports."""
        raise NotImplementedError

    def _complete(self) -> bool:
        """Whether the stream reached its final event (default: a finish reason came)."""
        return self._finish_reason is not None
