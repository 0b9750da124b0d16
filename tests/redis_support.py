"""A real ``redis-server`` for the tests that need one (Celery's broker, the idempotency
store): started on a free loopback port with nothing saved to disk, stopped after. The
modules that use it skip, with the reason, where ``redis-server`` or redis-py is missing
(``make test`` installs Debian's redis-server where it can: tools/system_deps.sh)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# SIGTERM to a process started here (a worker's warm shutdown), then SIGKILL if it has not
# ended within the grace given; it is waited for (no zombie left).
from pushwire._testing.process import _stop_process as stop

REDIS_SERVER = shutil.which("redis-server")
SKIP_REASON = (
    "redis-server is not on PATH: `make test` installs Debian's redis-server where it can "
    "(root and apt-get: tools/system_deps.sh); elsewhere, install Redis"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def redis_server(workdir: Path, wait: float = 60.0) -> Iterator[str]:
    """A redis-server of the caller's own; its URL (``redis://127.0.0.1:<port>``)."""
    import redis

    assert REDIS_SERVER is not None, SKIP_REASON
    port = free_port()
    server = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
        deadline = time.monotonic() + wait
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start (exit status {server.poll()})")
                time.sleep(0.05)
        client.close()
        yield f"redis://127.0.0.1:{port}"
    finally:
        stop(server, wait / 2)
