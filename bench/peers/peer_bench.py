"""
The same scripted Haystack agent with no hook, with callgate's hook and with the closest Python
peer's hook (tracekit-ai 1.4.2, its own signer), side by side and interleaved on one machine.

Each configuration runs RUNS agent runs of STEPS steps; a step's scripted model asks for one
allowed call (``single``) or five at once (``parallel``, which Haystack runs on its threads), and
the tool is a no-op, so the figures are the hooks' own. A step's time is the wall time from one
chat-generator call to the next; the first step of each run is left out (it includes the run's
registration, which the peer does before ``Agent.run``). Per-call overhead = (median step with a
hook − median step without) ÷ calls per step; ratio = callgate's overhead ÷ the peer's.

CPU per call: the benchmark's own process (the agent, Haystack and the hook's client side) plus
the system's server process (``callgate serve`` / the tracekit signer, read from ``/proc``,
Linux only) over every call of the runs, less the agent's own CPU per call without a hook. Wall
times on a loaded machine are mostly waiting for a core; CPU time is what load inflates least,
so its ratio is printed beside the wall one.

Durability: ``default`` is callgate ``--synchronous NORMAL`` against tracekit ``ack-on-write``;
``strongest`` is ``--synchronous FULL`` against ``ack-on-fsync``. Rounds interleave every
configuration, so load hits all alike; the load average (1 min) is printed beside each round.

Usage (from bench/peers/run.sh, which builds the venv): python peer_bench.py [--rounds 5] [--runs 8]
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
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import create_tool_from_function
from haystack.utils import Secret

from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.hooks.callgate import CallgateHook

POLICY = """
version: 1
default: deny
rules:
  - id: bench
    match: { tools: [lookup] }
    effect: allow
"""
STEPS = 10


def lookup(key: str) -> str:
    """Look a key up."""
    return key


@component
class Steps:
    """Replies with STEPS steps of `width` tool calls each, then a final answer; notes when each reply was asked for."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.stamps: list[float] = []
        self.count = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.stamps.append(time.perf_counter())
        self.count += 1
        if len(self.stamps) > STEPS:
            return {"replies": [ChatMessage.from_assistant("done")]}
        calls = [
            ToolCall(tool_name="lookup", arguments={"key": f"k{index}"}, id=f"s{self.count}-{index}-{time.monotonic_ns()}")
            for index in range(self.width)
        ]
        return {"replies": [ChatMessage.from_assistant(tool_calls=calls)]}


class Peer:
    """A tracekit signer (``tracekit signer serve --config``) on a Unix socket, with the given durability."""

    def __init__(self, durability: str) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="callgate-peer-")
        root = Path(self.folder.name)
        self.socket = str(root / "signer.sock")
        (root / "signer.yaml").write_text(
            # The signer's default event quota (200/s, burst 400) is below a benchmark's rate: lift it.
            f"data_dir: {root / 'data'}\nsocket: {self.socket}\ndurability: {durability}\n"
            "limits: {events_per_s: 1000000, burst: 1000000}\n",
            encoding="utf-8",
        )
        tracekit = Path(sys.executable).with_name("tracekit")
        self.log = (root / "signer.log").open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            [str(tracekit), "signer", "serve", "--config", str(root / "signer.yaml")],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while not os.path.exists(self.socket):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the tracekit signer did not start: {(root / 'signer.log').read_text()}")
            time.sleep(0.05)
        from tracekit.sdk.client import Client

        self.client = Client(signer=self.socket)

    def agent_run(self, width: int) -> list[float]:
        from tracekit.integrations.haystack import Tracekit

        run = self.client.run("bench")
        hook = Tracekit(run)
        generator = Steps(width)
        agent = Agent(
            chat_generator=generator,
            tools=[create_tool_from_function(lookup)],
            hooks={"before_tool": [hook], "after_tool": [hook]},
            max_agent_steps=STEPS + 2,
        )
        agent.run([ChatMessage.from_user("go")])
        run.close()
        return step_times(generator)

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        self.folder.cleanup()


class Callgate:
    """A ``callgate serve`` with the given ``--synchronous`` mode and one hook on it."""

    def __init__(self, synchronous: str) -> None:
        self.server = CallgateServer.start(policy=POLICY, serve_arguments=["--synchronous", synchronous])
        key = self.server.create_key("agent", "bench")
        self.hook = CallgateHook(url=self.server.url, api_key=Secret.from_token(key))

    def agent_run(self, width: int) -> list[float]:
        generator = Steps(width)
        agent = Agent(
            chat_generator=generator,
            tools=[create_tool_from_function(lookup)],
            hooks={"before_tool": [self.hook], "after_tool": [self.hook], "after_run": [self.hook]},
            max_agent_steps=STEPS + 2,
        )
        agent.run([ChatMessage.from_user("go")])
        return step_times(generator)

    def stop(self) -> None:
        self.hook.close()
        self.server.close()


def process_cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid`` (``/proc/<pid>/stat``); 0 without one or where unreadable."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(run: Any, width: int, pid: int | None, cpu: dict[str, float]) -> list[float]:
    """Runs ``run(width)``, adding this process's and process ``pid``'s CPU seconds and the calls made to ``cpu``."""
    here, there = time.process_time(), process_cpu_seconds(pid)
    steps = run(width)
    cpu["seconds"] = cpu.get("seconds", 0.0) + time.process_time() - here + process_cpu_seconds(pid) - there
    cpu["calls"] = cpu.get("calls", 0.0) + STEPS * width
    return steps


def plain_run(width: int) -> list[float]:
    generator = Steps(width)
    agent = Agent(chat_generator=generator, tools=[create_tool_from_function(lookup)], max_agent_steps=STEPS + 2)
    agent.run([ChatMessage.from_user("go")])
    return step_times(generator)


def step_times(generator: Steps) -> list[float]:
    """Milliseconds of each step but the first (which holds the run's registration)."""
    stamps = generator.stamps
    return [(stamps[index] - stamps[index - 1]) * 1000.0 for index in range(2, len(stamps))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=8, help="agent runs per configuration and round")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--warmup-runs",
        type=int,
        default=1,
        help="agent runs per configuration and system before measuring (the same for callgate and the peer; "
        "1 measures servers that have just started, more measures servers that have run a while)",
    )
    options = parser.parse_args()
    if options.warmup_runs < 1:
        parser.error(f"--warmup-runs must be at least 1, got {options.warmup_runs}")

    durabilities = {"default": ("NORMAL", "ack-on-write"), "strongest": ("FULL", "ack-on-fsync")}
    widths = {"single": 1, "parallel": 5}
    systems: dict[str, dict[str, Any]] = {}
    for name, (synchronous, durability) in durabilities.items():
        systems[name] = {"callgate": Callgate(synchronous), "peer": Peer(durability)}
    times: dict[tuple[str, str, str], list[float]] = {}
    cpu: dict[tuple[str, str, str], dict[str, float]] = {}
    loads: list[float] = []
    try:
        # warm-up: connections, tool specs, imports; with --warmup-runs > 1 also the servers' hot paths
        print(f"warm-up: {options.warmup_runs} agent run(s) per configuration and system", flush=True)
        for _ in range(options.warmup_runs):
            for name in durabilities:
                for width in widths.values():
                    for system in systems[name].values():
                        system.agent_run(width)
                    plain_run(width)
        for round_number in range(options.rounds):
            load = os.getloadavg()[0]
            loads.append(round(load, 2))
            print(f"round {round_number + 1}/{options.rounds}, load {load:.2f}", flush=True)
            for name in durabilities:
                for shape, width in widths.items():
                    for _ in range(options.runs):
                        # interleaved run by run: none, callgate, peer
                        ours, theirs = systems[name]["callgate"], systems[name]["peer"]
                        for system, run, pid in (
                            ("none", plain_run, None),
                            ("callgate", ours.agent_run, ours.server.process.pid if ours.server.process else None),
                            ("peer", theirs.agent_run, theirs.process.pid),
                        ):
                            key = (name, shape, system)
                            times.setdefault(key, []).extend(timed(run, width, pid, cpu.setdefault(key, {})))
    finally:
        for pair in systems.values():
            for system in pair.values():
                system.stop()

    results: dict[str, Any] = {
        "rounds": options.rounds,
        "runs": options.runs,
        "warmup_runs": options.warmup_runs,
        "steps": STEPS,
        "load": loads,
    }
    print(
        f"\nper allowed call, overhead over no hook (median step − median step without, ÷ calls per step), "
        f"{options.rounds} interleaved rounds after {options.warmup_runs} warm-up run(s), "
        f"load {min(loads):.2f}–{max(loads):.2f}"
    )
    print(
        f"{'durability':11}{'shape':10}{'none ms/step':>14}{'callgate ms':>13}{'peer ms':>10}{'ratio':>8}"
        f"{'callgate cpu':>14}{'peer cpu':>10}{'cpu ratio':>11}"
    )
    for name in durabilities:
        for shape, width in widths.items():
            base = statistics.median(times[(name, shape, "none")])
            ours = (statistics.median(times[(name, shape, "callgate")]) - base) / width
            theirs = (statistics.median(times[(name, shape, "peer")]) - base) / width
            ratio = ours / theirs if theirs > 0 else float("nan")

            def cpu_ms(system: str, name: str = name, shape: str = shape) -> float:
                used = cpu[(name, shape, system)]
                return used["seconds"] * 1000.0 / used["calls"]

            ours_cpu, theirs_cpu = cpu_ms("callgate") - cpu_ms("none"), cpu_ms("peer") - cpu_ms("none")
            cpu_ratio = ours_cpu / theirs_cpu if theirs_cpu > 0 else float("nan")
            results[f"{name}/{shape}"] = {
                "none_step_ms": round(base, 4),
                "callgate_per_call_ms": round(ours, 4),
                "peer_per_call_ms": round(theirs, 4),
                "ratio": round(ratio, 3),
                "callgate_cpu_per_call_ms": round(ours_cpu, 4),
                "peer_cpu_per_call_ms": round(theirs_cpu, 4),
                "cpu_ratio": round(cpu_ratio, 3),
                "steps_measured": len(times[(name, shape, "callgate")]),
            }
            print(
                f"{name:11}{shape:10}{base:>14.3f}{ours:>13.3f}{theirs:>10.3f}{ratio:>8.2f}"
                f"{ours_cpu:>14.3f}{theirs_cpu:>10.3f}{cpu_ratio:>11.2f}"
            )
    print("targets (DESIGN §7): ratio ≤ 0.2 default, ≤ 0.3 strongest, single and parallel")
    if options.json:
        options.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
