"""The orchestrator: start servers, run every job's workers interleaved, collect, report, write the JSON.

Each measurement runs in a fresh ``python -m benchmarks.worker`` process (ours, reference, raw floor, ours, ...)
so CPU and memory figures belong to one client alone. Over stdio every worker spawns its own server process;
over HTTP one server (``bench_server.py --http`` under uvicorn at 127.0.0.1) is started per job and shared by
the clients of that job. ``--quick`` runs a few iterations of everything, one worker per client and transport.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from benchmarks.clients import CLIENTS, ClientName, TransportName, http_available, server_command
from benchmarks.plan import Job, jobs_for, process_jobs, process_metrics
from benchmarks.process import import_command
from benchmarks.report import Raw, Row, derive, markdown_table, text_table

__all__ = ["main", "run"]

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "latest.json"


def log(message: str) -> None:
    """Progress goes to stderr; stdout carries only the table."""
    print(message, file=sys.stderr, flush=True)


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions: dict[str, str | None] = {}
    for package in ("mcp", "mcp-policy-client", "anyio", "httpx", "httpcore", "httpx2", "httpcore2", "mcp-types"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "load_average_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "versions": versions,
    }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def http_server() -> Iterator[str]:
    """Start the benchmark server on Streamable HTTP; yield its URL; stop it."""
    port = _free_port()
    process = subprocess.Popen(
        server_command("--http", "--port", str(port)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    _, err = process.communicate(timeout=10)
                    detail = err.decode(errors="replace")[-2000:]
                    raise RuntimeError(f"the HTTP server did not come up: {detail}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


def run_worker(
    client: ClientName, transport: TransportName, jobs: list[Job], url: str | None, timeout: float
) -> dict[str, Any]:
    """Run one worker process and return its results by job name (raises RuntimeError on failure)."""
    spec = json.dumps([[job.name, job.kind, job.params] for job in jobs])
    command = [sys.executable, "-m", "benchmarks.worker", client, transport, spec]
    if url is not None:
        command += ["--url", url]
    server_args = {arg for job in jobs for arg in job.server_args}
    command += [f"--server-arg={arg}" for arg in sorted(server_args)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    try:
        done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"{client} {transport} {[j.name for j in jobs]}: no result within {timeout:g} s") from exc
    if done.returncode != 0:
        raise RuntimeError(f"{client} {transport} {[j.name for j in jobs]} failed:\n{done.stderr[-3000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{client} {transport}: no JSON on stdout:\n{done.stdout[-1000:]}\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _short(values: dict[str, Any]) -> str:
    return ", ".join(
        f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}" for key, value in values.items()
    )


def run_transport(transport: TransportName, *, quick: bool, errors: list[str]) -> tuple[Raw, list[Job]]:
    """Every job of one transport; returns the raw results and the jobs."""
    jobs = jobs_for(transport, quick=quick)
    raw: Raw = {job.name: {} for job in jobs}
    timeout = 180.0 if quick else 420.0

    def record(client: ClientName, results: dict[str, Any]) -> None:
        for name, values in results.items():
            raw[name].setdefault(client, []).append(values)
            log(f"  [{transport}] {name:<12} {client:<9} {_short(values)}")

    def attempt(client: ClientName, batch: list[Job], url: str | None) -> None:
        try:
            record(client, run_worker(client, transport, batch, url, timeout))
        except RuntimeError as exc:
            errors.append(f"{transport}: {exc}")
            log(f"  [{transport}] ERROR {exc}")

    if quick:
        with _server_for(transport) as url:
            for client in CLIENTS:
                # One worker per client and set of server arguments (a worker's jobs share its server).
                for server_args in dict.fromkeys(job.server_args for job in jobs):
                    batch = [job for job in jobs if client in job.clients and job.server_args == server_args]
                    if batch:
                        attempt(client, batch, url)
        return raw, jobs
    for job in jobs:
        log(f"[{transport}] {job.name}: {job.reps} x {', '.join(job.clients)}")
        with _server_for(transport) as url:
            for _rep in range(job.reps):
                for client in job.clients:
                    attempt(client, [job], url)
    return raw, jobs


def _process_command(job: Job, client: ClientName) -> list[str]:
    if job.kind == "import":
        return import_command(str(job.params[client]))
    command = [sys.executable, "-m", "benchmarks.process", job.kind]
    for key, value in job.params.items():
        command += [f"--{key}", str(value)]
    return command


def run_process(*, quick: bool, errors: list[str]) -> tuple[Raw, list[Job]]:
    """The process section: every repetition of every job in a fresh interpreter, clients interleaved."""
    jobs = process_jobs(quick=quick)
    raw: Raw = {job.name: {} for job in jobs}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    for job in jobs:
        log(f"[process] {job.name}: {job.reps} x {', '.join(job.clients)}")
        for _rep in range(job.reps):
            for client in job.clients:
                command = _process_command(job, client)
                try:
                    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
                    if done.returncode != 0:
                        raise RuntimeError(f"{client} {job.name} failed:\n{done.stderr[-3000:]}")
                    values = json.loads(done.stdout.strip().splitlines()[-1])
                except (RuntimeError, ValueError, IndexError, subprocess.TimeoutExpired) as exc:
                    errors.append(f"process: {exc}")
                    log(f"  [process] ERROR {exc}")
                    continue
                raw[job.name].setdefault(client, []).append(values)
                log(f"  [process] {job.name:<12} {client:<9} {_short(values)}")
    return raw, jobs


@contextmanager
def _server_for(transport: TransportName) -> Iterator[str | None]:
    if transport == "http":
        with http_server() as url:
            yield url
    else:
        yield None


def run(*, quick: bool, only: TransportName | Literal["process"] | None, json_path: Path) -> dict[str, Any]:
    """Run the suite, print the table, write the JSON (and a Markdown table beside it); return the document."""
    started = time.monotonic()
    transports: list[TransportName] = [only] if only in ("stdio", "http") else [] if only else ["stdio", "http"]
    notes: list[str] = []
    errors: list[str] = []
    if "http" in transports and not http_available():
        note = "HTTP skipped: mcp_client.transports.http is not importable"
        notes.append(note)
        log(note)
        transports.remove("http")
    document: dict[str, Any] = {
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "mode": "quick" if quick else "full",
        "machine": machine(),
        "notes": notes,
        "errors": errors,
        "jobs": {},
        "raw": {},
        "metrics": {},
    }
    results: dict[str, dict[str, Row]] = {}
    for transport in transports:
        log(f"== {transport} ({document['mode']}) ==")
        raw, jobs = run_transport(transport, quick=quick, errors=errors)
        document["jobs"][transport] = [
            {"name": job.name, "kind": job.kind, "params": job.params, "clients": job.clients, "reps": job.reps}
            for job in jobs
        ]
        document["raw"][transport] = raw
        results[transport] = derive(transport, raw, jobs)
    if only in (None, "process"):
        log(f"== process ({document['mode']}) ==")
        raw, jobs = run_process(quick=quick, errors=errors)
        document["jobs"]["process"] = [
            {"name": job.name, "kind": job.kind, "params": job.params, "clients": job.clients, "reps": job.reps}
            for job in jobs
        ]
        document["raw"]["process"] = raw
        results["process"] = derive("process", raw, jobs, process_metrics())
    document["metrics"] = results
    document["duration_s"] = round(time.monotonic() - started, 1)
    table = text_table(results)
    print(table)
    for note in notes:
        print(f"note: {note}")
    if errors:
        print(f"{len(errors)} worker(s) failed; see 'errors' in {json_path}")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    json_path.with_suffix(".md").write_text(markdown_table(results) + "\n", encoding="utf-8")
    log(f"wrote {json_path} and {json_path.with_suffix('.md')} in {document['duration_s']} s")
    return document


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks [--quick] [--only stdio|http] [--json PATH]``."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description="mcp_client versus the reference mcp.Client, same server, same run"
    )
    parser.add_argument("--quick", action="store_true", help="a few iterations of everything (< 60 s), for CI")
    parser.add_argument(
        "--only", choices=("stdio", "http", "process"), help="measure one transport (or the process costs) only"
    )
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON, help=f"where to write the raw numbers ({DEFAULT_JSON})"
    )
    args = parser.parse_args(argv)
    document = run(quick=args.quick, only=args.only, json_path=args.json)
    return 1 if document["errors"] else 0
