"""
``callgate_toolset``: the tools of callgate's governing MCP gateway, as a Haystack toolset.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

import httpx
from haystack.core.serialization import generate_qualified_class_name
from haystack.tools import Tool
from haystack.utils import Secret, deserialize_secrets_inplace

from haystack_integrations.common.callgate.errors import GatewayConnectionError
from haystack_integrations.common.callgate.specs import mark_gateway_tool
from haystack_integrations.common.callgate.wire import API_KEY_ENV_VAR, URL_ENV_VAR, resolve_server_url
from haystack_integrations.tools.mcp import MCPConnectionError, MCPToolset, StreamableHttpServerInfo
from haystack_integrations.tools.mcp.mcp_tool import AsyncExecutor

from .payload import GatewayToolError, mcp_payload, raise_if_error, unwrap_tool_errors

_PROFILE_PATTERN = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def gateway_url(url: str | None = None, profile: str | None = "observe") -> str:
    """
    The Streamable HTTP URL of the gateway for ``profile``.

    :param url: The server's base URL or any of its ``/mcp`` URLs; ``None`` reads ``CALLGATE_URL``,
        then uses ``http://127.0.0.1:7420``.
    :param profile: A profile name (``observe``, ``govern``, ``execute``, ``full`` or your own); None
        uses the API key's default profile (``/mcp``).
    :returns: e.g. ``"http://127.0.0.1:7420/mcp/observe"``.
    :raises ValueError: For a URL that is not http(s) (a ``unix:`` socket included) or a profile
        name with other than letters, digits, ``_ . -``.
    """
    base = resolve_server_url(url)
    if base.startswith("unix:"):
        raise ValueError(
            f"the MCP toolset reaches the gateway over TCP (Streamable HTTP), not a Unix-domain socket ({base}): "
            "serve callgate on a TCP port instead (callgate serve --port 7420; a server listens on a socket or a port, "
            "not both, and a data folder has one server) and give its http:// URL here"
        )
    if profile is None:
        return f"{base}/mcp"
    if not _PROFILE_PATTERN.match(profile):
        raise ValueError(f"a profile name uses letters, digits, _ . - (at most 64), got {profile!r}")
    return f"{base}/mcp/{profile}"


def _status_codes(error: BaseException) -> set[int]:
    """HTTP statuses found in an exception, its causes and exception groups."""
    found: set[int] = set()
    stack: list[BaseException] = [error]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        response = getattr(current, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            found.add(status)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                stack.append(linked)
    return found


class CallgateToolset(MCPToolset):
    """
    mcp-haystack's ``MCPToolset`` pointed at callgate's MCP gateway and filtered to a profile.

    The gateway lists only the profile's tools (scrubbed parameters removed from their schemas)
    and gates every call: a call decided by a :class:`~haystack_integrations.hooks.callgate.CallgateHook`
    runs on that decision (the gateway consumes its grant; a person is never asked twice), any other
    call is decided at the gateway. A result reaches the model as the tool's payload: its
    structured content as JSON text, or its text (see :mod:`.payload`), not the ``CallToolResult``
    envelope. An ``isError`` result reaches it as an error result with the tool's text; for a
    refusal that text is ``{"error": {"kind", "message", ...}}``. Read either with
    :func:`~haystack_integrations.tools.callgate.extract_outcome`.

    Build it with :func:`callgate_toolset`. Serializable (``to_dict``/``from_dict``) when the API key
    is an environment-variable ``Secret``.

    :param url: See :func:`gateway_url`.
    :param profile: See :func:`gateway_url`.
    :param api_key: An API key for the gateway; by default ``CALLGATE_API_KEY``.
    :param tool_names: Only these tools of the profile (each must exist in it).
    :param connection_timeout: Seconds to wait for the connection.
    :param invocation_timeout: Seconds to wait for one call (an ask holds the call while a person answers).
    :param eager_connect: Connect now instead of at ``warm_up``.
    :raises GatewayConnectionError: When ``eager_connect`` is set and the gateway cannot be reached.
    """

    def __init__(
        self,
        url: str | None = None,
        profile: str | None = "observe",
        api_key: Secret | None = Secret.from_env_var(API_KEY_ENV_VAR),
        *,
        tool_names: list[str] | None = None,
        connection_timeout: float = 30.0,
        invocation_timeout: float = 300.0,
        eager_connect: bool = False,
    ) -> None:
        self.url = url
        self.profile = profile
        self.api_key = api_key
        self.gateway_url = gateway_url(url, profile)
        server_info = StreamableHttpServerInfo(url=self.gateway_url, token=api_key, timeout=int(connection_timeout))
        super().__init__(
            server_info=server_info,
            tool_names=tool_names,
            connection_timeout=connection_timeout,
            invocation_timeout=invocation_timeout,
            eager_connect=eager_connect,
        )

    def _probe(self) -> int | None:
        """
        The HTTP status the gateway answers an ``initialize`` with (None when it cannot be reached):
        the MCP client reports a refused key only as "an error response", so the toolset asks once
        more itself to say which.
        """
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        if self.api_key is not None:
            with contextlib.suppress(ValueError):  # no key: the probe says what the gateway thinks of that
                headers["authorization"] = f"Bearer {self.api_key.resolve_value()}"
        hello = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        }
        try:
            return httpx.post(self.gateway_url, json=hello, headers=headers, timeout=5.0).status_code
        except httpx.HTTPError:
            return None

    def _connection_error(self, error: Exception) -> GatewayConnectionError:
        statuses = _status_codes(error)
        if not statuses & {401, 403, 404}:
            probed = self._probe()
            if probed is not None:
                statuses.add(probed)
        where = f"the callgate gateway at {self.gateway_url}"
        if statuses & {401, 403}:
            message = (
                f"{where} refused the API key ({'/'.join(str(s) for s in sorted(statuses & {401, 403}))}). Check that "
                f"{API_KEY_ENV_VAR} (or api_key=) holds a live key made with `callgate keys create --role agent`."
            )
        elif 404 in statuses:
            message = (
                f"{where} has no profile {self.profile!r} (404). Check the profile name and that the server "
                "serves the MCP gateway (`callgate serve` with upstreams configured)."
            )
        else:
            message = (
                f"cannot connect to {where}. Check: 1. the URL is right ({URL_ENV_VAR} or url=); "
                "2. the server is running (`callgate serve`) and reachable; "
                f"3. the API key is right ({API_KEY_ENV_VAR} or api_key=)."
            )
        governed = GatewayConnectionError(message, details={"url": self.gateway_url})
        governed.__cause__ = error
        return governed

    def _connect_and_load_tools(self) -> list[Tool]:
        try:
            tools = super()._connect_and_load_tools()
        except MCPConnectionError as error:
            raise self._connection_error(error) from error
        client = getattr(self._worker, "_client", None)
        return [self._governed(tool, client) for tool in tools]

    def _governed(self, tool: Tool, client: Any) -> Tool:
        """The tool with a call path that keeps the gateway's refusal body intact, marked as a gateway tool."""
        if client is not None:
            tool.function = self._invoker(client, tool.name, bool(tool.outputs_to_state))
        mark_gateway_tool(tool, self.gateway_url)
        return unwrap_tool_errors(tool)

    def _invoker(self, client: Any, name: str, parse: bool) -> Any:
        timeout = self.invocation_timeout

        def invoke(**kwargs: Any) -> Any:
            session = getattr(client, "session", None)
            if session is None:
                raise GatewayToolError(f"not connected to the callgate gateway at {self.gateway_url}", name, kwargs)
            result = AsyncExecutor.get_instance().run(session.call_tool(name, kwargs), timeout=timeout)
            raise_if_error(result, name, kwargs)
            return mcp_payload(result, parse=parse)

        return invoke

    def to_dict(self) -> dict[str, Any]:
        """Serializes the toolset (the API key as its ``Secret``)."""
        return {
            "type": generate_qualified_class_name(type(self)),
            "data": {
                "url": self.url,
                "profile": self.profile,
                "api_key": self.api_key.to_dict() if self.api_key is not None else None,
                "tool_names": self.tool_names,
                "connection_timeout": self.connection_timeout,
                "invocation_timeout": self.invocation_timeout,
                "eager_connect": self.eager_connect,
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallgateToolset:
        """Deserializes the toolset."""
        inner = dict(data["data"])
        deserialize_secrets_inplace(inner, keys=["api_key"])
        return cls(**inner)


def callgate_toolset(
    url: str | None = None,
    profile: str | None = "observe",
    api_key: Secret | None = Secret.from_env_var(API_KEY_ENV_VAR),
    **kwargs: Any,
) -> CallgateToolset:
    """
    The tools of callgate's MCP gateway for one profile, as a Haystack toolset.

    Usage::

        from haystack.components.agents import Agent
        from haystack_integrations.hooks.callgate import CallgateHook
        from haystack_integrations.tools.callgate import callgate_toolset

        tools = callgate_toolset(profile="execute")          # CALLGATE_URL, CALLGATE_API_KEY
        gate = CallgateHook()
        agent = Agent(chat_generator=generator, tools=tools, hooks=gate.hooks())
        ...
        tools.close()

    :param url: The callgate server: its base URL or its ``/mcp`` URL; ``None`` reads
        ``CALLGATE_URL``, then uses ``http://127.0.0.1:7420`` (so ``http://127.0.0.1:7420/mcp``).
    :param profile: The profile whose tools to expose (``/mcp/<profile>``); None for the API key's
        default profile.
    :param api_key: The API key; by default ``CALLGATE_API_KEY``.
    :param kwargs: ``tool_names``, ``connection_timeout``, ``invocation_timeout``, ``eager_connect``
        (see :class:`CallgateToolset`).
    :returns: A :class:`CallgateToolset`; it connects at ``warm_up`` (the Agent calls it).
    :raises GatewayConnectionError: At connection, naming the URL and what to check (the URL, the
        server running, the API key).
    """
    return CallgateToolset(url=url, profile=profile, api_key=api_key, **kwargs)
