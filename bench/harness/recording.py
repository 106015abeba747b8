"""Our answers recorded for the bare reference app (``bench/apps/bare.py``), which sends them back
byte for byte: the HTTP server's own cost for the same bytes, with no protocol work at all."""

from __future__ import annotations

from .httpclient import RawConnection, address
from .loadgen import CALL, INITIALIZE, INITIALIZED, session_headers

DROPPED_HEADERS = {b"date", b"server"}  # uvicorn adds its own to every answer, bare or not


async def record(url: str) -> dict[str, object]:
    """Our answers to initialize and to tools/call echo: what the bare app will send back."""
    conn = RawConnection(*address(url), "/mcp")
    try:
        init = await conn.send("POST", INITIALIZE, {})
        assert init.session_id, init.body
        await conn.send("POST", INITIALIZED, session_headers(init.session_id))
        call = await conn.send("POST", CALL % 2, session_headers(init.session_id))
        await conn.send("DELETE", None, session_headers(init.session_id))
    finally:
        await conn.close()
    if init.status != 200 or call.status != 200 or b"hello" not in call.body:
        raise RuntimeError(f"could not record our answers: {init.status} {call.status} {call.body[:200]!r}")

    def kept(response: object) -> dict[str, object]:
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in response.headers.items()
            if k not in DROPPED_HEADERS
        ]  # type: ignore[attr-defined]
        return {"status": response.status, "headers": headers, "body": response.body.decode()}  # type: ignore[attr-defined]

    return {"initialize": kept(init), "call": kept(call)}
