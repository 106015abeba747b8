"""Check the Helm chart without a cluster: lint, render, validate every object, scan for policy.

Run by tests/deploy/test_helm_chart.py with the Python of the chart tools' own environment
(``.tools/k8s``, made by scripts/install-tools.sh from tools/k8s-requirements.txt), never the
project's: checkov brings a large dependency tree that must not move the app's pins.

    .tools/k8s/bin/python scripts/chart_check.py CHART VALUES.yaml [VALUES.yaml ...] [--set-json J]

prints one JSON report: for each value set, Helm's lint messages, the rendered objects (with their
kind and name), each object's errors against the Kubernetes schemas of every version in KUBE_VERSIONS, and
the policy scanner's failed checks over all the rendered objects.

- Helm: ``helm_python`` (PyPI helm-python-sdk), Helm's Go SDK built as a C library and shipped in
  the wheel: ``lint`` is ``helm lint --strict``, ``Chart.render`` is ``helm template`` (client
  side, no cluster). The helm CLI itself has no package in the registries this project reaches.
- Schemas: ``kubernetes_validate`` (PyPI kubernetes-validate), the upstream OpenAPI schemas of
  each Kubernetes release bundled in the package; ``strict`` refuses unknown fields too.
- Policy: checkov's Kubernetes checks, offline (``--skip-download``: no severities then, so every
  failed check counts, except the ones a manifest skips with its reason in a
  ``checkov.io/skip`` annotation).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import yaml

# The oldest Kubernetes the chart declares (Chart.yaml kubeVersion) and the newest bundled.
KUBE_VERSIONS = ("1.27", kubernetes_validate.latest_version())
RELEASE, NAMESPACE = "mcp", "mcpsite"


def render(chart: Path, values: dict[str, Any]) -> list[dict[str, Any]]:
    """``helm template``: every object of every manifest (NOTES.txt and empty documents left out)."""
    with helm.Chart.load(str(chart)) as loaded:
        manifests = loaded.render(values, name=RELEASE, namespace=NAMESPACE, is_install=True)
    objects = []
    for path, text in sorted(manifests.items()):
        if path.endswith(".yaml"):
            objects += [doc for doc in yaml.safe_load_all(text) if doc]
    return objects


def validate(obj: dict[str, Any]) -> list[str]:
    errors = []
    for version in KUBE_VERSIONS:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{version}: {exc.message} at {'/'.join(map(str, exc.path))}")
        except kubernetes_validate.SchemaNotFoundError:
            errors.append(f"{version}: no schema for {obj.get('apiVersion')} {obj.get('kind')}")
    return errors


def scan(folder: Path) -> dict[str, Any]:
    """checkov's Kubernetes framework over the rendered files: its failed checks, and how many
    resources and checks it saw (so a scan that read nothing cannot pass for a clean one)."""
    checkov = Path(sys.executable).with_name("checkov")
    run = subprocess.run(
        [str(checkov), "--directory", str(folder), "--framework", "kubernetes", "--output", "json",
         "--quiet", "--compact", "--skip-download"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    if not run.stdout.strip():
        raise SystemExit(f"checkov printed nothing (exit {run.returncode}): {run.stderr[-2000:]}")
    reports = json.loads(run.stdout)
    failed, passed, resources = [], 0, 0
    for report in reports if isinstance(reports, list) else [reports]:
        passed += report.get("summary", {}).get("passed", 0)
        resources += report.get("summary", {}).get("resource_count", 0)
        for check in report.get("results", {}).get("failed_checks", []):
            failed.append({"check": check["check_id"], "name": check["check_name"],
                           "resource": check["resource"], "file": check["file_path"]})
    return {"failed": failed, "passed": passed, "resources": resources}


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merge(out[key], value) if nested else value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chart", type=Path)
    parser.add_argument("values", type=Path, nargs="+")
    parser.add_argument("--set-json", default="{}", help="values merged over every file (tests inject here)")
    parser.add_argument("--no-scan", action="store_true", help="lint, render and validate only")
    args = parser.parse_args()
    override = json.loads(args.set_json)
    report: dict[str, Any] = {
        "helm": helm.helm_sdk_version(), "kube_versions": list(KUBE_VERSIONS), "sets": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.values:
            values = merge(yaml.safe_load(path.read_text()) or {}, override)
            lint = helm.lint(str(args.chart), values, strict=True, kube_version=f"v{KUBE_VERSIONS[0]}.0")
            # Messages carry Helm's severity (1 info, 2 warning, 3 error); errors stand alone.
            messages = lint["messages"] + [{"error": e} for e in lint.get("errors", [])]
            entry: dict[str, Any] = {"lint": messages}
            try:
                objects = render(args.chart, values)
            except helm.HelmError as exc:
                entry["render_error"] = str(exc)
                report["sets"][path.stem] = entry
                continue
            folder = Path(tmp, path.stem)
            folder.mkdir()
            for i, obj in enumerate(objects):
                (folder / f"{i:02d}-{obj['kind']}.yaml").write_text(yaml.safe_dump(obj))
            entry["objects"] = [
                {"kind": obj["kind"], "name": obj["metadata"]["name"], "errors": validate(obj), "object": obj}
                for obj in objects
            ]
            report["sets"][path.stem] = entry
        report["policy"] = None if args.no_scan else scan(Path(tmp))
    json.dump(report, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
