"""Private Redis topologies for tests: a 3-master Redis Cluster and a Sentinel-watched master with a
replica, each on free loopback ports, started by the tests and stopped by them.

Never the shared 127.0.0.1:6379. Every server runs daemonized with ``--save ""`` and no AOF; a
``stop()`` shuts each one down with ``SHUTDOWN NOSAVE`` (by its port, never by name). Every wait
has a deadline. ``redis-sentinel`` need not be installed: ``redis-server <conf> --sentinel`` is
the same program.

    cluster = PrivateCluster(tmp_dir).start()      # cluster.url: one seed node
    sentinel = PrivateSentinel(tmp_dir).start()    # sentinel.sentinels, sentinel.master_name
    sentinel.failover()                            # SENTINEL FAILOVER; waits for the new master
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from redis.crc import key_slot

from .polling import wait_until
from .ports import free_port
from .private_redis import redis_client, shutdown, start_server

DEADLINE = 20.0  # s: the longest any topology change may take here


def _client(port: int) -> redis.Redis:
    return redis_client(port, connect_timeout=0.5, timeout=2.0, decode_responses=True)


def _until(what: str, check: Callable[[], bool], seconds: float = DEADLINE) -> None:
    def answered() -> bool:  # a node that is down or busy answers later
        try:
            return check()
        except (redis.exceptions.RedisError, OSError):
            return False

    wait_until(what, answered, seconds)


def _start(port: int, directory: Path, *extra: str, config: Path | None = None) -> None:
    start_server(port, directory, *extra, config=config)
    _until(f"redis on {port} up", lambda: bool(_client(port).ping()), 10.0)


def _cluster_state(port: int) -> str:
    info = _client(port).execute_command("CLUSTER INFO")  # redis-py parses it into a dict
    return str(info.get("cluster_state") if isinstance(info, dict) else info)


def _slots(port: int) -> list[tuple[int, int, int]]:
    """CLUSTER SLOTS as ``port`` sees it: (first slot, last slot, master's port) per range."""
    ranges: list[Any] = _client(port).execute_command("CLUSTER SLOTS")
    return [(int(r[0]), int(r[1]), int(r[2][1])) for r in ranges]


class PrivateCluster:
    """``masters`` masters (default three) covering all 16384 slots, each with ``replicas``
    replicas (default none; with one, ``kill_master_of`` shows a Cluster failover)."""

    def __init__(self, directory: Path, masters: int = 3, replicas: int = 0) -> None:
        self.directory = directory
        self.masters, self.replicas = masters, replicas
        self.ports = [free_port() for _ in range(masters * (1 + replicas))]
        # The cluster bus defaults to port + 10000 (often taken or past 65535): a free one each.
        self.bus_ports = [free_port() for _ in self.ports]
        self.dead: set[int] = set()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start(self) -> PrivateCluster:
        try:
            for port, bus_port in zip(self.ports, self.bus_ports, strict=True):
                node = self.directory / f"node-{port}"
                _start(port, node, "--cluster-enabled", "yes", "--cluster-port", str(bus_port),
                       "--cluster-config-file", str(node / "nodes.conf"), "--cluster-node-timeout", "2000",
                       # Replicas sync at once, and may take over however long they were cut off.
                       "--repl-diskless-sync-delay", "0", "--cluster-replica-validity-factor", "0")
            nodes = [f"127.0.0.1:{p}" for p in self.ports]
            create = ["redis-cli", "--cluster", "create", *nodes, "--cluster-replicas", str(self.replicas)]
            subprocess.run([*create, "--cluster-yes"], check=True, timeout=30, capture_output=True)
            self._wait_settled()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_settled(self) -> None:
        for port in self.ports:
            if port in self.dead:
                continue
            _until(f"cluster_state:ok on {port}", lambda port=port: _cluster_state(port) == "ok")
            # Every node must know every slot's (live) owner before clients ask any of them.
            _until(f"slots known on {port}",
                   lambda port=port: len(self._owners(port) - self.dead) == self.masters)
            _until(f"replica {port} in sync", lambda port=port: self._in_sync(port))

    @staticmethod
    def _in_sync(port: int) -> bool:
        info = _client(port).info("replication")
        return info.get("role") == "master" or info.get("master_link_status") == "up"

    def _owners(self, port: int) -> set[int]:
        """The ports of the masters that ``port`` says own slots."""
        return {master for _, _, master in _slots(port)}

    def master_of(self, key: str) -> int:
        """The port of the master that owns ``key``'s slot now."""
        live = next(p for p in self.ports if p not in self.dead)
        for start, end, master in _slots(live):
            if start <= key_slot(key.encode()) <= end:
                return master
        raise AssertionError(f"no master owns {key!r}")

    def kill_master_of(self, key: str) -> int:
        """The master of ``key``'s slot dies (``SHUTDOWN NOSAVE``); returns the port of the replica
        that the Cluster promoted in its place."""
        old = self.master_of(key)

        def offset(port: int) -> int:
            return int(_client(port).info("replication").get("master_repl_offset", 0))

        replicas = [p for p in self.ports if p not in self.dead and p != old
                    and _client(p).info("replication").get("master_port") == old]
        _until("replicas have every write", lambda: all(offset(r) >= offset(old) for r in replicas))
        shutdown(old)
        self.dead.add(old)
        _until(f"{key!r} failed over", lambda: self.master_of(key) not in self.dead)
        self._wait_settled()
        return self.master_of(key)

    def stop(self) -> None:
        for port in self.ports:
            if port not in self.dead:
                shutdown(port)


class PrivateSentinel:
    """A master, one replica of it, and one Sentinel monitoring them as ``master_name``."""

    master_name = "mcpmaster"

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.master_port, self.replica_port, self.sentinel_port = free_port(), free_port(), free_port()

    @property
    def sentinels(self) -> list[str]:
        return [f"127.0.0.1:{self.sentinel_port}"]

    @property
    def url(self) -> str:
        """What ``REDIS_URL`` holds in sentinel mode: the master's database (and credentials)."""
        return "redis://mcpmaster/0"

    def _sentinel(self) -> redis.Redis:
        return _client(self.sentinel_port)

    def master_port_now(self) -> int:
        host_port = self._sentinel().execute_command("SENTINEL GET-MASTER-ADDR-BY-NAME", self.master_name)
        return int(host_port[1])

    def start(self) -> PrivateSentinel:
        try:
            # A replica's first sync otherwise waits 5 s (repl-diskless-sync-delay) for company.
            _start(self.master_port, self.directory / "master", "--repl-diskless-sync-delay", "0")
            _start(self.replica_port, self.directory / "replica", "--repl-diskless-sync-delay", "0",
                   "--replicaof", "127.0.0.1", str(self.master_port))
            config = self.directory / "sentinel" / "sentinel.conf"
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text(
                f"sentinel monitor {self.master_name} 127.0.0.1 {self.master_port} 1\n"
                f"sentinel down-after-milliseconds {self.master_name} 1000\n"
                f"sentinel failover-timeout {self.master_name} 4000\n"
            )  # a file of its own: Sentinel rewrites it
            _start(self.sentinel_port, config.parent, "--sentinel", config=config)
            self._wait_replica_known()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_replica_known(self) -> None:
        """Sentinel learns replicas from the master's INFO; a failover needs one it knows in sync."""

        def ready() -> bool:
            replicas = self._sentinel().execute_command("SENTINEL REPLICAS", self.master_name)
            for entry in replicas:
                info = dict(zip(entry[::2], entry[1::2], strict=True)) if isinstance(entry, list) else entry
                flags = str(info.get("flags", ""))
                if "disconnected" not in flags and "s_down" not in flags \
                        and info.get("master-link-status") == "ok":
                    return True
            return False

        _until("sentinel sees an in-sync replica", ready)

    def failover(self, *, pause_writes: bool = False) -> int:
        """The master dies (``SHUTDOWN NOSAVE``, once its replica has every write) and Sentinel
        promotes the replica (``SENTINEL FAILOVER``); returns the new master's port once Sentinel
        names it and it accepts writes. A dead old master (rather than one Sentinel demotes ten
        seconds later) means nothing can be written to it meanwhile. ``pause_writes``: under
        write load the replica is never caught up at one instant, so the master first stops
        executing writes (``CLIENT PAUSE … WRITE``, as Redis's own ``FAILOVER`` does)."""
        old = self.master_port_now()
        replica = self.replica_port if old == self.master_port else self.master_port
        if pause_writes:
            _client(old).execute_command("CLIENT", "PAUSE", int(DEADLINE * 1000), "WRITE")

        def offset(port: int) -> int:
            info = _client(port).info("replication")
            return int(info.get("master_repl_offset", 0))

        _until("replica in sync", lambda: offset(replica) >= offset(old))
        shutdown(old)
        self._sentinel().execute_command("SENTINEL FAILOVER", self.master_name)
        _until("sentinel names the new master", lambda: self.master_port_now() == replica)
        _until("new master is writable", lambda: _client(replica).execute_command("ROLE")[0] == "master")
        return replica

    def master_flags(self) -> str:
        return str(self._sentinel().sentinel_master(self.master_name).get("flags"))

    def stop(self) -> None:
        for port in (self.sentinel_port, self.replica_port, self.master_port):
            shutdown(port)
