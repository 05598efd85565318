"""The public surface, pinned: a change to it is deliberate."""

from __future__ import annotations

import haystack_integrations.common.callgate as common
import haystack_integrations.hooks.callgate as hooks
import haystack_integrations.tools.callgate as tools


def test_hooks_exports() -> None:
    assert sorted(hooks.__all__) == [
        "CallgateConfirmationStrategy",
        "CallgateHook",
        "CallgateRefusalHook",
        "CallgateToolRefused",
    ]


def test_tools_exports() -> None:
    assert sorted(tools.__all__) == [
        "CallgateToolRefused",
        "CallgateToolset",
        "GatewayConnectionError",
        "GatewayToolError",
        "Receipt",
        "Refusal",
        "callgate_toolset",
        "extract_outcome",
        "gateway_url",
    ]


def test_common_exports() -> None:
    assert len(common.__all__) == 40
    assert {"CallgateClient", "AsyncCallgateClient", "CallgateError", "extract_outcome", "error_from_body"} <= set(
        common.__all__
    )
    for name in common.__all__:
        assert hasattr(common, name), name
