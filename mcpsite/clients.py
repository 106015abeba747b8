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


def python_sdk_snippet(mcp_url: str) -> str:
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


def client_configs(mcp_url: str, *, stdio: bool = True) -> list[ClientConfig]:
    configs = [
        ClientConfig(
            "MCP Inspector",
            "run it, then choose Transport Type “Streamable HTTP” and this URL (or the CLI form)",
            f"npx @modelcontextprotocol/inspector\n"
            f"npx @modelcontextprotocol/inspector --cli {mcp_url} --transport http --method tools/list",
        ),
        ClientConfig("Claude Code", "in a terminal", f"claude mcp add --transport http mcpsite {mcp_url}"),
    ]
    if stdio:
        configs.append(
            ClientConfig(
                "Claude Desktop (stdio)",
                "claude_desktop_config.json (add \"env\": {\"DATABASE_URL\": …} when not the default SQLite)",
                stdio_config(),
            )
        )
    configs.append(ClientConfig("Python SDK (mcp)", "pip install mcp; then run", python_sdk_snippet(mcp_url)))
    return configs


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else "http://127.0.0.1:8000/mcp"
    for config in client_configs(url):
        print(f"\n--- {config.client}: {config.how}\n{config.text.rstrip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
