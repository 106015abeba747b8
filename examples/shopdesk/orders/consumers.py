"""The project's own Channels consumer: a websocket that answers an order number with its status."""

import json

from channels.generic.websocket import AsyncWebsocketConsumer

from .data import ORDERS


class OrderFeedConsumer(AsyncWebsocketConsumer):
    async def receive(self, text_data=None, bytes_data=None):
        order = ORDERS.get(int(text_data or 0))
        await self.send(text_data=json.dumps({"order": text_data, "status": order and order["status"]}))
