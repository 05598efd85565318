"""
Quick start: a Haystack Agent whose tools come through callgate's MCP gateway, set up by
examples/gateway (profile ``observe``: reads allowed, ``write_file`` asks a person).

    callgate serve --config examples/gateway/callgate.yaml        # see examples/gateway/README.md
    CALLGATE_URL=http://127.0.0.1:7420 CALLGATE_API_KEY=<agent key> python quickstart.py

No model key: ``ScriptedGenerator`` plays the model (it reads the notes, then asks to write a
summary). The write waits until a person approves it in the inbox (``/ui/approvals``); swap in
``OpenAIChatGenerator()`` for a real model. Prints the agent's answer and the callgate run id.
"""

from pathlib import Path
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage, ToolCall

from haystack_integrations.hooks.callgate import CallgateHook
from haystack_integrations.tools.callgate import Refusal, callgate_toolset, extract_outcome

SANDBOX = Path(__file__).resolve().parent.parent / "gateway" / "sandbox"  # the folder the gateway serves


def text_of(message: ChatMessage) -> str:
    """A gateway tool's result as text (`read_text_file` answers `{"content": ...}`), or why it was refused."""
    outcome = extract_outcome(message)
    if isinstance(outcome, Refusal):
        return f"refused ({outcome.kind}): {outcome.message}"
    value = outcome.value
    return str(value.get("content", value)) if isinstance(value, dict) else str(value)


@component
class ScriptedGenerator:
    """Stands in for a chat model: one scripted reply per step, no network."""

    def __init__(self) -> None:
        self.step = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.step += 1
        if self.step == 1:
            call = ToolCall(tool_name="read_text_file", arguments={"path": str(SANDBOX / "notes.md")}, id="read")
            return {"replies": [ChatMessage.from_assistant("Reading the notes.", tool_calls=[call])]}
        if self.step == 2:
            notes = text_of(messages[-1])
            summary = f"The notes have {len(notes.split())} words."
            call = ToolCall(
                tool_name="write_file",
                arguments={"path": str(SANDBOX / "summary.md"), "content": summary + "\n"},
                id="write",
            )
            return {"replies": [ChatMessage.from_assistant("Saving a summary.", tool_calls=[call])]}
        return {"replies": [ChatMessage.from_assistant(f"Done: {text_of(messages[-1])}")]}


# CALLGATE_URL (default http://127.0.0.1:7420) and CALLGATE_API_KEY (an agent key:
# `callgate keys create --role agent --name my-agent`)
tools = callgate_toolset(profile="observe")  # the gateway's tools for a profile the sample defines
gate = CallgateHook()

agent = Agent(
    chat_generator=ScriptedGenerator(),
    tools=tools,
    hooks={"before_tool": [gate], "after_tool": [gate], "after_run": [gate]},
)
result = agent.run([ChatMessage.from_user("Summarise the notes")])
gate.close()
tools.close()
print(result["last_message"].text)
print(f"callgate run {gate.last_run_id}")  # export it: callgate export --url URL --key KEY --run <id>
