"""The image's HEALTHCHECK: GET /healthz on this container's worker, 0 when it answers 200.

Sent with a Host Django accepts (the first of DJANGO_ALLOWED_HOSTS), since the worker checks it
even on /healthz; standard library only, because the slim image has no curl.
"""

import os
import sys
import urllib.request

allowed = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost").split(",")[0].strip().lstrip(".")
host = "localhost" if allowed in ("", "*") else allowed
request = urllib.request.Request("http://127.0.0.1:8000/healthz", headers={"Host": host})
try:
    with urllib.request.urlopen(request, timeout=3) as response:
        sys.exit(0 if response.status == 200 else 1)
except Exception as exc:  # refused, timed out, 4xx/5xx: unhealthy, with the reason in docker inspect
    print(f"healthz: {exc}", file=sys.stderr)
    sys.exit(1)
