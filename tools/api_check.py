"""Checks that the public Python API has no breaking change against a git revision.

    PYTHONPATH=python python tools/api_check.py [REV]

It is ``griffe check`` (griffe's own breaking-change finder, with the docs' extension, reading
the package statically as the docs do), plus the resource namespaces (``client.triggers``,
...): their classes are private (``pushwire._client``), so griffe's check passes over them,
but their methods are the API. Each method of each namespace, blocking and async, must keep
its kind (async or not), its parameters (names, kinds, defaults) and its return annotation;
it may gain parameters no caller could have passed before: keyword-only ones with a default,
and a ``**`` catch-all (``**options``), both after the old ones.
Exits 1 with what changed, else 0.
"""

from __future__ import annotations

import sys

import griffe

NAMESPACES = ("Triggers", "Drips", "Segments", "Analytics", "Products", "Notifications", "Events")


def _load(rev: str | None) -> griffe.Module:
    extensions = griffe.load_extensions("docs/griffe_pushwire.py")
    if rev is None:
        return griffe.load(
            "pushwire", search_paths=["python"], extensions=extensions, allow_inspection=False
        )
    return griffe.load_git(
        "pushwire",
        ref=rev,
        search_paths=["python"],
        extensions=extensions,
        allow_inspection=False,
    )


def _shape(function: griffe.Object | griffe.Alias) -> object:
    if isinstance(function, griffe.Alias):
        function = function.final_target
    if not isinstance(function, griffe.Function):
        return function.kind.value
    # A parameter's default as written, None when it has none (required).
    parameters = [
        (p.name, p.kind.value, None if p.default is None else str(p.default))
        for p in function.parameters
    ]
    return ("async" in function.labels, parameters, str(function.returns))


def _kept(old: tuple[str, str, str | None], new: tuple[str, str, str | None]) -> bool:
    """Whether a parameter binds every call as it did: its name and kind kept, and its
    default, or a default given to a required one (every call passed it, and still does)."""
    return old[:2] == new[:2] and (old[2] == new[2] or old[2] is None)


def _compatible(before: object, after: object) -> bool:
    """Whether every call of the ``before`` shape still binds the same way to ``after``: the
    positional parameters kept in order (new ones only after them, with defaults), every
    keyword kept as it was (or, required, given a default), and each new keyword-only
    parameter with a default (anywhere among the keywords: before ``**options`` too)."""
    if before == after:
        return True
    if not (isinstance(before, tuple) and isinstance(after, tuple)):
        return False
    (was_async, old, returns), (is_async, new, now_returns) = before, after
    if was_async != is_async or returns != now_returns:
        return False
    by_position = ("positional-only", "positional or keyword", "variadic positional")
    old_positional = [p for p in old if p[1] in by_position]
    new_positional = [p for p in new if p[1] in by_position]
    if len(new_positional) < len(old_positional) or not all(
        _kept(o, n) for o, n in zip(old_positional, new_positional)
    ):
        return False
    if any(default is None for _, _, default in new_positional[len(old_positional) :]):
        return False
    kept = {p[0]: p for p in new}
    if any(p[0] not in kept or not _kept(p, kept[p[0]]) for p in old):
        return False
    old_names = {name for name, _, _ in old}
    return all(
        kind == "variadic keyword" or (kind == "keyword-only" and default is not None)
        for name, kind, default in new
        if name not in old_names and kind not in by_position
    )


def main() -> int:
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    old, new = _load(rev), _load(None)
    problems = [b.explain() for b in griffe.find_breaking_changes(old, new)]
    for name in NAMESPACES:
        for cls_name in (name, f"Async{name}"):
            before, after = old[f"_client.{cls_name}"], new[f"_client.{cls_name}"]
            for member, function in before.members.items():
                if member.startswith("_"):
                    continue
                now = after.members.get(member)
                if now is None:
                    problems.append(f"{cls_name}.{member}: removed")
                elif not _compatible(_shape(function), _shape(now)):
                    problems.append(f"{cls_name}.{member}: {_shape(function)} is now {_shape(now)}")
    for problem in problems:
        print(problem)
    print(f"{len(problems)} breaking change(s) against {rev}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
