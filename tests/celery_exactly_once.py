"""The Celery app of tests/test_exactly_once_celery.py: a task that sends a broadcast under an
idempotency key, acknowledged late (a worker that dies before the ack has the task
redelivered), configured from the environment the test gives its workers.

    CELERY_BROKER_URL           the test's redis-server
    IDEMPOTENCY_STORE           the store of keys (the same redis-server, another db)
    PUSHWIRE_API_KEY, PUSHWIRE_BASE_URL   the emulator
    CALL_TIMEOUT                the client's timeout, seconds
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path
from typing import Any, Optional

from celery import Celery  # type: ignore[import-untyped]

import pushwire

app = Celery("celery_exactly_once")
app.conf.update(
    broker_url=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
    result_backend=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
    task_serializer="json",
    accept_content=["json"],
    result_serializer="json",
    # Acknowledged once the task has run: a worker killed before that has it redelivered,
    # and the task runs a second time, as it does in production after a crash.
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    # Redelivered two seconds after the worker that took it died (the Redis default is an
    # hour), looked for every second.
    broker_transport_options={
        "visibility_timeout": 2,
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    },
    broker_connection_retry_on_startup=True,
)


def _settings() -> dict[str, Any]:
    return {
        "api_key": os.environ["PUSHWIRE_API_KEY"],
        "base_url": os.environ["PUSHWIRE_BASE_URL"],
        "idempotency_store": os.environ["IDEMPOTENCY_STORE"],
        "timeout": float(os.environ.get("CALL_TIMEOUT", "5")),
    }


@app.task(name="send_broadcast")  # type: ignore[untyped-decorator]
def send_broadcast(
    key: str, title: str, hold_file: Optional[str] = None, use_async: bool = False
) -> list[Any]:
    """Sends the broadcast once for ``key``; its id and the worker that ran the task. With
    ``hold_file``, the first run writes the id there after the send and then waits to be
    killed, before the task is acknowledged."""
    broadcast = {"title": title, "message": "Half price", "url": "https://shop.example/sale"}
    if use_async:

        async def create() -> int:
            async with pushwire.AsyncClient(**_settings()) as client:
                return await client.notifications.create(**broadcast, idempotency_key=key)

        notification_id = asyncio.run(create())
    else:
        with pushwire.Client(**_settings()) as client:
            notification_id = client.notifications.create(**broadcast, idempotency_key=key)
    if hold_file is not None and not os.path.exists(hold_file):
        Path(hold_file).write_text(str(notification_id))
        time.sleep(600)  # the test kills this worker here
    return [notification_id, f"{socket.gethostname()}:{os.getpid()}"]
