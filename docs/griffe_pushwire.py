"""A griffe extension for the API reference (mkdocs.yml loads it; the site does not copy it).

griffe reads the package statically, with ``_core.pyi`` for the Rust classes. Two kinds of
docstring exist only at run time, and this extension takes them from the imported package:

- the docstrings of the Rust classes, their properties and methods, where the stub has none
  (a stub docstring, when there is one, wins: it is what an editor shows);
- the docstrings the package assembles when it is imported: ``Client.__doc__`` and
  ``AsyncClient.__doc__`` (a shared text of the settings), and the async methods', copied
  from their blocking twins.

The docstrings are written for Sphinx: its roles (``:class:`~pushwire.Client```) are shown
as code, and double backquotes are already Markdown's code spans.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|meth|attr|func|mod|exc|data|obj):`~?([^`]+)`")
# Where the reference reads docstrings; the rest of the package is not documented.
_MODULES = ("pushwire._client", "pushwire._bulk", "pushwire._core", "pushwire.errors")
_MODULES += ("pushwire.testing",)


def _runtime(path: str) -> Any:
    """The object at ``path`` in the imported package, or None."""
    parts = path.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            obj = inspect.getattr_static(obj, name, None)
            if obj is None:
                return None
        return obj
    return None


def _own_doc(obj: Any) -> str | None:
    """The docstring of a class, function or property: not its type's (an ``int``'s), nor
    one inherited from ``object`` or a builtin slot."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.isdatadescriptor(obj)):
        return None
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return None
    if doc.startswith(("Create and return a new object", "Return ", "Implement ", "str(")):
        return None
    return inspect.cleandoc(doc)


def _constructor(cls: griffe.Class) -> None:
    """A Rust class's ``__new__`` (in the stub) shown as its constructor, as ``__init__`` is."""
    new = cls.members.get("__new__")
    if isinstance(new, griffe.Function) and "__init__" not in cls.members:
        init = griffe.Function("__init__", parameters=new.parameters, returns=None)
        cls.set_member("__init__", init)


def _markdown(text: str) -> str:
    """A docstring written for Sphinx, as Markdown."""
    text = _ROLE.sub(lambda m: f"`{m.group(1).split('.')[-1]}`", text)
    # A reST literal block's `::` is a colon; the indented block is Markdown's code too.
    text = re.sub(r"::\n\n", ":\n\n", text)
    # "429. ..." opening a docstring is a status, not an ordered list.
    text = re.sub(r"^(\d+)\. ", r"\1\\. ", text)
    # A doctest (``>>>`` and the lines after it, to a blank line) as a code block.
    return re.sub(r"(?m)^(>>> .*(?:\n(?!\s*$).*)*)", "```pycon\n\\1\n```", text)


def _visit(obj: griffe.Object) -> None:
    if isinstance(obj, griffe.Class):
        if obj.name in ("_Sync", "_Async"):
            # The namespaces (`client.triggers`) are made by the client, never by a user.
            obj.del_member("__init__")
        _constructor(obj)
    if obj.docstring is None and not obj.name.startswith("__"):
        doc = _own_doc(_runtime(obj.path))
        if doc:
            obj.docstring = griffe.Docstring(doc, parent=obj)
    if obj.docstring is not None:
        obj.docstring.value = _markdown(obj.docstring.value)
    for member in obj.members.values():
        if not member.is_alias and isinstance(member, griffe.Object):
            _visit(member)


class RuntimeDocstrings(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != "pushwire":
            return
        for name in _MODULES:
            _visit(pkg.get_member(name.removeprefix("pushwire.")))
