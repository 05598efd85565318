"""
The transport alone, TCP on 127.0.0.1 against a Unix-domain socket: this package's client
(:class:`~haystack_integrations.common.callgate.transport.KeepAliveConnections`) sending a
decisions-sized POST to a bare ``node:http`` server that answers a fixed verdict-sized JSON body,
listening on both at once. No callgate work on either side: what the socket can save per request
(round trip, client CPU, server CPU from ``/proc``, Linux only), beside the ~0.5 ms of the
server's own work per allowed call (``request_cpu.py``). The two transports alternate in rounds.

Usage: python bench/socket_transport.py [--requests 5000] [--rounds 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from haystack_integrations.common.callgate.transport import KeepAliveConnections

SERVER = """
const { createServer } = require('node:http');
const body = Buffer.from(JSON.stringify({ verdicts: [{ call_id: 'c1', decision: 'allow', rule_ids: ['bench'],
  reason: 'x'.repeat(120) }], outcomes: [] }));
const handler = (request, response) => {
  request.on('data', () => {});
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    response.end(body);
  });
};
const tcp = createServer(handler).listen(0, '127.0.0.1', () => {
  const port = tcp.address().port;
  const unix = createServer(handler).listen(process.argv[1], () => console.log(JSON.stringify({ port })));
  const stop = () => { tcp.close(); unix.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  setTimeout(stop, 600000).unref();
});
"""
BODY = json.dumps(
    {
        "calls": [{"id": "c1", "tool": "lookup", "arguments": {"key": "k"}}],
        "consume": True,
        "outcomes": [{"call_id": "c0", "outcome": "ok", "result": "k", "grant_consumed": True}],
    }
).encode()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--requests", type=int, default=5000, help="requests per round and transport")
    parser.add_argument("--rounds", type=int, default=4)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cg-transport-") as folder:
        socket_path = str(Path(folder) / "bare.sock")
        server = subprocess.Popen(["node", "-e", SERVER, socket_path], stdout=subprocess.PIPE, text=True)
        try:
            port = json.loads(server.stdout.readline() if server.stdout else "{}")["port"]
            headers = {"authorization": "Bearer " + "x" * 46, "content-type": "application/json"}
            pools = {
                "tcp": KeepAliveConnections(f"http://127.0.0.1:{port}", headers, 2.0),
                "unix": KeepAliveConnections(f"unix:{socket_path}", headers, 2.0),
            }
            figures: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in pools}
            for pool in pools.values():  # warm-up: V8 and the connections
                for _ in range(3000):
                    pool.request("POST", "/v1/runs/r/decisions", content=BODY, timeout=5.0)
            for _ in range(options.rounds):
                for name, pool in pools.items():
                    walls = []
                    server_cpu, client_cpu = cpu_seconds(server.pid), time.process_time()
                    for _ in range(options.requests):
                        started = time.perf_counter()
                        pool.request("POST", "/v1/runs/r/decisions", content=BODY, timeout=5.0)
                        walls.append(time.perf_counter() - started)
                    figures[name].append(
                        (
                            statistics.median(walls) * 1e6,
                            (time.process_time() - client_cpu) / options.requests * 1e6,
                            (cpu_seconds(server.pid) - server_cpu) / options.requests * 1e6,
                            os.getloadavg()[0],
                        )
                    )
            for pool in pools.values():
                pool.close()
        finally:
            server.terminate()
            server.wait()
    print(
        f"the transport alone, {options.requests} requests x {options.rounds} rounds per transport, alternating;"
        " µs per request: round trip p50 / client CPU / server CPU (load)"
    )
    for name, rows in figures.items():
        print(f"  {name:5}" + "".join(f"   {w:6.1f} / {c:5.1f} / {s:5.1f} ({load:.2f})" for w, c, s, load in rows))
    medians = {name: [statistics.median(row[i] for row in rows) for i in range(3)] for name, rows in figures.items()}
    for index, label in enumerate(("round trip p50", "client CPU", "server CPU")):
        tcp, unix = medians["tcp"][index], medians["unix"][index]
        print(f"  {label:15} tcp {tcp:6.1f} µs, unix {unix:6.1f} µs, unix/tcp {unix / tcp:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
