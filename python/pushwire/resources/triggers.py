"""Triggered campaigns (spec 4.1, 4.2): ``client.triggers``, blocking and awaited."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Optional, SupportsIndex

import pushwire._core as _core
from pushwire._args import DateLike, IdLike
from pushwire._core import Page
from pushwire._core_models import TriggeredCampaign
from pushwire._response import RequestOptions

from ._resource import _Async, _RawAsync, _RawSync, _Sync, awaitable, paged, raw, raw_awaitable

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Triggers(_Sync):
    """Triggered campaigns (spec 4.1, 4.2)."""

    def get(
        self,
        trigger_id: IdLike,
        *,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
        **options: Unpack[RequestOptions],
    ) -> TriggeredCampaign:
        """One campaign with its notifications, and their analytics over the given dates
        (the service's default range without them). ``BadRequestError`` if it does not
        exist (the service answers 400)."""
        out: TriggeredCampaign = self._call(
            _core.triggers_get(
                trigger_id,
                analytics_start_at=analytics_start_at,
                analytics_end_at=analytics_end_at,
            ),
            **options,
        )
        return out

    def list(
        self,
        *,
        page: SupportsIndex = 1,
        limit: SupportsIndex = 10,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
        **options: Unpack[RequestOptions],
    ) -> Page[TriggeredCampaign]:
        """One page of campaigns, newest first (``limit`` 1 to 500), with ``total`` and
        ``last_page``; :meth:`iter` walks them all."""
        out: Page[TriggeredCampaign] = self._call(
            _core.triggers_list(
                page=page,
                limit=limit,
                analytics_start_at=analytics_start_at,
                analytics_end_at=analytics_end_at,
            ),
            **options,
        )
        return out

    def iter(
        self,
        *,
        limit: SupportsIndex = 500,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
        **options: Unpack[RequestOptions],
    ) -> Iterator[TriggeredCampaign]:
        """Every campaign, newest first, fetching pages lazily (``async for`` on
        ``AsyncClient``)."""
        return self._pages(
            lambda p: self.list(
                page=p,
                limit=limit,
                analytics_start_at=analytics_start_at,
                analytics_end_at=analytics_end_at,
                **options,
            )
        )


class AsyncTriggers(_Async, twin=Triggers):
    get = awaitable(Triggers.get)
    list = awaitable(Triggers.list)
    iter = paged(Triggers.iter)


class TriggersWithRawResponse(_RawSync, twin=Triggers, skip=("iter",)):
    get = raw(Triggers.get)
    list = raw(Triggers.list)


class AsyncTriggersWithRawResponse(_RawAsync, twin=Triggers, skip=("iter",)):
    get = raw_awaitable(Triggers.get)
    list = raw_awaitable(Triggers.list)
