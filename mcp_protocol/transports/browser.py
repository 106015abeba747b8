"""A person who opens ``/mcp`` in a browser gets a short page saying what the URL is for, instead
of a JSON-RPC error.

A browser's navigation asks for ``text/html`` and never for ``text/event-stream``; every MCP
client's GET asks for ``text/event-stream`` ([L] basic/transports.mdx "Listening for Messages
from the Server"), so the two cannot be confused and clients see no change. The page is fixed
text: nothing from the request is echoed into it.
"""

from __future__ import annotations

from .headers import RequestHeaders, _media_ranges
from .responses import Send, send_bytes

PAGE = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>MCP endpoint</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}</style>
</head><body>
<h1>This is an MCP endpoint</h1>
<p>This URL speaks the <a href="https://modelcontextprotocol.io">Model Context Protocol</a>
(Streamable HTTP) to MCP clients such as Claude, IDEs, the MCP Inspector and the official SDKs.
It is not a web page: give this URL to your MCP client.</p>
<p>The <a href="/">home page</a> of this server has ready-to-paste client configurations.</p>
</body></html>
"""
HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'"),
]


def wants_page(headers: RequestHeaders) -> bool:
    ranges = _media_ranges(headers.accept)
    return "text/html" in ranges and "text/event-stream" not in ranges


async def send_page(send: Send) -> None:
    await send_bytes(send, 200, PAGE, HEADERS)
