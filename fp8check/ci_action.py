"""The steps of the GitHub Action (action.yml at the repository root): `fp8check inspect` once per platform, in
this process, each report written as the command line writes it (--output; the step summary is the command line's
own), then the step's outputs and `::error` annotations for the first failing modules.

    python -m fp8check.ci_action      (inputs from the environment, as action.yml passes them: FP8CHECK_MODEL,
                                       FP8CHECK_PLATFORMS, FP8CHECK_TP, FP8CHECK_VLLM_RELEASE, FP8CHECK_FORMAT,
                                       FP8CHECK_FAIL_ON, FP8CHECK_ARGS, FP8CHECK_ANNOTATIONS, FP8CHECK_REPORT_DIR)

Outputs ($GITHUB_OUTPUT): `ok` (true when every platform passed under --fail-on) and `report` (the folder holding
one report per platform). The exit status is the worst of the command line's: 0, 1 (a module fails) or 2 (bad
input).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import xml.etree.ElementTree as ET

EXTENSIONS = {"junit": "xml", "json": "json", "markdown": "md"}
DEFAULT_ANNOTATIONS = 10  # GitHub shows at most 10 error annotations of one step


def main() -> int:
    env = os.environ
    model = env.get("FP8CHECK_MODEL", "").strip()
    fmt = env.get("FP8CHECK_FORMAT", "junit").strip() or "junit"
    limit = env.get("FP8CHECK_ANNOTATIONS", "").strip() or str(DEFAULT_ANNOTATIONS)
    platforms = [p.strip() for p in env.get("FP8CHECK_PLATFORMS", "h100").split(",") if p.strip()]
    if not model or fmt not in EXTENSIONS or not limit.isdigit() or not platforms:
        print(f"::error title=fp8check::inputs: model is required, platforms non-empty, format one of "
              f"{', '.join(EXTENSIONS)} (got {fmt!r}), annotations a number (got {limit!r})")
        return 2
    folder = env.get("FP8CHECK_REPORT_DIR", "").strip() or "fp8check-report"
    os.makedirs(folder, exist_ok=True)
    worst, failures = 0, []
    for platform in platforms:
        path = os.path.join(folder, f"{slug(platform)}.{EXTENSIONS[fmt]}")
        argv = ["inspect", model, "--platform", platform,
                "--tp", env.get("FP8CHECK_TP", "1").strip() or "1",
                "--vllm", env.get("FP8CHECK_VLLM_RELEASE", "latest").strip() or "latest",
                "--fail-on", env.get("FP8CHECK_FAIL_ON", "error").strip() or "error",
                "--format", fmt, "--output", path, *shlex.split(env.get("FP8CHECK_ARGS", ""))]
        print(f"::group::fp8check inspect {model} -p {platform}", flush=True)
        code = inspect(argv)
        print("::endgroup::", flush=True)
        worst = max(worst, code)
        failures += [(platform, name, message) for name, message in failing_modules(path, fmt)]
    annotate(model, failures, int(limit))
    write_outputs(ok=worst == 0, report=folder)
    return worst


def inspect(argv: list[str]) -> int:
    """The command line in this process (no program is run): its exit status."""
    from fp8check.cli.app import app_for

    try:
        app_for(argv)(args=argv, prog_name="fp8check")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return 0


def slug(platform: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", platform) or "platform"


def failing_modules(path: str, fmt: str) -> list[tuple[str, str]]:
    """(module, message) of each failure the report holds: JUnit's failing testcases (judged under --fail-on, as
    the command line writes them), or the JSON's errors; none for Markdown or a report that was not written."""
    if not os.path.exists(path):
        return []
    if fmt == "junit":
        return [(case.get("name", "?"), failure.get("message", ""))
                for case in ET.parse(path).getroot().iter("testcase") for failure in case.findall("failure")]
    if fmt == "json":
        with open(path, encoding="utf-8") as fh:
            document = json.load(fh)
        rows = [("model", error) for error in document.get("errors", [])]
        for kind in ("layers", "moe", "attention"):
            rows += [(row.get("name", "?"), row["errors"][0]) for row in document.get(kind) or [] if row.get("errors")]
        return rows
    return []


def annotate(model: str, failures: list[tuple[str, str, str]], limit: int) -> None:
    """`::error` for the first `limit` failures, on the checkpoint's config.json when it is a folder here."""
    config = os.path.join(model, "config.json")
    where = f"file={escape(config, True)}," if os.path.isfile(config) else ""
    for platform, name, message in failures[:limit]:
        title = escape(f"fp8check {platform}: {name}", True)
        print(f"::error {where}title={title}::{escape(message)}")
    if len(failures) > limit:
        print(f"::notice title=fp8check::{len(failures) - limit} more failing module(s); see the step summary and "
              "the report")


def escape(text: str, property_value: bool = False) -> str:
    """GitHub's workflow-command escaping of a message or (also ':' and ',') a property value."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def write_outputs(**outputs) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    lines = [f"{key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in outputs.items()]
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    else:
        print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
