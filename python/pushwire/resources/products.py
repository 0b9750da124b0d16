"""Product updates (spec 4.12): ``client.products``, blocking and awaited."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union

import pushwire._core as _core
from pushwire._core_models import Product
from pushwire._response import RequestOptions

from ._resource import _Async, _RawAsync, _RawSync, _Sync, awaitable, raw, raw_awaitable

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Products(_Sync):
    """Product updates (spec 4.12)."""

    def update(
        self,
        products: Sequence[Union[Product, Mapping[str, Any]]],
        *,
        idempotency_key: Optional[str] = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Sends the latest price and availability: ``Product``s, their dicts, or the
        emulator's ``products()`` entries. Retried only when the service refused
        it unprocessed (429, or 503 with ``Retry-After``), never once it may have been
        received. ``idempotency_key``: sent once per key, as for ``notifications.create``."""
        call = _core.products_update(products, idempotency_key=idempotency_key)
        out: None = self._call(call, **options)
        return out


class AsyncProducts(_Async, twin=Products):
    update = awaitable(Products.update)


class ProductsWithRawResponse(_RawSync, twin=Products):
    update = raw(Products.update)


class AsyncProductsWithRawResponse(_RawAsync, twin=Products):
    update = raw_awaitable(Products.update)
