"""Product updates (spec 4.12): ``client.products``, blocking and awaited."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Union

from pushwire._core import Product
from pushwire.resources._resource import _Async, _Sync, awaitable


class Products(_Sync):
    """Product updates (spec 4.12)."""

    def update(self, products: Sequence[Union[Product, Mapping[str, Any]]]) -> None:
        """Sends the latest price and availability: ``Product``s, their dicts, or the
        emulator's ``products()`` entries. Retried only when the service refused
        it unprocessed (429, or 503 with ``Retry-After``), never once it may have been
        received."""
        out: None = self._call("products.update", products)
        return out


class AsyncProducts(_Async, twin=Products):
    update = awaitable(Products.update)
