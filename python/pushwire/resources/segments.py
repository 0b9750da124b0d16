"""Segments and their members (spec 4.6-4.9): ``client.segments``, blocking and awaited."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Optional, SupportsIndex, Union

import pushwire._core as _core
from pushwire._args import IdLike, _items
from pushwire._bulk import BulkResult, Progress
from pushwire._core_models import Segment
from pushwire._html import ResultList
from pushwire._response import RequestOptions

from ._resource import _Async, _RawAsync, _RawSync, _Sync, awaitable, raw, raw_awaitable

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Segments(_Sync):
    """Segments and their members (spec 4.6-4.9)."""

    def list(
        self,
        *,
        segment_id: Optional[IdLike] = None,
        limit: Optional[SupportsIndex] = None,
        offset: Optional[SupportsIndex] = None,
        segment_type: Optional[str] = None,
        **options: Unpack[RequestOptions],
    ) -> ResultList[Segment]:
        """The site's segments (one with ``segment_id``), ``offset``/``limit`` to page;
        ``segment_type="all"`` includes those built on geography, device and browser. A
        plain list (with ``to_json()``), which Jupyter shows as a table."""
        call = _core.segments_list(
            segment_id=segment_id, limit=limit, offset=offset, segment_type=segment_type
        )
        return self._then(ResultList, call, **options)

    def delete(self, segment_id: IdLike, **options: Unpack[RequestOptions]) -> str:
        """Deletes a segment; the service's message."""
        out: str = self._call(_core.segments_delete(segment_id), **options)
        return out

    def add_subscribers(
        self,
        segment_id: IdLike,
        subscriber_hashes: Iterable[str],
        **options: Unpack[RequestOptions],
    ) -> str:
        """Adds up to 500 subscribers by hash; the service's message."""
        call = _core.segments_add_subscribers(segment_id, subscriber_hashes)
        out: str = self._call(call, **options)
        return out

    def add_profiles(
        self, segment_name: str, profile_ids: Iterable[IdLike], **options: Unpack[RequestOptions]
    ) -> None:
        """Adds the subscribers with these profile ids to the segment named; idempotent."""
        out: None = self._call(_core.segments_add_profiles(segment_name, profile_ids), **options)
        return out

    def remove_profiles(
        self, segment_name: str, profile_ids: Iterable[IdLike], **options: Unpack[RequestOptions]
    ) -> None:
        """Removes the subscribers with these profile ids from the segment named."""
        call = _core.segments_remove_profiles(segment_name, profile_ids)
        out: None = self._call(call, **options)
        return out

    def add_subscribers_bulk(
        self,
        segment_id: IdLike,
        hashes: Iterable[str],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
        checkpoint: Union[str, os.PathLike[str], None] = None,
        **options: Unpack[RequestOptions],
    ) -> BulkResult:
        """Adds any number of subscribers: chunks of 500 (the spec's limit), ``concurrency``
        in flight, each retried on its own. ``progress`` is a ``callable(done, total)`` or
        ``True`` for a progress bar: tqdm's when it is installed (a widget in Jupyter), else a
        line on stderr. Every chunk's outcome is in the result.

        ``checkpoint`` (a file's path) makes the call resumable: each chunk is recorded there
        as sent, then as stored; run again with the same checkpoint and the same input, the
        call sends only the chunks not stored (``ChunkResult.prior`` says which were, and
        which were in flight when the earlier run stopped). A checkpoint made for another
        input is refused (``ValidationError``)."""
        items = _items("hashes", hashes)
        return self._bulk(
            lambda report: _core.segments_add_subscribers_bulk(
                segment_id, items, concurrency=concurrency, checkpoint=checkpoint, progress=report
            ),
            "add_subscribers",
            progress,
            items,
            **options,
        )

    def add_profiles_bulk(
        self,
        segment_name: str,
        profile_ids: Iterable[IdLike],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
        checkpoint: Union[str, os.PathLike[str], None] = None,
        **options: Unpack[RequestOptions],
    ) -> BulkResult:
        """:meth:`add_profiles` for any number of profile ids, in chunks of 500
        (``checkpoint`` as for :meth:`add_subscribers_bulk`)."""
        items = _items("profile_ids", profile_ids)
        return self._bulk(
            lambda report: _core.segments_add_profiles_bulk(
                segment_name, items, concurrency=concurrency, checkpoint=checkpoint, progress=report
            ),
            "add_profiles",
            progress,
            items,
            **options,
        )

    def remove_profiles_bulk(
        self,
        segment_name: str,
        profile_ids: Iterable[IdLike],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
        checkpoint: Union[str, os.PathLike[str], None] = None,
        **options: Unpack[RequestOptions],
    ) -> BulkResult:
        """:meth:`remove_profiles` for any number of profile ids, in chunks of 500
        (``checkpoint`` as for :meth:`add_subscribers_bulk`)."""
        items = _items("profile_ids", profile_ids)
        return self._bulk(
            lambda report: _core.segments_remove_profiles_bulk(
                segment_name, items, concurrency=concurrency, checkpoint=checkpoint, progress=report
            ),
            "remove_profiles",
            progress,
            items,
            **options,
        )


class AsyncSegments(_Async, twin=Segments):
    list = awaitable(Segments.list)
    delete = awaitable(Segments.delete)
    add_subscribers = awaitable(Segments.add_subscribers)
    add_profiles = awaitable(Segments.add_profiles)
    remove_profiles = awaitable(Segments.remove_profiles)
    add_subscribers_bulk = awaitable(Segments.add_subscribers_bulk)
    add_profiles_bulk = awaitable(Segments.add_profiles_bulk)
    remove_profiles_bulk = awaitable(Segments.remove_profiles_bulk)


class SegmentsWithRawResponse(
    _RawSync,
    twin=Segments,
    skip=("add_subscribers_bulk", "add_profiles_bulk", "remove_profiles_bulk"),
):
    list = raw(Segments.list)
    delete = raw(Segments.delete)
    add_subscribers = raw(Segments.add_subscribers)
    add_profiles = raw(Segments.add_profiles)
    remove_profiles = raw(Segments.remove_profiles)


class AsyncSegmentsWithRawResponse(
    _RawAsync,
    twin=Segments,
    skip=("add_subscribers_bulk", "add_profiles_bulk", "remove_profiles_bulk"),
):
    list = raw_awaitable(Segments.list)
    delete = raw_awaitable(Segments.delete)
    add_subscribers = raw_awaitable(Segments.add_subscribers)
    add_profiles = raw_awaitable(Segments.add_profiles)
    remove_profiles = raw_awaitable(Segments.remove_profiles)
