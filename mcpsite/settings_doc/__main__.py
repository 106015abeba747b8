"""``python -m mcpsite.settings_doc``: write (or ``--check``) docs/reference/settings.md."""

import os
import sys

from .generator import main

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
sys.exit(main())
