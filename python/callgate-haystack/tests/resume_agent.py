"""
One agent process of the resume tests: run as ``python resume_agent.py URL KEY CONTEXT_JSON CALLS_JSON``.

It runs a Haystack Agent governed by CallgateHook (``max_wait`` 0.5 s) whose scripted model asks
for ``CALLS_JSON`` (``[[id, tool, arguments], ...]``) once, with ``hook_context`` = ``CONTEXT_JSON``,
and prints one JSON line: the hook_context after the run, the tool results the model read and
which tools ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from haystack.components.agents import Agent
from haystack.dataclasses import ChatRole, ToolCall
from haystack.utils import Secret
from support import Counter, ScriptedChatGenerator, local_tools, user

from haystack_integrations.hooks.callgate import CallgateHook


def main() -> None:
    url, key, context_json, calls_json = sys.argv[1:5]
    counter = Counter()
    step = [
        ToolCall(tool_name=tool, arguments=arguments, id=call_id) for call_id, tool, arguments in json.loads(calls_json)
    ]
    from haystack.dataclasses import ChatMessage

    generator = ScriptedChatGenerator([ChatMessage.from_assistant(tool_calls=step), "done"])
    gate = CallgateHook(url=url, api_key=Secret.from_token(key), max_wait=0.5)
    agent = Agent(chat_generator=generator, tools=local_tools(counter), hooks=gate.hooks())
    context: dict[str, Any] = json.loads(context_json)
    result = agent.run([user("go")], hook_context=context)
    gate.flush()
    results = {
        message.tool_call_result.origin.id: {
            "error": message.tool_call_result.error,
            "text": message.tool_call_result.result,
        }
        for message in result["messages"]
        if message.role == ChatRole.TOOL
    }
    print(json.dumps({"context": context, "results": results, "ran": counter.names()}))


if __name__ == "__main__":
    main()
