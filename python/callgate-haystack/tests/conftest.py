"""Fixtures: a real `callgate serve` process (built when missing), its API keys, and clients."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from haystack.utils import Secret

from haystack_integrations.common.callgate.client import CallgateClient
from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.hooks.callgate import CallgateHook

sys.path.insert(0, str(Path(__file__).parent))

from support import POLICY

#: The callgate checkout these tests belong to (its fixtures and scenario table are read from here).
REPOSITORY = Path(__file__).resolve().parents[3]
SCHEMAS = REPOSITORY / "test" / "fixtures" / "schemas"


@dataclass
class Live:
    """The session's server and what the tests need of it."""

    server: CallgateServer
    agent_key: str
    reviewer_key: str
    admin_key: str

    @property
    def url(self) -> str:
        return self.server.url

    def agent(self) -> CallgateClient:
        return self.server.client(self.agent_key)

    def reviewer(self) -> CallgateClient:
        return self.server.client(self.reviewer_key)

    def admin(self) -> CallgateClient:
        return self.server.client(self.admin_key)


@pytest.fixture(scope="session")
def live() -> Iterator[Live]:
    """One callgate server for the session, with the test policy and an agent, reviewer and admin key."""
    server = CallgateServer.start(policy=POLICY)
    try:
        yield Live(
            server=server,
            agent_key=server.create_key("agent", "test-agent"),
            reviewer_key=server.create_key("reviewer", "test-reviewer"),
            admin_key=server.create_key("admin", "test-admin"),
        )
    finally:
        server.close()


@pytest.fixture
def hook(live: Live) -> Iterator[CallgateHook]:
    """A hook on the session's server; closed (its runs ended) after the test."""
    gate = CallgateHook(url=live.url, api_key=_secret(live.agent_key), max_wait=None)
    yield gate
    gate.close()


def _secret(value: str) -> Secret:
    return Secret.from_token(value)


@pytest.fixture
def secret() -> Callable[[str], Secret]:
    """Makes a token ``Secret`` of an API key."""
    return _secret
