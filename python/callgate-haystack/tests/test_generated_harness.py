"""
Generated whole runs (hypothesis) through a real Haystack ``Agent`` (its ``ToolInvoker``, a
scripted chat generator) with ``CallgateHook``, against one real ``callgate serve`` for the
module, with reviewers answering through the API as each generated call says.

The runs are drawn from the same vocabulary as every other integration of the generated harness,
turned into model calls by it, and checked by it (``test/conformance/generated/check-service.ts``,
one Node process for the module): no refused call's side effect happened, the next model request
holds exactly one result per call, every decided attempt has exactly one ``call-end``, and the
exported bundle verifies ``--strict`` against the log key pinned at the server's start.

A tool whose generated act is ``non-canonical`` returns a drawn value with no canonical JSON
form (NaN and infinities, integers beyond ±(2^53−1), floats at Number::toString's boundaries,
lone surrogates, nested): its ``call-end`` must say it was normalised with the reasons core's
``recordable()`` gives for the same value, and the committed value (the server keeps openings)
must be core's marker byte for byte — the client makes the marker itself for NaN/Infinity, the
server for the rest.

What Haystack cannot carry is played as its nearest expressible form, counted by reason:
arguments that are not JSON (a chat generator parses arguments into a dict and drops a call whose
text does not parse, so no hook ever sees it) are played as an object, and so are arguments
holding a decimal a float does not hold (the chat generator's ``json.loads`` has already rounded
``1000.00000000000001`` to ``1000.0`` when a hook sees the dict: the digits never reach callgate).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter as Tally
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from check_service import Harness, tagged
from generated_actors import GeneratedChatGenerator, Reviewers, loads
from haystack.components.agents import Agent
from haystack.tools import Tool
from haystack.utils import Secret
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from support import user

from haystack_integrations.common.callgate.ecmascript import dumps
from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.hooks.callgate import CallgateHook

RUNS = int(os.environ.get("CALLGATE_FUZZ_RUNS", "300"))
#: CALLGATE_FUZZ_SEED draws another sequence of runs (as the TypeScript harnesses' seed does), so a
#: long pass can be split into shards that run side by side; unset, the quick pass is reproducible.
SEED = os.environ.get("CALLGATE_FUZZ_SEED")
#: A fuzz pass (CALLGATE_FUZZ_RUNS set) prints its count every CALLGATE_FUZZ_PROGRESS runs.
PROGRESS = int(os.environ.get("CALLGATE_FUZZ_PROGRESS", "250")) if "CALLGATE_FUZZ_RUNS" in os.environ else 0


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
    # The vault keeps the committed values: the bundle's openings show what was committed.
    server = CallgateServer.start(policy=vocabulary["policy"], config="vault: true\n")
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
    (
        "a decimal a float does not hold: the chat generator's json.loads rounds it before any hook sees it",
        "arguments",
        "inexact-decimal",
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


def _tools(
    world: World,
    steps: list[list[dict[str, Any]]],
    executed: list[str],
    drawn: list[Any],
    returned: dict[int, Any],
) -> list[Tool]:
    """The generated tools; a ``non-canonical`` act returns the drawn value of its index (noted in ``returned``)."""
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
        if call["act"] == "non-canonical" and drawn and index >= 0:
            returned[index] = drawn[index % len(drawn)]
            return returned[index]
        return loads(call["result"])

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


def run_through_haystack(world: World, run: dict[str, Any], drawn: list[Any] | None = None) -> None:
    """
    Plays ``run`` through a Haystack agent and checks its record; ``drawn``: the values the
    ``non-canonical`` tool acts return (else the check service's).
    """
    run = _expressible(world, run)
    steps = world.harness.ask({"op": "steps", "run": run})["steps"]
    executed: list[str] = []
    returned: dict[int, Any] = {}
    generator = GeneratedChatGenerator(steps)
    hook = CallgateHook(url=world.server.url, api_key=Secret.from_token(world.agent_key), max_wait=0.1)
    agent = Agent(
        chat_generator=generator,
        tools=_tools(world, steps, executed, drawn or [], returned),
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
        f"{world.server.url}/v1/runs/{context['callgate_run_id']}/bundle?openings=true",
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
    _check_normalised(world, steps, bundle, returned)
    if PROGRESS and world.tally["runs"] % PROGRESS == 0:
        # A long pass cut short still reports how far it got (as the TypeScript harnesses do).
        print(f"haystack{'' if SEED is None else f' (seed {SEED})'}: {world.tally['runs']} runs", flush=True)


def _as_javascript(value: Any) -> Any:
    """``value`` as the JSON value JavaScript holds (1.0 and 1 one number, -0 as 0); dicts compare unordered."""
    return json.loads(dumps(value, ensure_ascii=True))


def _check_normalised(
    world: World, steps: list[list[dict[str, Any]]], bundle: dict[str, Any], returned: dict[int, Any]
) -> None:
    """
    Each ``call-end`` of a call whose tool returned a drawn value says what core says of that
    value: ``result_normalized`` with core's reasons (absent when core commits it as it is), and
    its committed value (the opening) is core's marker, or the value itself, byte for byte.
    """
    records = bundle["records"]
    decisions = [record for record in records if record["type"] == "call-decision"]
    calls = [call for step in steps for call in step]
    openings = {opening["commitment"]: opening["value"] for opening in bundle.get("openings", [])}
    checked: list[tuple[dict[str, Any], Any]] = []
    for position, call in enumerate(calls):
        # The n-th decision is the n-th generated call's (as the check service counts them).
        if call["index"] not in returned or position >= len(decisions):
            continue
        decision = decisions[position]
        ends = [
            record
            for record in records
            if record["type"] == "call-end"
            and record["call_id"] == decision["call_id"]
            and record["attempt"] == decision["attempt"]
            and record["outcome"] == "ok"
            and decision["tool"] == call["tool"]
        ]
        checked += [(end, returned[call["index"]]) for end in ends]
    if not checked:
        return
    world.tally["checked"] += len(checked)
    recorded = world.harness.ask({"op": "normalize", "values": [tagged(value) for _, value in checked]})["recorded"]
    for (end, value), core in zip(checked, recorded, strict=True):
        opening = openings.get(end["result_commitment"])
        where = f"call {end['call_id']} returned {value!r}"
        assert end.get("result_normalized") == (core["reasons"] or None), f"{where}: the record says {end}"
        if core["reasons"]:
            world.tally["normalised"] += 1
            assert opening == core["value"], f"{where}: committed {opening!r}, core commits {core['value']!r}"
        else:
            # Committed canonically (RFC 8785: keys sorted): the same JSON value, numbers as
            # JavaScript reads them.
            assert _as_javascript(opening) == _as_javascript(value), f"{where}: committed {opening!r}"


#: Strings with lone surrogates among them.
_texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xFFFF, exclude_categories=()), max_size=6)
#: Leaves with no canonical JSON form: NaN, infinities, integers beyond ±(2^53−1) (as int or float), lone surrogates.
_non_canonical = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 2**53, -(2**64), 1e16, 1e21, 1.5e300, "bad \udc00", "\ud800"]),
    st.integers(2**53, 2**80) | st.integers(-(2**80), -(2**53)),
    st.floats(min_value=2.0**53, allow_infinity=False).map(float.__floor__).map(float),
)
#: Any leaf, floats where Number::toString changes form among them (1e-7, 1e21, subnormals, -0).
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([1e-7, 1e-6, 9.99e20, 5e-324, -0.0, 0.1, 2.0]),
    st.floats(),
    st.integers(-(2**60), 2**60),
    _texts,
    _non_canonical,
)
_inner = st.recursive(
    _leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_texts, children, max_size=3),
    max_leaves=8,
)
#: A tool's result as Haystack carries it: an object or an array (a bare scalar reaches the hook
#: as text), most with a non-canonical leaf somewhere, keys JavaScript orders first ("0") too.
_results = st.one_of(
    st.builds(lambda inner, odd: {"value": inner, "0": odd, "": 1.5e-7}, _inner, _non_canonical),
    st.builds(lambda inner, odd: [inner, [odd]], _inner, _non_canonical),
    st.builds(lambda inner: {"value": inner}, _inner),
)


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
    @given(run=_strategies(world), drawn=st.lists(_results, min_size=1, max_size=8))
    def generated(run: dict[str, Any], drawn: list[Any]) -> None:
        run_through_haystack(world, run, drawn)

    if SEED is not None:
        generated = seed(int(SEED))(generated)

    generated()
    rewrites = "; ".join(f"{count} × {reason}" for reason, count in world.rewrites.items()) or "none"
    print(
        f"haystack{'' if SEED is None else f' (seed {SEED})'}: {world.tally['runs']} runs, "
        f"{world.tally['calls']} calls ({world.tally['ran']} ran), "
        f"{world.tally['checked']} drawn results checked against core ({world.tally['normalised']} normalised), "
        f"{time.monotonic() - started:.0f} s; played as their nearest expressible form: {rewrites}"
    )
    assert world.tally["runs"] >= RUNS
    assert world.tally["normalised"] > 0, "no drawn result was checked against core's marker"
