"""``pushwire-emulator`` (or ``python -m pushwire.emulator``): serve the emulator until
interrupted. It prints the URLs and the key it serves, one ``NAME=value`` a line, and stops
cleanly on SIGINT or SIGTERM. The Rust binary of the same name (``cargo install --path .
--bin pushwire-emulator``) takes the same flags and prints the same lines, without Python."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Optional

from pushwire import __version__
from pushwire.testing import DEFAULT_RETENTION, Emulator, openapi


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pushwire-emulator",
        description="Serve a local emulator of the push notification service.",
        # As the Rust binary of the same name: a flag is spelt whole.
        allow_abbrev=False,
    )
    parser.add_argument(
        "-V", "--version", action="version", version=f"pushwire-emulator {__version__}"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=_port, default=8900, help="main interface (0: any free)")
    parser.add_argument(
        "--events-port",
        type=_port,
        default=None,
        help="event-tracking interface (default: port + 1, or any free when port is 0)",
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("PUSHWIRE_API_KEY") or None,
        help="key of the default site (default: $PUSHWIRE_API_KEY, else the state file's, "
        "else test-key)",
    )
    parser.add_argument(
        "--no-request-log",
        action="store_true",
        help="do not keep the request log (for load tests: it grows with every request)",
    )
    parser.add_argument(
        "--retention",
        type=int,
        default=DEFAULT_RETENTION,
        metavar="N",
        help="keep the most recent N requests and N events per site, the oldest pruned "
        f"first (default {DEFAULT_RETENTION}; 0 keeps all). The service's own state "
        "(subscribers, segments, campaigns, deliveries, analytics) is never pruned",
    )
    parser.add_argument(
        "--exit-with-parent",
        action="store_true",
        help="stop when standard input closes (EmulatorProcess passes a pipe, so the emulator "
        "never outlives the process that started it, even one that was killed)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests to NAME (repeatable; .example.com for it and every name "
        "under it, * for any): addresses, localhost and this machine's name are always "
        "answered",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("PUSHWIRE_ADMIN_TOKEN") or None,
        metavar="TOKEN",
        help="ask every /_emulator/ route (admin API, inspector) for TOKEN "
        "(default: $PUSHWIRE_ADMIN_TOKEN)",
    )
    parser.add_argument(
        "--state",
        default=None,
        metavar="FILE",
        help="keep the whole state in FILE across restarts: read at start (a file that is not "
        "a sound state file of this version is refused, and left as it is), written on a "
        "clean stop, on POST /_emulator/save, and periodically if asked",
    )
    parser.add_argument(
        "--save-every",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="also save every SECONDS while anything changed (with --state)",
    )
    parser.add_argument(
        "--print-openapi",
        action="store_true",
        help="print the service's OpenAPI 3.1 document, its servers at the host and ports "
        "given, and exit",
    )
    parser.add_argument(
        "--print-admin-openapi",
        action="store_true",
        help="print the admin API's OpenAPI 3.1 document and exit",
    )
    args = parser.parse_args(argv)
    events_port = args.events_port
    if events_port is None:
        events_port = args.port + 1 if args.port else 0
    if args.print_openapi or args.print_admin_openapi:
        host = f"[{args.host}]" if ":" in args.host else args.host
        doc = openapi(
            f"http://{host}:{args.port}",
            f"http://{host}:{events_port}",
            admin=args.print_admin_openapi,
        )
        _say(json.dumps(doc, indent=2))
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.exit_with_parent:
        stdin_fd = sys.stdin.fileno()

        def watch_parent() -> None:
            # Reads until the parent's end of the pipe closes: on its exit, however it ends.
            # The raw descriptor, not sys.stdin: a daemon thread blocked inside a buffered
            # reader would hold its lock while the interpreter shuts down (a fatal error).
            try:
                while os.read(stdin_fd, 4096):
                    pass
            except OSError:
                pass
            stop.set()

        threading.Thread(target=watch_parent, name="exit-with-parent", daemon=True).start()
    if events_port > 65535:
        return _refuse("--port 65535 leaves no port after it: give --events-port")
    try:
        emu = Emulator(
            args.api_key,
            host=args.host,
            port=args.port,
            events_port=events_port,
            record_requests=not args.no_request_log,
            retention=args.retention,
            allowed_hosts=args.allowed_host,
            admin_token=args.admin_token,
            state=args.state,
            save_every=args.save_every,
        )
    except (ValueError, OSError) as e:
        # A setting refused (a key no request could carry, a host that is not an address, a
        # state file that is not one or cannot be written): EmulatorProcess reads this line
        # and raises it as a ValueError.
        return _refuse(str(e))
    try:
        _serve(emu, stop)
        state_file = emu.state_file
        emu.close()
    except (ValueError, OSError) as e:
        # The save at the stop failed: the state is not in its file.
        print(f"pushwire-emulator: {e}", file=sys.stderr)
        _say("stopped")
        return 1
    if state_file is not None:
        _say(f"PUSHWIRE_SAVED={state_file}")
    _say("stopped")
    return 0


def _serve(emu: Emulator, stop: threading.Event) -> None:
    """Says where the emulator serves, then serves until ``stop`` is set or Ctrl-C."""
    # SIGINT and SIGTERM are handled from here on: a parent that signals as soon as it reads
    # the URLs gets a clean stop.
    try:
        _say(
            f"PUSHWIRE_BASE_URL={emu.base_url}\nPUSHWIRE_EVENTS_URL={emu.events_url}\n"
            f"PUSHWIRE_API_KEY={emu.api_key}\nPUSHWIRE_UI_URL={emu.ui_url}"
        )
        if emu.state_file is not None:
            _say(f"PUSHWIRE_STATE={emu.state_file}")
        if emu.notice is not None:
            _say(emu.notice)
        _say("serving; Ctrl-C to stop")
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass


def _seconds(raw: str) -> float:
    seconds = float(raw)
    if not (seconds > 0 and seconds != float("inf")):
        raise argparse.ArgumentTypeError(f"{raw} is not a number of seconds above 0")
    return seconds


def _port(raw: str) -> int:
    port = int(raw)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{raw} is not a port (0 to 65535)")
    return port


def _say(text: str) -> None:
    """Lines on standard output; a parent that closed its end is no error (it is going
    away)."""
    try:
        print(text, flush=True)
    except (BrokenPipeError, OSError):
        pass


def _refuse(message: str) -> int:
    _say(f"PUSHWIRE_REFUSED={message}")
    print(f"pushwire-emulator: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
