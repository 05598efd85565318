"""
Hook overhead per tool call on the allow path: the same Haystack agent with and without
CallgateHook, against a local `callgate serve` (SQLite, 127.0.0.1). DESIGN §7 target: p50 ≤ 1 ms.

Each agent run makes STEPS steps of one allowed tool call (a no-op local tool) driven by a
scripted chat generator, so the model costs nothing and the figures are the agent's own. Two
measurements:

- per step (one tool call): the wall time from one chat-generator call to the next, with and
  without the hook; overhead = the difference of the percentiles;
- inside the hook: the time spent in the hook's before_tool and after_tool for each call (the
  decision request, waiting for the previous outcome to be sent, message rewriting).

Beside the wall times, CPU time per tool call: this process's (the agent, Haystack and the hook's
client side) with and without the hook, and the server process's (read from ``/proc``, Linux
only). CPU time is what a loaded machine inflates least, so it shows where the time goes when the
wall times are dominated by waiting for a core.

With ``--model-ms N`` the scripted model takes N ms per reply, as a real one takes far longer:
the hook's outcome records, sent in the background, then overlap the model's time instead of
adding to the step (with 0, the default, every request is on the step's path: the worst case).

The hook's figures are taken on a warm server (after ``--warmup`` calls, default 1,000), the
real case of a long-running server; those of its first ``--calls`` calls (cold) are printed too.

With ``--socket`` the server listens on a Unix-domain socket (``callgate serve --socket``) and
the hook connects there, instead of TCP on 127.0.0.1.

Usage: python bench/hook_overhead.py [--calls 2000] [--warmup 1000] [--model-ms 0] [--socket] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
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
STEPS = 20


@component
class Steps:
    """Replies with STEPS tool calls, one per step, then a final answer; notes when each call came."""

    def __init__(self, model_ms: float = 0.0) -> None:
        self.stamps: list[float] = []
        self.count = 0
        self.model_seconds = model_ms / 1000.0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.stamps.append(time.perf_counter())
        self.count += 1
        if self.model_seconds:
            time.sleep(self.model_seconds)
        if self.count % (STEPS + 1) == 0:
            return {"replies": [ChatMessage.from_assistant("done")]}
        call = ToolCall(tool_name="lookup", arguments={"key": f"k{self.count}"}, id=f"call-{self.count}")
        return {"replies": [ChatMessage.from_assistant(tool_calls=[call])]}


def lookup(key: str) -> str:
    """Look a key up."""
    return key


class TimedHook:
    """Wraps a hook and measures each call of it."""

    allowed_hook_points = ("before_tool", "after_tool", "after_run")

    def __init__(self, hook: Any) -> None:
        self.hook = hook
        self.spent: list[float] = []

    def run(self, state: Any) -> None:
        started = time.perf_counter()
        self.hook.run(state)
        self.spent.append(time.perf_counter() - started)

    def warm_up(self) -> None:
        self.hook.warm_up()


def step_times(generator: Steps) -> list[float]:
    """Wall time of each tool-call step (ms): from a chat-generator call to the next of the same run."""
    times = []
    for index in range(1, len(generator.stamps)):
        if index % (STEPS + 1) != 0:  # the next run's first call is not a step of this one
            times.append((generator.stamps[index] - generator.stamps[index - 1]) * 1000.0)
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run(agent: Agent, runs: int) -> None:
    for _ in range(runs):
        agent.run([ChatMessage.from_user("go")])


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (``/proc/<pid>/stat``), None where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per_call(started: tuple[float, float | None], pid: int, calls: int) -> dict[str, float | None]:
    """CPU ms per call of this process and of the server since ``started`` (their CPU seconds then)."""
    here = (time.process_time() - started[0]) * 1000.0 / calls
    server_now = process_cpu_seconds(pid)
    server = None if server_now is None or started[1] is None else (server_now - started[1]) * 1000.0 / calls
    return {"client_ms": round(here, 4), "server_ms": None if server is None else round(server, 4)}


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 0.50), 4),
        "p99_ms": round(percentile(values, 0.99), 4),
        "mean_ms": round(statistics.fmean(values), 4),
    }


def measure(server: CallgateServer, key: str, calls: int, warmup: int, model_ms: float = 0.0) -> dict[str, Any]:
    """
    The figures with and without the hook. The hook's figures are taken twice: ``cold``, the
    first ``calls`` calls a freshly started server answers, and ``warm``, ``calls`` calls after
    ``warmup`` more (a long-running server is the real case: V8 optimises the server's code over
    its first few thousand requests). The headline figures (``with_hook``, ``inside_hook``,
    ``overhead``, ``cpu_per_call``) are the warm ones.
    """
    runs = max(1, calls // STEPS)
    tool = create_tool_from_function(lookup)

    plain_generator = Steps(model_ms)
    plain = Agent(chat_generator=plain_generator, tools=[tool], max_agent_steps=STEPS + 2)
    run(plain, 5)  # warm-up
    plain_generator.stamps.clear()
    plain_generator.count = 0
    gc.collect()
    pid = server.process.pid if server.process is not None else -1
    started = (time.process_time(), process_cpu_seconds(pid))
    run(plain, runs)
    plain_cpu = cpu_per_call(started, pid, runs * STEPS)
    without = step_times(plain_generator)

    hook = CallgateHook(url=server.url, api_key=Secret.from_token(key))
    timed_before, timed_after = TimedHook(hook.point("before_tool")), TimedHook(hook.point("after_tool"))
    gated_generator = Steps(model_ms)
    gated = Agent(
        chat_generator=gated_generator,
        tools=[tool],
        max_agent_steps=STEPS + 2,
        hooks={"before_tool": [timed_before], "after_tool": [timed_after]},
    )

    def measured() -> dict[str, Any]:
        hook.flush()
        gated_generator.stamps.clear()
        gated_generator.count = 0
        timed_before.spent.clear()
        timed_after.spent.clear()
        gc.collect()
        started = (time.process_time(), process_cpu_seconds(pid))
        run(gated, runs)
        hook.flush()
        cpu = cpu_per_call(started, pid, runs * STEPS)
        inside = [(b + a) * 1000.0 for b, a in zip(timed_before.spent, timed_after.spent, strict=False)]
        steps = step_times(gated_generator)
        return {
            "with_hook": summary(steps),
            "inside_hook": summary(inside),
            "cpu_per_call": cpu,
            "overhead_p50_ms": round(percentile(steps, 0.5) - percentile(without, 0.5), 4),
        }

    run(gated, 5)  # warm-up of this process: connections, tool specs, run state
    cold = measured()
    run(gated, -(-warmup // STEPS))  # the declared warm-up of the server
    warm = measured()
    hook.close()

    result = {
        "calls": runs * STEPS,
        "warmup_calls": -(-warmup // STEPS) * STEPS,
        "model_ms": model_ms,
        "without_hook": summary(without),
        "with_hook": warm["with_hook"],
        "inside_hook": warm["inside_hook"],
        "cpu_per_call": {"without_hook": plain_cpu, "with_hook": warm["cpu_per_call"]},
        "cold": cold,
    }
    result["overhead"] = {
        "p50_ms": round(result["with_hook"]["p50_ms"] - result["without_hook"]["p50_ms"], 4),
        "p99_ms": round(result["with_hook"]["p99_ms"] - result["without_hook"]["p99_ms"], 4),
    }
    return result


def request_latencies(server: CallgateServer, key: str, count: int = 500) -> dict[str, dict[str, float]]:
    """
    The server's answer time for the one request the hook makes per allowed call: a decisions
    request that consumes the call's grant and carries the previous call's outcome (this
    package's client; run after :func:`measure`, which registered the tool).
    """
    client = server.client(key)
    run_id = client.start_run("bench")["run_id"]
    timings: dict[str, list[float]] = {"decide+consume+outcome": []}
    previous: list[dict[str, Any]] = []
    for index in range(count):
        started = time.perf_counter()
        answer = client.decide_step(
            run_id, [{"id": f"r{index}", "tool": "lookup", "arguments": {"key": "k"}}], consume=True, outcomes=previous
        )
        timings["decide+consume+outcome"].append((time.perf_counter() - started) * 1000.0)
        assert answer.verdicts[0].grant_consumed
        previous = [{"call_id": f"r{index}", "outcome": "ok", "result": "k", "grant_consumed": True}]
    client.end_run(run_id, outcomes=previous)
    client.close()
    return {
        name: {"p50_ms": round(percentile(values, 0.5), 4), "p99_ms": round(percentile(values, 0.99), 4)}
        for name, values in timings.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--calls", type=int, default=2000, help="tool calls measured per configuration")
    parser.add_argument(
        "--warmup", type=int, default=1000, help="hooked calls between the cold and the warm measurement"
    )
    parser.add_argument("--model-ms", type=float, default=0.0, help="time the scripted model takes per reply")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--socket", action="store_true", help="serve on a Unix-domain socket (callgate serve --socket), not TCP"
    )
    options = parser.parse_args()
    load = os.getloadavg()[0]
    with CallgateServer.start(policy=POLICY, **({"socket": True} if options.socket else {})) as server:
        key = server.create_key("agent", "bench")
        result = measure(server, key, options.calls, options.warmup, options.model_ms)
        result["requests"] = request_latencies(server, key)
    result["load"] = [round(load, 2), round(os.getloadavg()[0], 2)]
    print(
        f"Haystack hook overhead per tool call, allow path, {result['calls']} calls, local server (SQLite, "
        f"{'Unix-domain socket' if options.socket else 'TCP 127.0.0.1'}), "
        f"model {options.model_ms:g} ms per reply, load {result['load'][0]}–{result['load'][1]}"
    )
    print(
        f"warm server: measured after {result['calls']} cold calls and a warm-up of {result['warmup_calls']} "
        "more (the cold figures follow)"
    )
    print(f"{'':24}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}")
    for label, key_name in (
        ("step without hook", "without_hook"),
        ("step with hook", "with_hook"),
        ("time inside the hook", "inside_hook"),
    ):
        figures = result[key_name]
        print(f"{label:24}{figures['p50_ms']:>10.3f}{figures['p99_ms']:>10.3f}{figures['mean_ms']:>10.3f}")
    print(f"{'overhead (difference)':24}{result['overhead']['p50_ms']:>10.3f}{result['overhead']['p99_ms']:>10.3f}")
    print("target (DESIGN §7): hook overhead p50 ≤ 1 ms")
    cpu = result["cpu_per_call"]
    print(
        f"CPU per call: agent process {cpu['without_hook']['client_ms']:.3f} ms without the hook, "
        f"{cpu['with_hook']['client_ms']:.3f} ms with it; server {cpu['with_hook']['server_ms']} ms"
    )
    cold = result["cold"]
    print(
        f"cold server (its first {result['calls']} calls): step with hook {cold['with_hook']['p50_ms']:.3f} ms p50, "
        f"inside the hook {cold['inside_hook']['p50_ms']:.3f}, overhead {cold['overhead_p50_ms']:.3f}; "
        f"CPU per call: agent {cold['cpu_per_call']['client_ms']:.3f} ms, server {cold['cpu_per_call']['server_ms']} ms"
    )
    print("the server's answer time for the one request per allowed call (decide with consume, carrying the")
    print("previous call's outcome):")
    for name, figures in result["requests"].items():
        print(f"  {name:22}{figures['p50_ms']:>10.3f}{figures['p99_ms']:>10.3f}")
    result["transport"] = "unix" if options.socket else "tcp"
    if options.json:
        options.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
