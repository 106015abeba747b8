"""The project's own MCP tools, written in Python and found at startup like admin.py."""

from django.contrib.auth import get_user_model
from typing_extensions import TypedDict

from registry.code import Context, ToolError, tool

from .data import ORDERS


class OrderStatus(TypedDict):
    order_id: int
    status: str
    carrier: str | None


@tool(annotations={"readOnlyHint": True})
async def order_status(order_id: int, ctx: Context) -> OrderStatus:
    """Where an order is.

    Args:
        order_id: The number on the confirmation email.
    """
    await ctx.report_progress(0, 1, "looking it up")
    order = ORDERS.get(order_id)
    if order is None:
        raise ToolError(f"No order {order_id}")
    await ctx.report_progress(1, 1)
    return {"order_id": order_id, "status": order["status"], "carrier": order["carrier"]}


@tool(title="Staff accounts")
def staff_count(active_only: bool = True) -> int:
    """How many staff accounts the site has (a plain def: it runs in a thread and may use the ORM).

    Args:
        active_only: Count only active accounts.
    """
    users = get_user_model().objects.filter(is_staff=True)
    return users.filter(is_active=True).count() if active_only else users.count()
