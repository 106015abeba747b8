"""Revoked OAuth grants (auth/revocations.py): a watermark refuses the subject's tokens of that
client issued at or before it, and nothing else; a failing source keeps the last watermarks."""

from __future__ import annotations

import json

from mcp_protocol.auth.revocations import Revocations


async def test_a_watermark_refuses_older_tokens_of_that_subject_and_client_only() -> None:
    rows = [["7", "claude", 1000.0]]
    revocations = Revocations(lambda: json.dumps(rows).encode())
    await revocations.refresh()
    assert revocations.revoked("7", "claude", 999.0) and revocations.revoked("7", "claude", 1000.0)
    assert not revocations.revoked("7", "claude", 1001.0)  # issued after: a new authorization
    assert not revocations.revoked("7", "vscode", 999.0) and not revocations.revoked("8", "claude", 999.0)


async def test_a_failing_source_keeps_the_last_watermarks() -> None:
    answers = [json.dumps([["7", "claude", 1000.0]]).encode()]

    def source() -> bytes:
        if not answers:
            raise OSError("database down")
        return answers.pop()

    revocations = Revocations(source)
    await revocations.refresh()
    await revocations.refresh()
    assert revocations.revoked("7", "claude", 10.0)
