"""Ready-to-paste client configurations for this server: the landing page shows them and
``scripts/serve.sh`` prints them (``python -m mcpsite.clients URL``).

The stdio one (Claude Desktop and other local clients) runs ``manage.py mcp_stdio`` with this
checkout's interpreter, so it is only offered where those paths mean something to the reader:
in the terminal, and on the landing page in development (a production page would be showing
its file system to the world).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class ClientConfig:
    client: str
    how: str  # one line: where the text goes
    text: str


def python_sdk_snippet(mcp_url: str, token: str | None = None) -> str:
    if token:  # issue 11: the key goes on the HTTP client the transport uses
        http = f"create_mcp_http_client(headers={{'Authorization': 'Bearer {token}'}})"
        return f'''import asyncio

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    http = {http}
    async with http, streamable_http_client({mcp_url!r}, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            print("tools:", ", ".join(tool.name for tool in listed.tools))


asyncio.run(main())
'''
    return f'''import asyncio

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    async with streamable_http_client({mcp_url!r}) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            print("tools:", ", ".join(tool.name for tool in listed.tools))


asyncio.run(main())
'''


def stdio_config(python: str | None = None, manage: Path | None = None) -> str:
    args = [str(manage or ROOT / "manage.py"), "mcp_stdio", "--prepare"]
    server = {"command": python or sys.executable, "args": args}
    return json.dumps({"mcpServers": {"mcpsite": server}}, indent=2)


def client_configs(mcp_url: str, *, stdio: bool = True, token: str | None = None) -> list[ClientConfig]:
    """``token``: the server asks for an API key (``MCP_AUTH``); the configurations carry it."""
    header = f' --header "Authorization: Bearer {token}"' if token else ""
    where = " (Authentication: header Authorization, value Bearer <key>)" if token else ""
    configs = [
        ClientConfig(
            "MCP Inspector",
            f"run it, then choose Transport Type “Streamable HTTP” and this URL{where} (or the CLI form)",
            f"npx @modelcontextprotocol/inspector\n"
            f"npx @modelcontextprotocol/inspector --cli {mcp_url} --transport http{header}"
            " --method tools/list",
        ),
        ClientConfig("Claude Code", "in a terminal",
                     f"claude mcp add --transport http mcpsite {mcp_url}{header}"),
    ]
    if stdio:
        configs.append(
            ClientConfig(
                "Claude Desktop (stdio)",
                "claude_desktop_config.json (add \"env\": {\"DATABASE_URL\": …} when not the default SQLite)",
                stdio_config(),
            )
        )
    configs.append(ClientConfig("Python SDK (mcp)", "pip install mcp; then run",
                                python_sdk_snippet(mcp_url, token)))
    return configs


def endpoint_config(name: str, url: str, *, token: str | None = None) -> str:
    """A remote server's entry for clients that take JSON (Claude Code's ``.mcp.json``, Claude
    Desktop's and Cursor's ``mcpServers``; VS Code's ``servers`` takes the same entry): ``type``
    ``http`` and the URL, and the key's header when the endpoint asks for one."""
    server: dict[str, object] = {"type": "http", "url": url}
    if token:
        server["headers"] = {"Authorization": f"Bearer {token}"}
    return json.dumps({"mcpServers": {name: server}}, indent=2)


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else "http://127.0.0.1:8000/mcp"
    for config in client_configs(url):
        print(f"\n--- {config.client}: {config.how}\n{config.text.rstrip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
