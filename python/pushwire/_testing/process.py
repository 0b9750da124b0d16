"""The emulator in a process of its own (:class:`EmulatorProcess`), driven over HTTP, and
how a forked child lets go of the emulators its parent started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterable
from typing import Any, Optional

from pushwire._testing._clients import _Clients
from pushwire._testing._data import (
    _NOT_IN_THIS_PROCESS,
    DEFAULT_RETENTION,
    StrPath,
    _host_names,
    _jsonable,
    _retention,
)
from pushwire._testing._http import admin_request

# The EmulatorProcesses this process started, so that a forked child can let go of them.
_started: weakref.WeakSet[EmulatorProcess] = weakref.WeakSet()


def _let_go_in_child() -> None:
    """In a forked child: the emulators belong to the parent. The child closes its copy of
    each stdin pipe, so an emulator still stops when the parent ends, however long the child
    lives; and it never stops one itself (its ``close()`` and finalizers do nothing)."""
    for emu in list(_started):
        emu._stop.detach()
        stdin = emu.process.stdin
        if stdin is not None:
            # Nothing is ever written to the pipe, so closing the file flushes nothing.
            stdin.close()
    _started.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_let_go_in_child)


def _stop_process(process: subprocess.Popen[Any], grace: float = 10) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()


class EmulatorProcess(_Clients):
    """The emulator in a process of its own (``python -m pushwire.emulator``), for load tests
    and benchmarks where client and emulator must not share an interpreter. It is driven
    through the ``/_emulator/{op}`` admin routes: ``admin("add_subscriber", country="US")``
    does what ``Emulator.add_subscriber(country="US")`` does."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        record_requests: bool = True,
        retention: int = DEFAULT_RETENTION,
        startup_timeout: float = 20.0,
        allowed_hosts: Iterable[str] = (),
        admin_token: Optional[str] = None,
        state: Optional[StrPath] = None,
        save_every: Optional[float] = None,
    ) -> None:
        """``api_key``, ``allowed_hosts``, ``admin_token``, ``state`` and ``save_every`` as
        for :class:`Emulator`; :meth:`admin` sends the token, and :meth:`close` stops the
        process cleanly, so that it saves its state."""
        self._admin_token = admin_token
        cmd = [sys.executable, "-m", "pushwire.emulator", "--port", "0"]
        if api_key is not None:
            cmd += ["--api-key", api_key]
        if state is not None:
            cmd += ["--state", os.fspath(state)]
        if save_every is not None:
            cmd += ["--save-every", repr(float(save_every))]
        cmd += ["--exit-with-parent", "--retention", str(_retention(retention))]
        if not record_requests:
            cmd.append("--no-request-log")
        for name in _host_names(allowed_hosts):
            cmd += ["--allowed-host", name]
        if admin_token is not None:
            cmd += ["--admin-token", admin_token]
        # The child stops when its stdin pipe closes: it cannot outlive this process, even
        # one killed before `close()`. The finalizer stops it when this object is collected
        # or the interpreter exits without `close()`.
        self.process = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        # With a state file, the stop saves it: a million subscribers take seconds.
        self._state = state
        self._stop = weakref.finalize(
            self, _stop_process, self.process, 10 if state is None else 120
        )
        _started.add(self)
        urls: dict[str, str] = {}
        stdout = self.process.stdout
        assert stdout is not None
        read = threading.Event()

        def read_urls() -> None:
            # In a thread: a pipe's readline cannot be given a deadline.
            try:
                while len(urls) < 3:
                    line = stdout.readline()
                    if not line:
                        return
                    name, _, value = line.strip().partition("=")
                    if name in ("PUSHWIRE_BASE_URL", "PUSHWIRE_EVENTS_URL", "PUSHWIRE_API_KEY"):
                        urls[name] = value
                    elif name == "PUSHWIRE_REFUSED":
                        urls[name] = value
                        return
            finally:
                read.set()

        threading.Thread(target=read_urls, name="pushwire-emulator-start", daemon=True).start()
        if not read.wait(startup_timeout):
            self._stop()
            raise RuntimeError(
                f"the emulator did not start within startup_timeout={startup_timeout} s"
            )
        if "PUSHWIRE_REFUSED" in urls:
            # The in-process emulator's refusal of the same setting, as it would raise it.
            self.process.wait(startup_timeout)
            raise ValueError(urls["PUSHWIRE_REFUSED"])
        if len(urls) < 3:
            self.process.wait(startup_timeout)
            raise RuntimeError(f"the emulator exited with {self.process.returncode}")
        self.base_url = urls["PUSHWIRE_BASE_URL"]
        self.events_url = urls["PUSHWIRE_EVENTS_URL"]
        self.api_key = urls["PUSHWIRE_API_KEY"]

    @property
    def pid(self) -> int:
        return self.process.pid

    def follow_python_clock(self, follow: bool = True) -> None:
        """Refused (``RuntimeError``): this emulator runs in another process, whose clock
        time-machine and freezegun in this one do not move. Move it with
        ``admin("travel_to", time=...)`` or ``admin("advance", seconds=...)``, or use an
        in-process :class:`Emulator`, which can follow this process's clock."""
        raise RuntimeError(_NOT_IN_THIS_PROCESS)

    def admin(self, op: str, **args: Any) -> Any:
        """Runs an admin operation over HTTP; its JSON answer."""
        body = json.dumps({k: v for k, v in args.items() if v is not None}, default=_jsonable)
        return json.loads(admin_request(self.base_url, self._admin_token, op, body.encode()))

    def save(self) -> dict[str, Any]:
        """Saves the whole state to the process's ``state`` file now (``POST
        /_emulator/save``): its ``path``, size in ``bytes`` and the ``seconds`` it took."""
        answer: dict[str, Any] = self.admin("save")
        return answer

    def close(self) -> None:
        """Stops the process (SIGTERM), which saves its state to its ``state`` file if it
        has one: an ``OSError`` if it could not (it says why on its standard error)."""
        self._stop()
        if self._state is not None and self.process.returncode != 0:
            raise OSError(
                f"the emulator exited with {self.process.returncode} and did not save its state "
                f"to {os.fspath(self._state)!r}"
            )

    def __repr__(self) -> str:
        return f"EmulatorProcess(base_url={self.base_url!r}, pid={self.pid})"
