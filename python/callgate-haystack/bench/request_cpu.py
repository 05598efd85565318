"""
The server's CPU per request for the one request the Haystack hook makes per allowed call (a
decisions request that consumes the call's grant and carries the previous call's outcome), in
rounds, so that the steady state shows once V8 has compiled the hot path: user and system CPU of
the ``callgate serve`` process per request (``/proc``, Linux only), this client's CPU per request,
and the request's p50 wall time.

Usage: python bench/request_cpu.py [--requests 2000] [--rounds 6] [--socket]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from haystack_integrations.common.callgate.testing import CallgateServer

POLICY = """
version: 1
default: deny
rules:
  - id: bench
    match: { tools: [lookup] }
    effect: allow
"""
SPEC = {
    "name": "lookup",
    "description": "Look a key up.",
    "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
}


def cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of process ``pid`` so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--requests", type=int, default=2000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument(
        "--socket", action="store_true", help="serve on a Unix-domain socket (callgate serve --socket), not TCP"
    )
    options = parser.parse_args()
    count = options.requests
    with CallgateServer.start(policy=POLICY, **({"socket": True} if options.socket else {})) as server:
        if server.process is None:
            raise RuntimeError("the server did not start")
        pid = server.process.pid
        client = server.client(server.create_key("agent", "bench"))
        transport = "Unix-domain socket" if options.socket else "TCP 127.0.0.1"
        print(
            f"the one request per allowed call, {count} per round, {transport}; CPU ms per request; "
            f"load {os.getloadavg()[0]:.2f}"
        )
        print(f"{'round':>5}{'server user':>13}{'server sys':>12}{'client':>9}{'p50 ms':>9}{'load':>7}")
        for round_index in range(options.rounds):
            run_id = client.start_run("bench")["run_id"]
            previous: list[dict[str, object]] = []
            timings = []
            user, system = cpu_seconds(pid)
            started_cpu = time.process_time()
            for index in range(count):
                started = time.perf_counter()
                client.decide_step(
                    run_id,
                    [{"id": f"r{index}", "tool": "lookup", "arguments": {"key": "k"}}],
                    consume=True,
                    outcomes=previous,
                    tools=[SPEC] if index == 0 and round_index == 0 else None,
                )
                timings.append((time.perf_counter() - started) * 1000.0)
                previous = [{"call_id": f"r{index}", "outcome": "ok", "result": "k", "grant_consumed": True}]
            user_now, system_now = cpu_seconds(pid)
            client_ms = (time.process_time() - started_cpu) * 1000.0 / count
            client.end_run(run_id, outcomes=previous)
            user_ms = (user_now - user) * 1000.0 / count
            system_ms = (system_now - system) * 1000.0 / count
            print(
                f"{round_index + 1:>5}{user_ms:>13.3f}{system_ms:>12.3f}"
                f"{client_ms:>9.3f}{statistics.median(timings):>9.3f}{os.getloadavg()[0]:>7.2f}"
            )
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
