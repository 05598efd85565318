"""
Generated whole runs (hypothesis) through a real Haystack ``Agent`` (its ``ToolInvoker``, a
scripted chat generator) with ``CallgateHook``, against one real ``callgate serve`` for the
module, with reviewers answering through the API as each generated call says.

The runs are drawn from the same vocabulary as every other integration of the generated harness,
turned into model calls by it, and checked by it (``test/conformance/generated/check-service.ts``,
one Node process for the module): no refused call's side effect happened, the next model request
holds exactly one result per call, every decided attempt has exactly one ``call-end``, and the
exported bundle verifies ``--strict`` against the log key pinned at the server's start.

What Haystack cannot carry is played as its nearest expressible form, counted by reason:
arguments that are not JSON (a chat generator parses arguments into a dict and drops a call whose
text does not parse, so no hook ever sees it) are played as an object.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections import Counter as Tally
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.tools import Tool
from haystack.utils import Secret
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from support import check_history, user

from haystack_integrations.common.callgate.client import CallgateClient
from haystack_integrations.common.callgate.errors import CallgateError
from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.hooks.callgate import CallgateHook

REPOSITORY = Path(__file__).resolve().parents[3]
NODE22 = REPOSITORY / "tools" / "node22" / "node_modules" / "node" / "bin" / "node"
SERVICE = REPOSITORY / "test" / "conformance" / "generated" / "check-service.ts"
RUNS = int(os.environ.get("CALLGATE_FUZZ_RUNS", "300"))
#: CALLGATE_FUZZ_SEED draws another sequence of runs (as the TypeScript harnesses' seed does), so a
#: long pass can be split into shards that run side by side; unset, the quick pass is reproducible.
SEED = os.environ.get("CALLGATE_FUZZ_SEED")
#: A fuzz pass (CALLGATE_FUZZ_RUNS set) prints its count every CALLGATE_FUZZ_PROGRESS runs.
PROGRESS = int(os.environ.get("CALLGATE_FUZZ_PROGRESS", "250")) if "CALLGATE_FUZZ_RUNS" in os.environ else 0


class Harness:
    """The generated harness's check service: one Node process, one JSON request and answer a line."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [str(NODE22), "--experimental-transform-types", "--no-warnings", str(SERVICE)],
            cwd=REPOSITORY,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="surrogatepass",
        )
        self.lock = threading.Lock()

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            assert self.process.stdin and self.process.stdout
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(10)


class World:
    """The module's server, keys, pinned log key and check service."""

    def __init__(self, harness: Harness, server: CallgateServer, tools: list[dict[str, Any]]) -> None:
        self.harness = harness
        self.tools = tools
        self.server = server
        self.agent_key = server.create_key("agent", "generated-agent")
        self.reviewer = server.client(server.create_key("reviewer", "generated-reviewer"))
        self.admin_key = server.create_key("admin", "generated-admin")
        self.log_key = httpx.get(f"{server.url}/v1/health", timeout=5).json()["log_key"]
        self.rewrites: Tally[str] = Tally()
        self.tally: Tally[str] = Tally()


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    harness = Harness()
    vocabulary = harness.ask({"op": "vocabulary"})
    server = CallgateServer.start(policy=vocabulary["policy"])
    try:
        yield World(harness, server, vocabulary["tools"])
    finally:
        server.close()
        harness.close()


#: Haystack cannot carry: (reason, the generated field and value, the value played instead).
HAYSTACK_CANNOT = [
    (
        "arguments that are not JSON: a chat generator drops the call before any hook sees it",
        "arguments",
        "invalid-text",
        "object",
    ),
]


def _expressible(world: World, run: dict[str, Any]) -> dict[str, Any]:
    steps = []
    for step in run["steps"]:
        calls = []
        for call in step:
            for reason, field, value, instead in HAYSTACK_CANNOT:
                if call[field] == value:
                    world.rewrites[reason] += 1
                    call = {**call, field: instead}
            calls.append(call)
        steps.append(calls)
    return {"steps": steps}


def _loads(text: str) -> Any:
    """JSON text as Python reads it: big integers exact, NaN/Infinity tokens as floats, lone surrogates kept."""
    return json.loads(text)


@component
class GeneratedChatGenerator:
    """Plays the model's steps; records the tool results each next request holds (one list per step)."""

    def __init__(self, steps: list[list[dict[str, Any]]]) -> None:
        self.steps = steps
        self.next = 0
        self.seen = 0
        self.results: list[list[dict[str, str]]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        if self.next > 0:
            # The step's results are every tool result since the previous request: Haystack puts a
            # refused call with its result in an assistant message of its own.
            check_history(messages)
            self.results.append(
                [
                    {"call_id": str(message.tool_call_result.origin.id)}
                    for message in messages[self.seen :]
                    if message.role == ChatRole.TOOL and message.tool_call_result
                ]
            )
        self.seen = len(messages)
        if self.next >= len(self.steps):
            self.next += 1
            return {"replies": [ChatMessage.from_assistant("done")]}
        calls = [
            ToolCall(tool_name=call["tool"], arguments=_loads(call["text"]) if call["text"] else {}, id=call["id"])
            for call in self.steps[self.next]
        ]
        self.next += 1
        return {"replies": [ChatMessage.from_assistant(tool_calls=calls)]}


class Reviewers:
    """People at the approvals inbox, answering each pending approval as its generated call says."""

    def __init__(self, client: CallgateClient, acts: dict[str, str]) -> None:
        self.client = client
        self.acts = acts
        self.seen: dict[str, dict[str, Any]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.errors: list[str] = []

    def __enter__(self) -> Reviewers:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(5)

    def _loop(self) -> None:
        while not self.stop.is_set():
            for approval in self.client.list_approvals(status="pending"):
                if approval["id"] in self.seen:
                    continue
                self.seen[approval["id"]] = approval
                act = self.acts.get(approval["call_id"], "none")
                try:
                    if act in ("approve", "twice"):
                        self.client.approve(approval["id"], reason="looks right")
                    elif act == "deny":
                        self.client.deny(approval["id"], reason="no")
                    elif act == "edit":
                        edited = {**(approval.get("arguments") or {}), "amount": 1}
                        self.client.approve(approval["id"], arguments=edited)
                    if act == "twice":
                        self._expect_conflict(
                            lambda a=approval: self.client.deny(a["id"], reason="again"), f"twice {approval}"
                        )
                except CallgateError as error:
                    if error.kind != "conflict":  # an answer after the hook gave up is a conflict
                        self.errors.append(f"{act} answer of {approval['id']}: {error}")
            self.stop.wait(0.01)

    def _expect_conflict(self, answer: Any, what: str) -> None:
        try:
            state = answer()
        except CallgateError as error:
            if error.kind != "conflict":
                self.errors.append(f"{what}: a second answer was {error.kind}, not a conflict")
            return
        self.errors.append(f"{what}: a second answer was accepted: {state}")

    def answer_late(self) -> None:
        """Answers, after the hook gave up, every approval whose reviewer was late: each is refused."""
        for approval in self.seen.values():
            if self.acts.get(approval["call_id"]) == "late":
                self._expect_conflict(
                    lambda a=approval: self.client.approve(a["id"], reason="late"), f"late {approval}"
                )


def _tools(world: World, steps: list[list[dict[str, Any]]], executed: list[str]) -> list[Tool]:
    by_index = {call["index"]: call for step in steps for call in step}

    def run(arguments: dict[str, Any]) -> Any:
        executed.append(json.dumps(arguments))
        index = -1
        for value in arguments.values():
            if isinstance(value, str) and value.rsplit("-", 1)[-1].rsplit("/", 1)[-1].isdigit():
                index = int(value.rsplit("-", 1)[-1].rsplit("/", 1)[-1])
        call = by_index.get(index, {"act": "succeed", "result": '{"done":0}'})
        if call["act"] == "throw":
            raise RuntimeError("the tool failed")
        if call["act"] == "hang":
            time.sleep(0.001)
            raise TimeoutError("the tool hung and was given up on")
        return _loads(call["result"])

    def read_note(key: str) -> Any:
        return run({"key": key})

    def pay(to: str, amount: float) -> Any:
        return run({"to": to, "amount": amount})

    def wipe(path: str) -> Any:
        return run({"path": path})

    functions = {"read_note": read_note, "pay": pay, "wipe": wipe}
    return [
        Tool(
            name=spec["name"],
            description=spec["name"],
            parameters=spec["inputSchema"],
            function=functions[spec["name"]],
        )
        for spec in world.tools
    ]


def run_through_haystack(world: World, run: dict[str, Any]) -> None:
    run = _expressible(world, run)
    steps = world.harness.ask({"op": "steps", "run": run})["steps"]
    executed: list[str] = []
    generator = GeneratedChatGenerator(steps)
    hook = CallgateHook(url=world.server.url, api_key=Secret.from_token(world.agent_key), max_wait=0.1)
    agent = Agent(
        chat_generator=generator,
        tools=_tools(world, steps, executed),
        hooks={"before_tool": [hook], "after_tool": [hook], "after_run": [hook]},
        max_agent_steps=len(steps) + 2,
    )
    acts = {call["id"]: call["reviewer"] for step in steps for call in step if call["id"]}
    context: dict[str, Any] = {"generated": True}
    with Reviewers(world.reviewer, acts) as reviewers:
        agent.run([user("go")], hook_context=context)
    hook.close()
    # A run whose call still waits for an approval stays open for a resume; this app never
    # resumes, so it ends the run (its approvals are withdrawn). A late answer comes after that.
    if context.get("callgate_pending_approvals"):
        world.server.client(world.agent_key).end_run(context["callgate_run_id"], "cancelled")
    reviewers.answer_late()
    assert not reviewers.errors, reviewers.errors
    bundle = httpx.get(
        f"{world.server.url}/v1/runs/{context['callgate_run_id']}/bundle",
        headers={"authorization": f"Bearer {world.admin_key}"},
        timeout=15,
    ).json()
    verdict = world.harness.ask(
        {
            "op": "check",
            "run": run,
            "results": generator.results,
            "executed": executed,
            "bundle": bundle,
            "publicKey": world.log_key,
        }
    )
    world.tally["runs"] += 1
    world.tally["calls"] += sum(len(step) for step in steps)
    world.tally["ran"] += len(executed)
    assert verdict["ok"], verdict["violation"]
    if PROGRESS and world.tally["runs"] % PROGRESS == 0:
        # A long pass cut short still reports how far it got (as the TypeScript harnesses do).
        print(f"haystack{'' if SEED is None else f' (seed {SEED})'}: {world.tally['runs']} runs", flush=True)


def _strategies(world: World) -> st.SearchStrategy[dict[str, Any]]:
    vocabulary = world.harness.ask({"op": "vocabulary"})["vocabulary"]
    call = st.fixed_dictionaries({field: st.sampled_from(values) for field, values in vocabulary.items()})
    return st.fixed_dictionaries({"steps": st.lists(st.lists(call, min_size=1, max_size=6), min_size=1, max_size=4)})


def test_counterexamples_hold_the_invariants_of_the_record(world: World) -> None:
    vocabulary = world.harness.ask({"op": "vocabulary"})
    for run in vocabulary["counterexamples"]:
        run_through_haystack(world, run)


def test_generated_runs_hold_the_invariants_of_the_record(world: World) -> None:
    started = time.monotonic()

    @settings(
        max_examples=RUNS,
        deadline=None,
        derandomize=SEED is None,
        database=None,
        suppress_health_check=list(HealthCheck),
        # Shrinking replays whole runs against the server: CALLGATE_FUZZ_SHRINK=0 reports the first failure as is.
        phases=[Phase.explicit, Phase.generate]
        if os.environ.get("CALLGATE_FUZZ_SHRINK") == "0"
        else [Phase.explicit, Phase.generate, Phase.shrink],
    )
    @given(run=_strategies(world))
    def generated(run: dict[str, Any]) -> None:
        run_through_haystack(world, run)

    if SEED is not None:
        generated = seed(int(SEED))(generated)

    generated()
    rewrites = "; ".join(f"{count} × {reason}" for reason, count in world.rewrites.items()) or "none"
    print(
        f"haystack{'' if SEED is None else f' (seed {SEED})'}: {world.tally['runs']} runs, {world.tally['calls']} calls ({world.tally['ran']} ran), "
        f"{time.monotonic() - started:.0f} s; played as their nearest expressible form: {rewrites}"
    )
    assert world.tally["runs"] >= RUNS
