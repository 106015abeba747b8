"""The registry's models, one module per family, gathered here so Django finds them and
``from registry.models import Tool`` reads as in any app ("Organizing models in a package")."""

from .changesets import ChangeSet
from .prompts import Prompt, PromptArgument, PromptMessage
from .resources import Resource, ResourceTemplate
from .servers import VirtualServer
from .skills import Skill, SkillFile
from .tools import Tool
from .upstreams import Upstream

__all__ = [
    "ChangeSet",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "Resource",
    "ResourceTemplate",
    "Skill",
    "SkillFile",
    "Tool",
    "Upstream",
    "VirtualServer",
]
