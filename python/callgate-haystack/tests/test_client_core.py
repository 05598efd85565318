"""
The clients' shared core, without a server: every operation of the API exists once
(``operations``) and both clients expose each as a method with the same signature (the async one
as a coroutine); answers are read the same way for both (``read_answer``); bodies round-trip
through the one codec.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from haystack_integrations.common.callgate import operations
from haystack_integrations.common.callgate.api import Call, read_answer
from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient, ServerUnreachable
from haystack_integrations.common.callgate.codec import decode_body, encode_body
from haystack_integrations.common.callgate.errors import GrantInvalid, InternalError, Unauthorized

OPERATIONS = {
    name: function
    for name, function in vars(operations).items()
    if inspect.isfunction(function) and not name.startswith("_") and function.__module__ == operations.__name__
}


def test_every_operation_is_a_method_of_both_clients_with_its_signature() -> None:
    assert len(OPERATIONS) >= 19
    for name, operation in OPERATIONS.items():
        sync_method, async_method = getattr(CallgateClient, name), getattr(AsyncCallgateClient, name)
        assert not inspect.iscoroutinefunction(sync_method), name
        assert inspect.iscoroutinefunction(async_method), name
        assert inspect.signature(sync_method) == inspect.signature(operation), name
        assert inspect.signature(async_method) == inspect.signature(operation), name
        assert sync_method.__doc__ == async_method.__doc__ == operation.__doc__, name


def test_both_clients_send_the_same_request_and_read_the_same_value() -> None:
    sent: list[Any] = []
    answer = {
        "verdicts": [{"call_id": "c1", "status": "allowed", "grant_consumed": True}],
        "outcomes": [{"call_id": "c0", "outcome": "ok"}],
    }

    class Sync(CallgateClient):
        def _send(self, request: Any) -> Any:
            sent.append(request)
            return answer

    class Async(AsyncCallgateClient):
        async def _send(self, request: Any) -> Any:
            sent.append(request)
            return answer

    outcomes = [{"call_id": "c0", "outcome": "ok"}]
    calls = [{"id": "c1", "tool": "t", "arguments": {}}]
    step = Sync(url="http://127.0.0.1:1").decide_step("r1", calls, consume=True, outcomes=outcomes)
    async_step = asyncio.run(Async(url="http://127.0.0.1:1").decide_step("r1", calls, consume=True, outcomes=outcomes))
    assert sent[0] == sent[1]
    assert sent[0].path == "/v1/runs/r1/decisions"
    assert sent[0].body == {"calls": calls, "consume": True, "outcomes": outcomes}
    assert step == async_step
    assert step.verdicts[0].grant_consumed is True and step.outcomes == outcomes


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_proxy_answer_means_unreachable(status: int) -> None:
    with pytest.raises(ServerUnreachable, match=str(status)):
        read_answer(status, "Bad Gateway", b"<html>")


def test_an_error_answer_raises_the_class_of_its_kind() -> None:
    with pytest.raises(Unauthorized) as raised:
        read_answer(401, "Unauthorized", b'{"error":{"kind":"unauthorized","message":"bad key"}}')
    assert raised.value.status == 401
    with pytest.raises(GrantInvalid):
        read_answer(409, "Conflict", b'{"error":{"kind":"grant-invalid","message":"spent","call_id":"c"}}')
    with pytest.raises(InternalError, match="without an error body: not json"):
        read_answer(400, "Bad Request", b"not json")


def test_a_long_poll_adds_its_wait_to_the_time_out() -> None:
    call: Call[Any] = operations.get_approval("ap-1", wait=90)
    assert call.request.params == {"wait": "60"} and call.request.extra_timeout == 60.0
    assert operations.get_approval("ap-1").request.params is None


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


def _same_json(read: Any, sent: Any) -> bool:
    """Equal as JSON values: a float written as JavaScript writes it (1e16 as 10000000000000000) reads back an int."""
    if isinstance(sent, float) and isinstance(read, int) and not isinstance(read, bool):
        return float(read) == sent
    if isinstance(sent, dict) and isinstance(read, dict):
        return sent.keys() == read.keys() and all(_same_json(read[key], sent[key]) for key in sent)
    if isinstance(sent, list) and isinstance(read, list):
        return len(sent) == len(read) and all(_same_json(a, b) for a, b in zip(read, sent, strict=True))
    return type(read) is type(sent) and read == sent


@given(json_values)
def test_bodies_round_trip_through_the_codec(value: Any) -> None:
    encoded = encode_body(value)
    assert _same_json(decode_body(encoded), value)
    assert _same_json(json.loads(encoded.decode("utf-8")), value)


def test_the_codec_refuses_what_json_cannot_carry() -> None:
    # NaN is never sent as is: the value holding it becomes its callgate-normalize/1 marker (lossless_json).
    assert json.loads(encode_body({"x": float("nan")}))["x"]["$callgate"] == "normalized"
    assert decode_body(b"") is None
    assert decode_body(b"\xff oops") == "\ufffd oops"
