"""A mkdocs hook: the HTTP API reference page and the two OpenAPI documents, generated at
build time from ``pushwire.testing.openapi()`` (the documents the emulator serves), so the
site shows what the code enforces and nothing is fetched when it is read."""

from __future__ import annotations

import json
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

PAGE = "reference/http-api.md"
# Shown with the standalone emulator's default addresses.
BASE_URL, EVENTS_URL = "http://127.0.0.1:8900", "http://127.0.0.1:8901"
CONSTRAINTS = (
    "enum",
    "const",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "format",
)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    from pushwire.testing import openapi

    service = openapi(BASE_URL, EVENTS_URL)
    admin = openapi(BASE_URL, admin=True)
    files.append(File.generated(config, "openapi.json", content=json.dumps(service, indent=2)))
    files.append(File.generated(config, "admin-openapi.json", content=json.dumps(admin, indent=2)))
    files.append(File.generated(config, PAGE, content=page(service)))
    return files


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(k for k in kind if k != "null") + (" or null" if "null" in kind else "")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    return str(kind)


def _limits(schema: dict[str, Any]) -> str:
    shown = [f"{k}: `{json.dumps(schema[k])}`" for k in CONSTRAINTS if k in schema]
    shown += [
        f"{k[len('x-pushwire-') :]}: `{json.dumps(v)}`"
        for k, v in schema.items()
        if k.startswith("x-pushwire-") and k != "x-pushwire-limit"
    ]
    if "x-pushwire-limit" in schema:
        shown.append("from " + ", ".join(f"`{n}`" for n in schema["x-pushwire-limit"]))
    return "; ".join(shown)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fields(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    rows = ["| field | type | required | limits |", "|---|---|---|---|"]
    for name, field in schema.get("properties", {}).items():
        rows.append(
            f"| `{name}` | {_cell(_type(field))} | {'yes' if name in required else ''} "
            f"| {_cell(_limits(field))} |"
        )
    return rows


def page(doc: dict[str, Any]) -> str:
    out = [
        "# HTTP API (OpenAPI)",
        "",
        "The service's API as the OpenAPI 3.1 document pushwire generates from the code that",
        "enforces it (see [The OpenAPI document](../openapi.md)).",
        "Download it: [openapi.json](../openapi.json) (the service),",
        "[admin-openapi.json](../admin-openapi.json) (the emulator's admin API). Limits name",
        "the constant of `src/validate/limits.rs` they come from.",
        "",
        f"Main interface: `{doc['servers'][0]['url']}`; every call sends the `Api-Key` header.",
        "",
    ]
    for path, item in doc["paths"].items():
        servers = item.get("servers")
        for method, op in item.items():
            if method == "servers":
                continue
            out += [f"## {method.upper()} {path}", "", op.get("summary", ""), ""]
            if servers:
                out += [f"On the event-tracking interface, `{servers[0]['url']}`.", ""]
            params = op.get("parameters", [])
            if params:
                out += ["| parameter | in | type | required | limits |", "|---|---|---|---|---|"]
                for p in params:
                    schema = {
                        **p.get("schema", {}),
                        **{k: v for k, v in p.items() if k.startswith("x-")},
                    }
                    out.append(
                        f"| `{p['name']}` | {p['in']} | {_cell(_type(schema))} "
                        f"| {'yes' if p.get('required') else ''} | {_cell(_limits(schema))} |"
                    )
                out.append("")
            for media, content in op.get("requestBody", {}).get("content", {}).items():
                out += [f"Body, `{media}`:", ""]
                schema = content["schema"]
                if "properties" in schema:
                    out += _fields(schema)
                else:
                    out.append(_type(schema))
                out.append("")
            out += ["| status | answer |", "|---|---|"]
            fields: list[str] = []
            for status, answer in op["responses"].items():
                schema = answer.get("content", {}).get("application/json", {}).get("schema", {})
                out.append(f"| {status} | {_cell(answer['description'])}: {_cell(_type(schema))} |")
                if status == "200" and "properties" in schema:
                    fields = ["", "The 200 answer:", "", *_fields(schema)]
            out += [*fields, ""]
    out += ["## Schemas", ""]
    for name, schema in doc["components"]["schemas"].items():
        out += [f"### {name}", "", _cell(schema.get("description", "")), ""]
        out += _fields(schema) if "properties" in schema else [_type(schema)]
        out.append("")
    return "\n".join(out)
