"""
httpx, the standard library's ``http.client`` and this package's own keep-alive transport
(``transport.KeepAliveConnections`` on ``http1``), and httpx's asyncio client against this
package's asyncio transport (``async_transport``), side by side, for the one request the hook
makes per allowed call (``POST /v1/runs/:id/decisions`` with ``consume: true``), against a local
``callgate serve`` (SQLite, 127.0.0.1), keep-alive connections for both. Rounds interleave the
clients so machine load hits them alike; the load average is printed beside the figures. Beside
each client's wall time per request is its CPU time per request (this process only: the
client's own cost, without the server's).

Usage: python bench/http_clients.py [--requests 400] [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.common.callgate.async_transport import AsyncKeepAliveConnections
from haystack_integrations.common.callgate.transport import KeepAliveConnections

POLICY = """
version: 1
default: deny
rules:
  - id: bench
    match: { tools: [lookup] }
    effect: allow
"""
SPEC = {"name": "lookup", "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}}}


def body_of(index: int) -> bytes:
    calls = [{"id": f"c{index}", "tool": "lookup", "arguments": {"key": "k"}}]
    outcomes = [{"call_id": f"c{index - 1}", "outcome": "ok", "result": "k", "grant_consumed": True}] if index else []
    return json.dumps({"consume": True, "calls": calls, "outcomes": outcomes}).encode()


def with_httpx(url: str, key: str, run_id: str, count: int) -> list[float]:
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    times = []
    with httpx.Client(base_url=url, headers=headers) as client:
        for index in range(count):
            started = time.perf_counter()
            response = client.post(f"/v1/runs/{run_id}/decisions", content=body_of(index))
            response.json()
            times.append((time.perf_counter() - started) * 1000.0)
    return times


def with_http_client(url: str, key: str, run_id: str, count: int) -> list[float]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80)
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    times = []
    for index in range(count):
        started = time.perf_counter()
        connection.request("POST", f"/v1/runs/{run_id}/decisions", body=body_of(index), headers=headers)
        response = connection.getresponse()
        json.loads(response.read())
        times.append((time.perf_counter() - started) * 1000.0)
    connection.close()
    return times


def with_transport(url: str, key: str, run_id: str, count: int) -> list[float]:
    connections = KeepAliveConnections(url, {"authorization": f"Bearer {key}", "content-type": "application/json"}, 2.0)
    times = []
    for index in range(count):
        started = time.perf_counter()
        answer = connections.request("POST", f"/v1/runs/{run_id}/decisions", content=body_of(index), timeout=15.0)
        json.loads(answer.content)
        times.append((time.perf_counter() - started) * 1000.0)
    connections.close()
    return times


def with_httpx_async(url: str, key: str, run_id: str, count: int) -> list[float]:
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}

    async def run() -> list[float]:
        times = []
        async with httpx.AsyncClient(base_url=url, headers=headers, verify=False) as client:
            for index in range(count):
                started = time.perf_counter()
                response = await client.post(f"/v1/runs/{run_id}/decisions", content=body_of(index))
                response.json()
                times.append((time.perf_counter() - started) * 1000.0)
        return times

    return asyncio.run(run())


def with_async_transport(url: str, key: str, run_id: str, count: int) -> list[float]:
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}

    async def run() -> list[float]:
        connections = AsyncKeepAliveConnections(url, headers, 2.0)
        times = []
        for index in range(count):
            started = time.perf_counter()
            answer = await connections.request(
                "POST", f"/v1/runs/{run_id}/decisions", content=body_of(index), timeout=15.0
            )
            json.loads(answer.content)
            times.append((time.perf_counter() - started) * 1000.0)
        await connections.aclose()
        return times

    return asyncio.run(run())


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    clients = {
        "httpx": with_httpx,
        "http.client": with_http_client,
        "transport": with_transport,
        "httpx async": with_httpx_async,
        "async transport": with_async_transport,
    }
    times: dict[str, list[float]] = {name: [] for name in clients}
    cpu: dict[str, float] = dict.fromkeys(clients, 0.0)
    loads = []
    with CallgateServer.start(policy=POLICY) as server:
        key = server.create_key("agent", "bench")
        admin = server.client(key)
        first = admin.start_run("bench")["run_id"]
        admin.decide(first, [{"id": "w", "tool": "lookup", "arguments": {"key": "k"}}], tools=[SPEC])
        for _round in range(options.rounds):
            loads.append(os.getloadavg()[0])
            for name, measure in clients.items():
                run_id = admin.start_run("bench")["run_id"]
                cpu_before = time.process_time()
                measured = measure(server.url, key, run_id, options.requests)
                cpu[name] += time.process_time() - cpu_before
                times[name].extend(measured[20:])  # the first requests warm the connection up
                admin.end_run(run_id)
        admin.close()
    result: dict[str, Any] = {"requests_per_round": options.requests, "rounds": options.rounds, "load": loads}
    print(
        f"one decide-with-consume request (+ the previous outcome), {options.rounds} interleaved rounds of "
        f"{options.requests}, load {min(loads):.2f}–{max(loads):.2f}"
    )
    print(f"{'client':17}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}{'cpu ms':>10}")
    for name, values in times.items():
        figures = {
            "p50_ms": round(percentile(values, 0.5), 4),
            "p99_ms": round(percentile(values, 0.99), 4),
            "mean_ms": round(statistics.fmean(values), 4),
            "cpu_ms": round(cpu[name] * 1000.0 / (options.requests * options.rounds), 4),
        }
        result[name] = figures
        print(
            f"{name:17}{figures['p50_ms']:>10.3f}{figures['p99_ms']:>10.3f}{figures['mean_ms']:>10.3f}"
            f"{figures['cpu_ms']:>10.3f}"
        )
    if options.json:
        options.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
