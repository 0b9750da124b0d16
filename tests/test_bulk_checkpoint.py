"""A bulk call made resumable by its ``checkpoint=`` file, over real HTTP against the
emulator: a rerun sends only the chunks not stored, says what an earlier run did with each,
refuses a checkpoint made for another input, and an import killed with SIGKILL midway sends
each chunk once but the one in flight."""

from __future__ import annotations

import concurrent.futures
import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Union

import pytest
from client_support import Driver, api_requests

import pushwire
from pushwire import ValidationError
from pushwire.testing import Emulator

BY_HASH = "/apiv1/segments/addSegmentWithHash"


def members(emu: Emulator, segment_id: str) -> set[str]:
    [seg] = [s for s in emu.segments() if s["segment_id"] == segment_id]
    return set(seg["members"])


def an_import(emu: Emulator, subscribers: int, folder: Path) -> tuple[str, list[str], Path]:
    """A segment, ``subscribers`` new subscribers to add to it, and a checkpoint's path."""
    segment = emu.create_segment("everyone")
    hashes = emu.add_subscribers([{} for _ in range(subscribers)])
    return segment, hashes, folder / "import.checkpoint"


def one_at_a_time(
    drv: Driver, segment: str, hashes: list[str], checkpoint: Union[Path, str]
) -> Any:
    """The bulk add of ``hashes`` to ``segment``, a chunk at a time, with ``checkpoint``."""
    return drv(
        drv.client.segments.add_subscribers_bulk,
        segment,
        hashes,
        concurrency=1,
        checkpoint=checkpoint,
    )


def chunk_of(body: str, hashes: list[str]) -> int:
    """Which chunk of 500 a logged request carried, by its first hash."""
    first = body.split("subscriber_hash%5B0%5D=", 1)[1].split("&", 1)[0]
    return hashes.index(first) // 500


def test_a_rerun_sends_only_the_chunks_not_stored_and_says_what_came_before(
    drv: Driver, emu: Emulator, tmp_path: Path
) -> None:
    segment, hashes, checkpoint = an_import(emu, 1300, tmp_path)
    emu.inject_fault(BY_HASH, status=400)  # the first chunk refused; the others stored
    first = one_at_a_time(drv, segment, hashes, checkpoint)
    assert [c.ok for c in first.chunks] == [False, True, True]
    assert [c.prior for c in first.chunks] == [None, None, None]
    assert members(emu, segment) == set(hashes[500:])
    sent_before = len(api_requests(emu, BY_HASH))

    # The path as a str this time.
    again = one_at_a_time(drv, segment, hashes, str(checkpoint))
    assert again.ok and again.succeeded == 1300
    assert [c.prior for c in again.chunks] == ["failed", "stored", "stored"]
    # The stored chunks were not sent again: their results say so, with no message.
    assert [c.message is None for c in again.chunks] == [False, True, True]
    resent = api_requests(emu, BY_HASH)[sent_before:]
    assert [chunk_of(r["body"], hashes) for r in resent] == [0]
    assert members(emu, segment) == set(hashes)
    assert again.to_dict()["chunks"][1]["prior"] == "stored"

    # Everything stored: a third run sends nothing.
    third = drv(drv.client.segments.add_subscribers_bulk, segment, hashes, checkpoint=checkpoint)
    assert third.ok and {c.prior for c in third.chunks} == {"stored"}
    assert len(api_requests(emu, BY_HASH)) == sent_before + 1


def test_a_checkpoint_made_for_another_input_is_refused_before_anything_is_sent(
    drv: Driver, emu: Emulator, tmp_path: Path
) -> None:
    emu.create_segment("loyal")
    for i in range(600):
        emu.add_subscriber(f"h{i}", profile_id=f"user-{i}")
    ids = [f"user-{i}" for i in range(600)]
    checkpoint = tmp_path / "profiles.checkpoint"
    drv(drv.client.segments.add_profiles_bulk, "loyal", ids, checkpoint=checkpoint)
    sent = len(api_requests(emu))
    for call, items, says in [
        (drv.client.segments.add_profiles_bulk, ids[:599], "items"),
        (drv.client.segments.add_profiles_bulk, [*ids[1:], ids[0]], "the items differ"),
        (drv.client.segments.remove_profiles_bulk, ids, "operation"),
    ]:
        with pytest.raises(ValidationError, match=says) as info:
            drv(call, "loyal", items, checkpoint=checkpoint)
        assert info.value.field == "checkpoint"
    assert len(api_requests(emu)) == sent


def test_a_checkpoint_that_cannot_be_written_is_refused_by_name(
    drv: Driver, emu: Emulator, tmp_path: Path
) -> None:
    segment = emu.create_segment("s")
    (hash_,) = emu.add_subscribers([{}])
    for bad in (tmp_path, tmp_path / "missing" / "import.checkpoint"):
        with pytest.raises(ValidationError, match="cannot be used") as info:
            drv(drv.client.segments.add_subscribers_bulk, segment, [hash_], checkpoint=bad)
        assert info.value.field == "checkpoint"
    # Some other file given by mistake is refused and left as it is, to its last byte: a
    # text, a CSV whose last row has no line's end, a one-line JSON file.
    for name, text in [
        ("notes.txt", "my notes\n"),
        ("hashes.csv", "hash\nab12\ncd34"),
        ("config.json", '{"retries": 3}'),
    ]:
        not_one = tmp_path / name
        not_one.write_text(text)
        with pytest.raises(ValidationError, match="not a pushwire checkpoint"):
            drv(drv.client.segments.add_subscribers_bulk, segment, [hash_], checkpoint=not_one)
        assert not_one.read_text() == text
    assert api_requests(emu) == []


# The import a worker runs: told to go on after its second chunk (its progress callback
# waits for a line), so that the test can hold the third in flight and kill it there.
IMPORT = textwrap.dedent(
    """
    import json, sys
    import pushwire

    job = json.loads(sys.argv[1])
    client = pushwire.Client(api_key=job["key"], base_url=job["base_url"])

    def progress(done, total):
        if done == 1000:
            print("two chunks stored", flush=True)
            sys.stdin.readline()

    client.segments.add_subscribers_bulk(
        job["segment"], job["hashes"], concurrency=1, checkpoint=job["checkpoint"],
        progress=progress,
    )
    print("finished", flush=True)
    """
)


def test_an_import_killed_midway_resumes_sending_each_chunk_once_but_the_one_in_flight(
    tmp_path: Path,
) -> None:
    checkpoint = tmp_path / "import.checkpoint"
    # An emulator of its own: the request held in flight dies with it.
    with Emulator() as emu:
        segment = emu.create_segment("everyone")
        hashes = emu.add_subscribers([{} for _ in range(2200)])
        job = {
            "key": emu.api_key,
            "base_url": emu.base_url,
            "segment": segment,
            "hashes": hashes,
            "checkpoint": str(checkpoint),
        }
        worker = subprocess.Popen(
            [sys.executable, "-c", IMPORT, json.dumps(job)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert worker.stdout is not None and worker.stdin is not None
            assert worker.stdout.readline().strip() == "two chunks stored"
            # The third chunk's request is held before it is processed, then the worker is
            # killed with it in flight.
            emu.inject_fault(BY_HASH, delay=60)
            worker.stdin.write("go\n")
            worker.stdin.flush()
            deadline = time.monotonic() + 30
            while len(api_requests(emu, BY_HASH)) < 3:
                assert time.monotonic() < deadline, "the third chunk never arrived"
                time.sleep(0.005)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=30)
        assert worker.returncode == -signal.SIGKILL
        assert members(emu, segment) == set(hashes[:1000])

        with emu.client() as client:
            result = client.segments.add_subscribers_bulk(
                segment, hashes, concurrency=1, checkpoint=checkpoint
            )
        assert result.ok and result.succeeded == 2200
        assert [c.prior for c in result.chunks] == [
            "stored",
            "stored",
            "in_flight",
            None,
            None,
        ]
        assert members(emu, segment) == set(hashes)
        sent = [chunk_of(r["body"], hashes) for r in api_requests(emu, BY_HASH)]
        # Each chunk once, but the one in flight: once by the killed worker, once again.
        assert sorted(sent) == [0, 1, 2, 2, 3, 4]


def test_a_checkpoint_made_against_another_site_is_refused_before_anything_is_sent(
    drv: Driver, emu: Emulator, tmp_path: Path
) -> None:
    # The same import checkpointed against staging, then run against production with the
    # same path: the same segment id and hashes, so only the site tells them apart.
    checkpoint = tmp_path / "vip-import.checkpoint"
    with Emulator() as staging:
        segment = staging.create_segment("vip")
        hashes = staging.add_subscribers([{} for _ in range(600)])
        with staging.client() as client:
            assert client.segments.add_subscribers_bulk(segment, hashes, checkpoint=checkpoint).ok
        # The same root spelled otherwise is the same site: everything stored, nothing sent.
        spelled = staging.base_url.replace("http://", "HTTP://") + "/apiv1/"
        with pushwire.Client(api_key=staging.api_key, base_url=spelled) as client:
            again = client.segments.add_subscribers_bulk(segment, hashes, checkpoint=checkpoint)
        assert {c.prior for c in again.chunks} == {"stored"}
    assert emu.create_segment("vip") == segment
    emu.add_subscribers([{"subscriber_hash": h} for h in hashes])
    with pytest.raises(ValidationError, match="against another site") as info:
        drv(drv.client.segments.add_subscribers_bulk, segment, hashes, checkpoint=checkpoint)
    assert info.value.field == "checkpoint"
    # Another site's key on the same emulator is another site.
    emu.add_site("other-site-key-1")
    with (
        emu.client(api_key="other-site-key-1") as client,
        pytest.raises(ValidationError, match="another site"),
    ):
        client.segments.add_subscribers_bulk(segment, hashes, checkpoint=checkpoint)
    assert api_requests(emu) == []
    assert members(emu, segment) == set()
    # Nor does the refusal name the key, nor the file hold it.
    assert "other-site-key-1" not in str(info.value) + checkpoint.read_text()
    assert emu.api_key not in checkpoint.read_text()


def test_a_torn_last_record_does_not_swallow_the_next_runs_first(
    drv: Driver, emu: Emulator, tmp_path: Path
) -> None:
    segment, hashes, checkpoint = an_import(emu, 1200, tmp_path)
    emu.inject_fault(BY_HASH, status=400, times=1)  # chunk 0 refused, 1 and 2 stored
    first = one_at_a_time(drv, segment, hashes, checkpoint)
    assert [c.ok for c in first.chunks] == [False, True, True]
    # Killed mid-write in a later run: a record without its line's end.
    with checkpoint.open("a") as f:
        f.write('{"sent":0')
    again = one_at_a_time(drv, segment, hashes, checkpoint)
    assert again.ok and [c.prior for c in again.chunks] == ["failed", "stored", "stored"]
    records = [json.loads(line) for line in checkpoint.read_text().splitlines()[1:]]
    # This run's records whole, each on its own line, after the first run's.
    assert records[-2:] == [{"sent": 0}, {"stored": 0}]


def test_a_second_run_on_a_checkpoint_in_use_is_refused_by_name(
    emu: Emulator, tmp_path: Path
) -> None:
    segment, hashes, checkpoint = an_import(emu, 1000, tmp_path)
    first_chunk_done, go_on = threading.Event(), threading.Event()

    def held(done: int, total: int) -> None:
        first_chunk_done.set()
        go_on.wait(30)

    with emu.client() as client:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            running = pool.submit(
                client.segments.add_subscribers_bulk,
                segment,
                hashes,
                concurrency=1,
                checkpoint=checkpoint,
                progress=held,
            )
            assert first_chunk_done.wait(30)
            try:
                with pytest.raises(ValidationError, match="in use by another run") as info:
                    client.segments.add_subscribers_bulk(segment, hashes, checkpoint=checkpoint)
                assert info.value.field == "checkpoint"
            finally:
                go_on.set()
            assert running.result(30).ok
        # Once that run ended, the checkpoint is free: everything stored, nothing sent.
        sent = len(api_requests(emu, BY_HASH))
        again = client.segments.add_subscribers_bulk(segment, hashes, checkpoint=checkpoint)
        assert {c.prior for c in again.chunks} == {"stored"}
        assert len(api_requests(emu, BY_HASH)) == sent == 2
