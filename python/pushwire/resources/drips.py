"""Drip autoresponders (spec 4.3-4.5): ``client.drips``, blocking and awaited."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, SupportsIndex, Union

import pushwire._core as _core
from pushwire._args import DateLike, IdLike
from pushwire._core import Page
from pushwire._core_models import (
    Audience,
    Drip,
    DripNotification,
    NewDripNotification,
    SendTo,
    UtmParams,
)
from pushwire._response import RequestOptions

from ._resource import _Async, _RawAsync, _RawSync, _Sync, awaitable, paged, raw, raw_awaitable

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Drips(_Sync):
    """Drip autoresponders (spec 4.3-4.5)."""

    def create(
        self,
        campaign_name: str,
        notifications: Sequence[Union[NewDripNotification, DripNotification, Mapping[str, Any]]],
        *,
        send_to: Union[SendTo, Audience, Mapping[str, Any], None] = None,
        utm_params: Union[UtmParams, Mapping[str, Any], None] = None,
        check_segments: bool = True,
        idempotency_key: Optional[str] = None,
        **options: Unpack[RequestOptions],
    ) -> int:
        """Creates a drip; its ``drip_id``. A drip read back can be copied as it is:
        ``create(name, drip.notifications, send_to=drip.audience, utm_params=drip.utm_params)``
        (the notifications' ids, order and analytics are left out; an audience becomes the
        ``send_to`` that selects the same subscribers). Retried only when the service refused it
        unprocessed (429, or 503 with ``Retry-After``), never once it may have been received
        (it would make two). The id is 0 (with a warning) if the service accepted the drip but
        sent no usable id. A segment id in ``send_to`` that the site does not have is refused
        with a ``ValidationError`` naming it, as for ``notifications.create``
        (``check_segments=False`` sends it unchecked). ``idempotency_key``: created once per
        key, as for ``notifications.create``."""
        out: int = self._call(
            _core.drips_create(
                campaign_name,
                notifications,
                send_to=send_to,
                utm_params=utm_params,
                check_segments=check_segments,
                idempotency_key=idempotency_key,
            ),
            **options,
        )
        return out

    def get(
        self,
        drip_id: IdLike,
        *,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
        **options: Unpack[RequestOptions],
    ) -> Drip:
        """One drip with its notifications and their analytics. ``BadRequestError`` if it
        does not exist (the service answers 400)."""
        out: Drip = self._call(
            _core.drips_get(
                drip_id, analytics_start_at=analytics_start_at, analytics_end_at=analytics_end_at
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
    ) -> Page[Drip]:
        """One page of drips, newest first (``limit`` 1 to 500); :meth:`iter` walks them
        all."""
        out: Page[Drip] = self._call(
            _core.drips_list(
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
    ) -> Iterator[Drip]:
        """Every drip, newest first, fetching pages lazily (``async for`` on
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


class AsyncDrips(_Async, twin=Drips):
    create = awaitable(Drips.create)
    get = awaitable(Drips.get)
    list = awaitable(Drips.list)
    iter = paged(Drips.iter)


class DripsWithRawResponse(_RawSync, twin=Drips, skip=("iter",)):
    create = raw(Drips.create)
    get = raw(Drips.get)
    list = raw(Drips.list)


class AsyncDripsWithRawResponse(_RawAsync, twin=Drips, skip=("iter",)):
    create = raw_awaitable(Drips.create)
    get = raw_awaitable(Drips.get)
    list = raw_awaitable(Drips.list)
