"""``pushwire.Headers``: an answer's headers, as errors (and raw answers) carry them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Union

HeaderItems = Union[Mapping[str, str], Iterable[Iterable[str]]]


class Headers(Mapping[str, str]):
    """An answer's headers, read-only. Names compare case-insensitively. A name the answer
    sent several times (``Set-Cookie``) keeps every value: ``get_list`` gives them all, and
    ``headers[name]`` joins them with ``", "``, as HTTP allows combining. ``multi_items()``
    is every (name, value) pair in the order received.

    It pickles, and ``Headers(h.multi_items())`` rebuilds it (as an error's ``args`` do)."""

    __slots__ = ("_items",)
    _items: tuple[tuple[str, str], ...]

    def __init__(self, items: HeaderItems = ()) -> None:
        if isinstance(items, Headers):
            pairs: Iterable[Iterable[str]] = items._items
        elif isinstance(items, Mapping):
            pairs = items.items()
        else:
            pairs = items
        found: list[tuple[str, str]] = []
        for pair in pairs:
            name, value = pair
            found.append((str(name), str(value)))
        self._items = tuple(found)

    def get_list(self, name: str) -> list[str]:
        """Every value of ``name``, in the order received (empty when it was not sent)."""
        key = name.lower()
        return [v for n, v in self._items if n.lower() == key]

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self._items)

    def __getitem__(self, name: str) -> str:
        values = self.get_list(name) if isinstance(name, str) else []
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get_list(name))

    def __iter__(self) -> Iterator[str]:
        """Each name once, lower-cased, in the order first received."""
        return iter(dict.fromkeys(n.lower() for n, _ in self._items))

    def __len__(self) -> int:
        return len({n.lower() for n, _ in self._items})

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Headers):
            return [(n.lower(), v) for n, v in self._items] == [
                (n.lower(), v) for n, v in other._items
            ]
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Headers({list(self._items)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Headers, (list(self._items),))
