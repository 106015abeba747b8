"""The fleet of ``scripts/fleet.sh`` (``mcpsite.fleet.Fleet``): two uvicorn workers behind nginx,
one SQLite registry, one private Redis, ``PROMETHEUS_MULTIPROC_DIR`` shared.

- A known load, part of it sent to each worker directly and part through the balancer, shows up
  in full in a scrape of either worker or of the balancer (issue 12 "/metrics scraped after a
  known load shows the right counts across workers"); the open-stream gauge sums the workers.
- ``/readyz`` is 503 on every worker while Redis is stopped and 200 once it is back.
- The balancer spreads requests over both workers, and a session opened through it is served
  whichever worker each request lands on.
- The command itself (``python -m mcpsite.fleet``, what ``scripts/fleet.sh`` runs) prints its URLs,
  serves through nginx, and takes every process down on SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.mmap_dict import MmapedDict

from mcp_protocol.transports.metrics import FLUSH_SECONDS
from mcpsite.fleet import Fleet, stop_group
from tests.support.live_server import ROOT
from tests.support.mcp_http import next_comment, open_session, request, session_headers, sse_events
from tests.support.private_redis import PrivateRedis, have_redis_server
from tests.support.scrape import Scrape, scrape

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
]
WAIT = 15.0


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path_factory.mktemp("redis")).start()
    try:
        yield server
    finally:
        if server.ping():
            server.stop()


def require_nginx() -> None:
    """Skip without nginx (test.sh installs it as root; elsewhere it may be missing)."""
    from mcpsite.fleet import nginx_binary

    try:
        nginx_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def fleet(redis_server: PrivateRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    require_nginx()
    prefix = tmp_path_factory.mktemp("fleet")
    env = {
        "DATABASE_URL": f"sqlite:///{prefix / 'db.sqlite3'}",
        "REDIS_URL": redis_server.url,
        "MCP_KEY_PREFIX": f"fleet-{uuid.uuid4().hex[:8]}",
        "MCP_PROVIDER": "registry.provider.RegistryProvider",
        "MCP_KEEPALIVE_SECONDS": "0.3",
    }
    fleet = Fleet(2, prefix=prefix, env=env)
    fleet.metrics_dir.mkdir()
    fleet.manage("migrate", "--noinput", "--verbosity", "0")
    fleet.manage("load_demo")
    try:
        yield fleet.start(prepare=False)
    finally:
        fleet.stop()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


def worker_urls(fleet: Fleet) -> list[str]:
    return [f"http://127.0.0.1:{port}" for port in fleet.ports]


async def echo(client: httpx.AsyncClient, base_url: str, session_id: str, n: int) -> None:
    call = request(n, "tools/call", {"name": "echo", "arguments": {"message": f"m{n}"}})
    response = await client.post(f"{base_url}/mcp", headers=session_headers(session_id), json=call)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["content"][0]["text"] == f"m{n}"


async def test_a_known_load_shows_in_full_in_a_scrape_of_any_worker(
    fleet: Fleet, client: httpx.AsyncClient
) -> None:
    a, b = worker_urls(fleet)
    balancer = fleet.balancer.base_url
    await asyncio.sleep(FLUSH_SECONDS * 1.5)  # earlier requests' counts are in the files by now
    before = scrape(balancer).value("mcp_tool_calls_total", tool="echo", outcome="ok")
    session_id = await open_session(client, f"{balancer}/mcp")
    for n in range(3):
        await echo(client, a, session_id, n)
    for n in range(4):
        await echo(client, b, session_id, n)
    for n in range(6):
        await echo(client, balancer, session_id, n)
    for where in (a, b, balancer):
        # Each worker hands its counts to the shared files at most FLUSH_SECONDS after a request.
        found = await settled(
            lambda w=where: scrape(w), "mcp_tool_calls_total", before + 13, tool="echo", outcome="ok"
        )
        assert found.value("mcp_tool_calls_total", tool="echo", outcome="ok") == before + 13, where
        assert found.value("mcp_tool_call_duration_seconds_count", tool="echo") >= 13
    # Each worker wrote its own samples (two processes), summed at scrape time.
    pids = {name.rsplit("_", 1)[-1] for name in os.listdir(fleet.metrics_dir) if name.startswith("counter_")}
    assert len(pids) == 2, sorted(os.listdir(fleet.metrics_dir))


async def test_the_balancer_spreads_one_sessions_requests_over_both_workers(
    fleet: Fleet, client: httpx.AsyncClient
) -> None:
    # Round robin, no affinity. Told apart by each worker's own sample file in the multiprocess
    # directory (one per process id), not by anything the server would add for the test's sake.
    session_id = await open_session(client, fleet.balancer.url)
    await asyncio.sleep(FLUSH_SECONDS * 1.5)  # both workers have flushed the session's requests
    before = requests_per_process(fleet)
    for n in range(8):
        await echo(client, fleet.balancer.base_url, session_id, n)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while sum(requests_per_process(fleet).values()) < sum(before.values()) + 8:
        assert loop.time() < deadline, "the workers never flushed their counts"
        await asyncio.sleep(0.1)
    after = requests_per_process(fleet)
    grew = {pid: after[pid] - before.get(pid, 0) for pid in after}
    assert sum(grew.values()) == 8 and all(count >= 2 for count in grew.values()), grew
    assert len(grew) == 2


async def settled(take: Callable[[], Scrape], name: str, expected: float, **labels: str) -> Scrape:
    """The first scrape whose ``name`` reaches ``expected`` (with a deadline)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while True:
        found = take()
        if found.value(name, **labels) >= expected or loop.time() > deadline:
            return found
        await asyncio.sleep(0.1)


def requests_per_process(fleet: Fleet) -> dict[str, float]:
    """mcp_requests_total per worker process, read from its file in the multiprocess directory."""
    per: dict[str, float] = {}
    for path in fleet.metrics_dir.glob("counter_*.db"):
        values = MmapedDict.read_all_values_from_file(str(path))
        per[path.stem] = sum(value for key, value, *_ in values if json.loads(key)[1] == "mcp_requests_total")
    return per


async def test_open_streams_are_summed_over_the_workers(fleet: Fleet, client: httpx.AsyncClient) -> None:
    a, b = worker_urls(fleet)
    idle = scrape(b).value("mcp_open_streams")
    session_id = await open_session(client, f"{a}/mcp")
    headers = {**session_headers(session_id), "accept": "text/event-stream"}
    async with client.stream("GET", f"{a}/mcp", headers=headers) as stream:
        await next_comment(sse_events(stream))
        assert scrape(b).value("mcp_open_streams") == idle + 1  # open on A, seen from B
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while scrape(b).value("mcp_open_streams") != idle:
        assert loop.time() < deadline, "the closed stream is still counted"
        await asyncio.sleep(0.05)


async def test_readyz_is_503_while_redis_is_down_and_200_when_it_is_back(
    fleet: Fleet, redis_server: PrivateRedis, client: httpx.AsyncClient
) -> None:
    probes = [f"{u}/readyz" for u in [*worker_urls(fleet), fleet.balancer.base_url]]
    for probe in probes:
        assert (await client.get(probe)).status_code == 200
    redis_server.stop()
    try:
        for probe in probes:
            response = await client.get(probe)
            assert response.status_code == 503, response.text
            body = response.json()
            assert body["ready"] is False and body["checks"]["database"] == "ok"
            assert body["checks"]["mcp"].startswith("unavailable")
        health = await client.get(f"{fleet.balancer.base_url}/healthz")
        assert health.status_code == 200  # alive all the same: no restart for a Redis outage
        errors = scrape(worker_urls(fleet)[0]).value("mcp_redis_errors_total")
        assert errors >= 1
    finally:
        redis_server.start()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    for probe in probes:
        while (await client.get(probe)).status_code != 200:
            assert loop.time() < deadline, f"{probe} never became ready again"
            await asyncio.sleep(0.1)


def test_the_fleet_command_serves_through_nginx_and_stops_everything_on_sigterm(
    redis_server: PrivateRedis, tmp_path: Path
) -> None:
    # What scripts/fleet.sh runs after installing: python -m mcpsite.fleet, here with one worker.
    require_nginx()
    prefix = tmp_path / "fleet"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": redis_server.url,
        "MCP_KEY_PREFIX": f"cli-{uuid.uuid4().hex[:8]}",
        "PYTHONUNBUFFERED": "1",
    }
    command = [sys.executable, "-m", "mcpsite.fleet", "--workers", "1", "--dir", str(prefix)]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        printed: list[str] = []
        deadline = time.monotonic() + 60
        while not any(line.startswith("Files, logs:") for line in printed):
            assert time.monotonic() < deadline and process.poll() is None, "".join(printed)
            printed.append(process.stdout.readline())
        endpoint = next(line.split()[2] for line in printed if line.startswith("MCP endpoint:"))
        base = endpoint.removesuffix("/mcp")
        assert httpx.get(f"{base}/readyz", timeout=10).status_code == 200
        assert httpx.get(f"{base}/static/admin/css/base.css", timeout=10).status_code == 200
        nginx_pid = int((prefix / "nginx.pid").read_text())
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        with pytest.raises(ProcessLookupError):
            os.kill(nginx_pid, 0)  # nginx is gone with the command
    finally:
        stop_group(process)
