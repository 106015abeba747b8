"""Tools, resources and prompts written in Python, served beside the database's definitions.

In any installed app's ``mcp_handlers.py`` (imported at startup, like ``admin.py``)::

    from registry.code import Context, ToolError, prompt, resource, tool

    @tool(annotations={"readOnlyHint": True})
    async def order_status(order_id: int, ctx: Context) -> OrderStatus:   # a TypedDict
        \"\"\"Where an order is.

        Args:
            order_id: The number on the confirmation email.
        \"\"\"
        await ctx.report_progress(0, 1)
        ...

    @resource("orders://{order_id}/invoice", mime_type="application/pdf")
    def invoice(order_id: int) -> bytes: ...

    @prompt
    def summarize(text: str, words: int = 50) -> str:
        return f"Summarize in {words} words:\\n{text}"

Typed parameters become ``inputSchema`` (pydantic), the return annotation ``outputSchema`` and
``structuredContent``, the docstring the description and the parameters' descriptions. A
parameter typed ``Context`` gets the request context: ``report_progress``, ``log``, ``elicit``,
``sample``, ``list_roots``, ``cancelled``. Raise ``ToolError`` for a tool error the model should
see. A plain ``def`` runs in a worker thread (it may use the ORM); ``async def`` on the loop.

These definitions are listed with the database's, read-only in the admin; a database row with a
name defined in code is a system check error (``registry.E002``) and is not served.
"""

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from .definitions import prompt, resource, tool

__all__ = ["Context", "ToolError", "prompt", "resource", "tool"]
