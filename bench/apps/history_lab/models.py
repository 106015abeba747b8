"""Three copies of one shape: a tool (JSON fields) and a prompt with arguments and messages."""

from __future__ import annotations

import reversion
from django.db import models
from simple_history.models import HistoricalRecords


class ToolShape(models.Model):
    name = models.CharField(max_length=128, unique=True)
    description = models.TextField(blank=True)
    input_schema = models.JSONField(default=dict)
    annotations = models.JSONField(default=dict)
    template_text = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        abstract = True


class PlainTool(ToolShape):
    pass


class SimpleTool(ToolShape):
    history = HistoricalRecords()


@reversion.register()
class ReversionTool(ToolShape):
    pass


class PlainPrompt(models.Model):
    name = models.CharField(max_length=128, unique=True)
    description = models.TextField(blank=True)


class PlainArgument(models.Model):
    prompt = models.ForeignKey(PlainPrompt, on_delete=models.CASCADE, related_name="arguments")
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)


class PlainMessage(models.Model):
    prompt = models.ForeignKey(PlainPrompt, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16)
    content = models.JSONField(default=dict)


class SimplePrompt(models.Model):
    name = models.CharField(max_length=128, unique=True)
    description = models.TextField(blank=True)
    history = HistoricalRecords()


class SimpleArgument(models.Model):
    prompt = models.ForeignKey(SimplePrompt, on_delete=models.CASCADE, related_name="arguments")
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)
    history = HistoricalRecords()


class SimpleMessage(models.Model):
    prompt = models.ForeignKey(SimplePrompt, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16)
    content = models.JSONField(default=dict)
    history = HistoricalRecords()


@reversion.register(follow=["arguments", "messages"])
class ReversionPrompt(models.Model):
    name = models.CharField(max_length=128, unique=True)
    description = models.TextField(blank=True)


@reversion.register()
class ReversionArgument(models.Model):
    prompt = models.ForeignKey(ReversionPrompt, on_delete=models.CASCADE, related_name="arguments")
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)


@reversion.register()
class ReversionMessage(models.Model):
    prompt = models.ForeignKey(ReversionPrompt, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16)
    content = models.JSONField(default=dict)
