"""The core's results as dataclasses to Python's own tools.

Each model of ``pushwire._core`` is a frozen Rust class (its reads stay in Rust, which is
what makes a page of 10,000 results cheap). This module gives each the protocol the
``dataclasses`` module reads, once, when ``pushwire`` is imported:

- ``__dataclass_fields__`` and ``__dataclass_params__`` (frozen, ``eq``), so that
  ``is_dataclass``, ``fields``, ``asdict``, ``astuple`` and ``replace`` work, and with them
  everything that builds on them: pandas' and polars' constructors, FastAPI's encoder,
  Flask's ``jsonify``;
- ``__annotations__`` with the fields' real types (``typing.get_type_hints`` reads them:
  polars' schema inference, pydantic);
- ``__hash__`` as a frozen dataclass has it (the fields' values as a tuple),
  ``__match_args__`` and ``__replace__`` (``copy.replace`` on 3.13+);
- ``__get_pydantic_core_schema__``, so that pydantic and FastAPI take every model (and
  ``Page[Model]``) as a field, a ``response_model``, a return annotation or a request body.
  pydantic is imported only when pydantic itself asks.

``extra``, where a model keeps the fields the spec does not list, is an ``InitVar`` to these
tools: the constructor, ``replace()``, ``__match_args__``, pydantic and ``to_dict()`` carry it,
while ``fields()``, ``asdict()``, ``astuple()`` and the hash leave it out. So a dataframe of
results has a column per field the spec lists, the same for every page: a column of
``extra`` dicts, empty on every row the service adds nothing to, would be a struct with no
field, which neither polars nor pyarrow can write to Parquet.

The fields and their types come from the Rust structs (``_core._model_fields``), where each
is written once. ``docs/design-notes.md`` says why this is the protocol and not generated
dataclasses.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import json
from dataclasses import InitVar
from typing import TYPE_CHECKING, Annotated, Any, Callable, NewType, Optional

import pushwire._core as _core

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = ["UTCDateTime", "install"]

#: A timestamp field's type: an aware ``datetime`` in UTC. A ``NewType`` of ``datetime``
#: (what type checkers and pydantic see), so that polars, which reads a plain ``datetime``
#: annotation as a column without a zone, infers the zone from the values instead.
UTCDateTime = NewType("UTCDateTime", datetime.datetime)

#: The field of the models that keep what the spec does not list.
_EXTRA = "extra"

# The names a field's annotation is written in by the core (`model::annotation`).
_GENERICS: dict[str, Callable[[list[Any]], Any]] = {
    "Optional": lambda a: Optional[a[0]],
    "list": lambda a: list.__class_getitem__(a[0]),
    "dict": lambda a: dict.__class_getitem__((a[0], a[1])),
}


def _split(args: str) -> list[str]:
    """``"str, Any"`` as ``["str", "Any"]``, a comma within brackets kept."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(args[start:i].strip())
            start = i + 1
    parts.append(args[start:].strip())
    return parts


def _resolve(hint: str, names: dict[str, Any]) -> Any:
    """The type an annotation of the core names (``Optional[list[Action]]``)."""
    if hint.endswith("]"):
        outer, inner = hint[:-1].split("[", 1)
        return _GENERICS[outer]([_resolve(a, names) for a in _split(inner)])
    return names[hint]


def _hash_of(names: tuple[str, ...]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in names))

    return __hash__


def _replace(self: Any, /, **changes: Any) -> Any:
    return dataclasses.replace(self, **changes)


def _describe(cls: type, fields: list[tuple[str, Any]]) -> None:
    """Gives ``cls`` the dataclass protocol for ``fields`` (name, type) in their order,
    ``extra`` as an init-only field (see the module's docstring)."""
    # The Field objects as the dataclasses module makes them for a frozen dataclass of the
    # same fields: their kind, name and type set as `fields()` and `asdict()` read them.
    # `extra` has a default, for `replace()` to carry it over (it passes the attribute), so
    # `make_dataclass` refuses it anywhere but last, where the core puts it.
    described = [
        (name, InitVar(tp), dataclasses.field(default=None)) if name == _EXTRA else (name, tp)
        for name, tp in fields
    ]
    twin = dataclasses.make_dataclass(cls.__name__, described, frozen=True)
    setattr(cls, "__dataclass_fields__", getattr(twin, "__dataclass_fields__"))  # noqa: B009, B010
    setattr(cls, "__dataclass_params__", getattr(twin, "__dataclass_params__"))  # noqa: B009, B010
    cls.__annotations__ = {name: tp for name, tp, *_ in described}
    setattr(cls, "__match_args__", tuple(name for name, _ in fields))  # noqa: B010
    hashed = tuple(name for name, _ in fields if name != _EXTRA)
    setattr(cls, "__hash__", _hash_of(hashed))  # noqa: B010
    setattr(cls, "__replace__", _replace)  # noqa: B010
    setattr(cls, "__get_pydantic_core_schema__", classmethod(_model_schema))  # noqa: B010


def _model_schema(cls: type, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
    """The model to pydantic: validated from an instance, from a dict of its fields (as
    ``asdict`` and this schema's dump write it) or from the service's shape (``to_dict()``,
    ``to_json()``: its unlisted fields at the top, ``Meta``'s ``perPage``), and dumped as
    the dict of its fields, nested models and datetimes dumped by their own schemas."""

    fields = dataclasses.fields(cls)  # type: ignore[arg-type,unused-ignore]
    names = tuple(f.name for f in fields)
    schemas = {f.name: handler.generate_schema(f.type) for f in fields}
    if _EXTRA in getattr(cls, "__dataclass_fields__", {}):
        # The init-only `extra` is pydantic's field as any other: dumped and read back.
        names += (_EXTRA,)
        schemas[_EXTRA] = handler.generate_schema(dict[str, Any])
    return _schema(cls, schemas, names, ref=f"{cls.__module__}.{cls.__qualname__}")


def _schema(
    cls: type, schemas: dict[str, Any], names: tuple[str, ...], ref: Optional[str] = None
) -> CoreSchema:
    """An instance of ``cls`` as itself, or built from a dict of the fields ``names`` (each
    of its schema in ``schemas``, none required: the constructor has the defaults), a dict
    of any other keys read by ``cls.from_dict``; dumped as the dict of every field."""
    from pydantic_core import core_schema as cs

    def shape(required: bool) -> CoreSchema:
        return cs.typed_dict_schema(
            {n: cs.typed_dict_field(schemas[n], required=required) for n in names},
            cls_name=cls.__name__,
            extra_behavior="forbid",
        )

    def service_shape(value: Any) -> Any:
        # A dict with keys that are no field names is the service's shape (or a mistake,
        # which from_dict names): read it, and validate its fields as the model has them.
        if isinstance(value, dict) and not value.keys() <= set(names):
            model = getattr(cls, "from_dict", cls)(value)
            return {n: getattr(model, n) for n in names}
        return value

    build = cs.no_info_before_validator_function(
        service_shape, cs.no_info_after_validator_function(lambda d: cls(**d), shape(False))
    )
    return cs.json_or_python_schema(
        json_schema=build,
        python_schema=cs.union_schema([cs.is_instance_schema(cls), build]),
        serialization=cs.plain_serializer_function_ser_schema(
            lambda m: {n: getattr(m, n) for n in names}, return_schema=shape(True)
        ),
        ref=ref,
    )


class _Items:
    """What ``Page[Model]`` holds, for pydantic: ``Page[Model]`` is ``Annotated[Page,
    _Items(Model)]`` at run time (type checkers read the stub's ``Generic``), because
    pydantic takes a subscripted dataclass apart as a dataclass, which a Rust class is not
    built as."""

    __slots__ = ("item",)

    def __init__(self, item: Any) -> None:
        self.item = item

    def __repr__(self) -> str:
        return f"items={self.item!r}"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return _page_schema(_core.Page, handler, handler.generate_schema(self.item))


def _page_of(cls: type, item: Any) -> Any:
    return Annotated[cls, _Items(item)]


def _bare_page_schema(cls: type, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
    from pydantic_core import core_schema as cs

    return _page_schema(cls, handler, cs.any_schema())


def _page_schema(cls: type, handler: GetCoreSchemaHandler, item: CoreSchema) -> CoreSchema:
    """A page to pydantic: ``data`` and the spec's ``meta`` numbers, as ``Page.to_dict``
    and ``asdict`` give them."""
    from pydantic_core import core_schema as cs

    number = cs.int_schema()
    schemas = {"data": cs.list_schema(item), **{n: number for n in _PAGE_FIELDS[1:]}}
    return _schema(cls, schemas, _PAGE_FIELDS)


_PAGE_FIELDS = ("data", "total", "page", "per_page", "last_page")


def _page_to_json(self: Any, *, indent: Optional[int] = None) -> str:
    return json.dumps(
        {
            "data": [item.to_dict() for item in self.data],
            "meta": {
                "total": self.total,
                "page": self.page,
                "perPage": self.per_page,
                "lastPage": self.last_page,
            },
        },
        indent=indent,
        ensure_ascii=False,
    )


def _page_from_dict(cls: type, data: Any) -> Any:
    """A page from ``to_dict()``'s shape, or from the service's (``data`` and ``meta``, as
    ``to_json()`` writes it); its items as they are given."""
    meta = data.get("meta")
    if isinstance(meta, dict):
        numbers = [meta.get(k, 0) for k in ("total", "page", "perPage", "lastPage")]
    else:
        numbers = [data.get(k, 0) for k in _PAGE_FIELDS[1:]]
    return cls(list(data.get("data") or ()), *numbers)


def _page_index(self: Any, value: Any, start: int = 0, stop: int = 2**63 - 1, /) -> int:
    return self.data.index(value, start, stop)  # type: ignore[no-any-return]


def _page_count(self: Any, value: Any, /) -> int:
    return self.data.count(value)  # type: ignore[no-any-return]


def install() -> None:
    """Gives every model of the core, and ``Page``, the protocols above."""
    described = _core._model_fields()
    names: dict[str, Any] = {
        "int": int,
        "float": float,
        "bool": bool,
        "str": str,
        "Any": Any,
        "UTCDateTime": UTCDateTime,
    }
    names.update((name, getattr(_core, name)) for name, _ in described)
    for name, fields in described:
        _describe(getattr(_core, name), [(f, _resolve(hint, names)) for f, hint in fields])

    page = _core.Page
    _describe(page, [("data", list[Any]), *((n, int) for n in _PAGE_FIELDS[1:])])
    # A page is unhashable (its data is a list), as the frozen dataclass it reads as would be.
    setattr(page, "__hash__", None)  # noqa: B010
    setattr(page, "__get_pydantic_core_schema__", classmethod(_bare_page_schema))  # noqa: B010
    setattr(page, "__class_getitem__", classmethod(_page_of))  # noqa: B010
    setattr(page, "to_json", _page_to_json)  # noqa: B010
    setattr(page, "from_dict", classmethod(_page_from_dict))  # noqa: B010
    # A sequence of its items (polars and pandas take one as rows), as `list` has it.
    setattr(page, "index", _page_index)  # noqa: B010
    setattr(page, "count", _page_count)  # noqa: B010
    collections.abc.Sequence.register(page)
