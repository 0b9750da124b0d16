"""The admin API over HTTP (``/_emulator/{op}``), for an emulator in another process: the one
:class:`~pushwire.testing.EmulatorProcess` started, or one :meth:`Emulator.connect` reaches."""

from __future__ import annotations

import json
import pathlib
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Optional

from pushwire._testing._data import StrPath, _with_times


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: the admin routes never send one, and a redirect's target is not
    the emulator."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# The admin client talks only to the emulator it was given: no redirect is followed and no
# proxy of the environment (HTTP_PROXY) is used, which would send it (and its token) elsewhere.
_admin_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def admin_request(
    base_url: str, token: Optional[str], op: str, body: Optional[bytes] = None
) -> bytes:
    """``POST {base_url}/_emulator/{op}`` with ``body`` (JSON), or ``GET`` without one; the
    answer's body. The emulator's ``{"error": ...}`` raises ``ValueError``, as the in-process
    emulator raises it for the same mistake."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(
        f"{base_url}/_emulator/{op}",
        data=body,
        headers=headers,
        method="POST" if body is not None else "GET",
    )
    try:
        with _admin_opener.open(req, timeout=60) as resp:
            answer: bytes = resp.read()
            return answer
    except urllib.error.HTTPError as e:
        # The emulator says what was wrong in `{"error": ...}`; HTTPError alone says 400.
        with e:
            text = e.read()
        if 300 <= e.code < 400:
            raise RuntimeError(
                f"{base_url}/_emulator/{op} answered {e.code} with a redirect to "
                f"{e.headers.get('Location')!r}, which was not followed: is this the "
                "emulator?"
            ) from None
        try:
            message = json.loads(text)["error"]
        except (ValueError, KeyError, TypeError):
            message = text.decode(errors="replace") or str(e)
        raise ValueError(message) from None


class RemoteServer:
    """An emulator already running elsewhere, in the place of the in-process server behind
    :class:`~pushwire.testing.Emulator`: the same admin operations, sent over HTTP. It never
    stops the emulator: closing the handle lets go of it and leaves it running."""

    notice: Optional[str] = None
    # Where a remote emulator keeps its state is its own setting (``--state``), not known here.
    state_file: Optional[pathlib.Path] = None

    def __init__(
        self, base_url: str, events_url: str, api_key: str, admin_token: Optional[str]
    ) -> None:
        self.base_url = base_url
        self.events_url = events_url
        self.api_key = api_key
        self._token = admin_token

    def admin(self, op: str, args: str) -> str:
        return admin_request(self.base_url, self._token, op, args.encode()).decode()

    def rows(self, op: str, args: str) -> list[dict[str, Any]]:
        """A page of ``subscribers`` or ``deliveries`` as the in-process emulator makes it:
        times as aware datetimes, a subscriber's segment ids as ``str``."""
        if op not in ("subscribers", "deliveries"):
            raise ValueError(f"{op} is not read as rows (subscribers, deliveries)")
        rows: list[dict[str, Any]] = _with_times(json.loads(self.admin(op, args)))
        if op == "subscribers":
            for row in rows:
                row["segments"] = [str(s) for s in row.get("segments") or []]
        return rows

    def save(self, path: Optional[StrPath]) -> tuple[pathlib.Path, int, float]:
        if path is not None:
            # The admin API writes only the emulator's own state file: a path from a request
            # would let any client write anywhere the emulator may.
            raise ValueError(
                "a connected emulator saves only to its own state file (started with --state): "
                "call save() without a path"
            )
        out = json.loads(self.admin("save", "{}"))
        return pathlib.Path(out["path"]), int(out["bytes"]), float(out["seconds"])

    def stop(self) -> None:
        """Nothing to stop: the emulator belongs to whoever started it."""

    def __repr__(self) -> str:
        return f"RemoteServer(base_url={self.base_url!r})"


def events_url_of(base_url: str, admin_token: Optional[str]) -> str:
    """The event-tracking interface of the emulator at ``base_url``, from the OpenAPI document
    it serves: the port it listens on, at the host ``base_url`` names (an emulator bound to
    ``0.0.0.0`` names that address, which is no place to connect to)."""
    doc = json.loads(admin_request(base_url, admin_token, "openapi.json"))
    try:
        named = doc["paths"]["/api/v1/events"]["servers"][0]["url"]
    except (KeyError, IndexError, TypeError):
        raise ValueError(
            f"{base_url}/_emulator/openapi.json names no event-tracking interface: "
            "is this a pushwire emulator?"
        ) from None
    port = urllib.parse.urlsplit(named).port
    parts = urllib.parse.urlsplit(base_url)
    host = parts.hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}:{port}" if port else named
