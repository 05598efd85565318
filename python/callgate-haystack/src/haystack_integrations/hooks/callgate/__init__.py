# The public API of haystack_integrations.hooks.callgate. Anything listed here is public and
# pinned by tests/test_exports.py; add names deliberately.
"""
Haystack Agent hooks that have callgate decide every tool call before it runs.

Usage::

    from haystack_integrations.hooks.callgate import CallgateHook

    gate = CallgateHook()   # CALLGATE_URL, CALLGATE_API_KEY
    agent = Agent(chat_generator=generator, tools=tools,
                  hooks=gate.hooks())
"""

from haystack_integrations.common.callgate.errors import CallgateToolRefused

from .confirmation import CallgateConfirmationStrategy
from .confirmation_hook import CallgateConfirmationHook
from .hook import CallgateHook
from .hook_points import CallgateHookPoint
from .refusal_hook import CallgateRefusalHook

__all__ = [
    "CallgateConfirmationHook",
    "CallgateConfirmationStrategy",
    "CallgateHook",
    "CallgateHookPoint",
    "CallgateRefusalHook",
    "CallgateToolRefused",
]
