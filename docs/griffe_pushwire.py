"""A griffe extension for the API reference (mkdocs.yml loads it; the site does not copy it).

griffe reads the package statically, with ``_core.pyi`` and ``_core_models.pyi`` for the Rust
classes. Two kinds of docstring exist only at run time, and this extension takes them from the
imported package:

- the docstrings of the Rust classes, their properties and methods, where the stub has none
  (a stub docstring, when there is one, wins: it is what an editor shows);
- the docstrings the package assembles when it is imported: ``Client.__doc__`` and
  ``AsyncClient.__doc__`` (a shared text of the settings), and the async namespaces'
  (``class AsyncTriggers(_Async, twin=Triggers)`` has ``Triggers.__doc__``).

The async namespaces' methods are made from the blocking ones at import time
(``create = awaitable(Notifications.create)``, ``iter = paged(Triggers.iter)``, see
``pushwire/resources/_resource.py``); statically they are attributes, and this extension
turns them into what they are: async functions with the blocking method's parameters and
docstring (``iter`` a plain one returning an ``AsyncIterator``).

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
_MODULES = ("pushwire._client", "pushwire._base", "pushwire.resources", "pushwire._bulk")
_MODULES += ("pushwire._core", "pushwire._core_models", "pushwire.errors", "pushwire.testing")
_MODULES += ("pushwire._testing",)
# `name = awaitable(Blocking.name)` or `paged(...)` in an async namespace's class body.
_DERIVED = re.compile(r"^(awaitable|paged)\((\w+)\.(\w+)\)$")


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
        if obj.name == "_Resource":
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


def _inherit_model(core: griffe.Module) -> None:
    """The stub's ``_Model`` methods (``to_dict``, ``from_dict``, ...) as each model's own, as
    they are at run time, where each has its own docstring."""
    model = core.members.get("_Model")
    if not isinstance(model, griffe.Class):
        return
    for cls in core.classes.values():
        if "_Model" not in (str(base) for base in cls.bases):
            continue
        for name, member in model.members.items():
            if name in cls.members or not isinstance(member, griffe.Function):
                continue
            function = griffe.Function(
                name,
                lineno=member.lineno,
                endlineno=member.endlineno,
                parameters=member.parameters,
                returns=member.returns,
            )
            function.labels |= member.labels
            cls.set_member(name, function)


def _derive(module: griffe.Module) -> None:
    """Each async namespace's ``awaitable``/``paged`` attributes as the functions they are."""
    for cls in module.classes.values():
        for attr in list(cls.attributes.values()):
            match = _DERIVED.match(str(attr.value))
            blocking = module.members.get(match.group(2)) if match else None
            if not match or not isinstance(blocking, griffe.Class):
                continue
            twin = blocking.members.get(match.group(3))
            if not isinstance(twin, griffe.Function):
                continue
            returns = twin.returns
            if match.group(1) == "paged":
                returns = str(returns).replace("Iterator[", "AsyncIterator[", 1)
            parameters = griffe.Parameters(
                *(
                    griffe.Parameter(
                        p.name, annotation=p.annotation, kind=p.kind, default=p.default
                    )
                    for p in twin.parameters
                )
            )
            function = griffe.Function(
                attr.name,
                lineno=attr.lineno,
                endlineno=attr.endlineno,
                parameters=parameters,
                returns=returns,
            )
            if match.group(1) == "awaitable":
                function.labels.add("async")
            if twin.docstring is not None:
                function.docstring = griffe.Docstring(twin.docstring.value, parent=function)
            cls.set_member(attr.name, function)


class RuntimeDocstrings(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != "pushwire":
            return
        for stub in ("_core", "_core_models"):  # an older tree has its models in _core
            core = pkg.members.get(stub)
            if isinstance(core, griffe.Module):
                _inherit_model(core)
        resources = pkg.members.get("resources")
        for module in resources.modules.values() if isinstance(resources, griffe.Module) else ():
            _derive(module)
        for name in _MODULES:
            module = pkg.members.get(name.removeprefix("pushwire."))
            if isinstance(module, griffe.Module):  # an older tree (griffe check) lacks some
                _visit(module)
