"""
A Haystack agent governed by callgate, end to end, with no model key and no network.

What it does:

1. starts `callgate serve` in a temporary folder, with a policy and the MCP gateway fronting
   `@modelcontextprotocol/server-filesystem` on a sandbox folder, and creates an agent key and
   a reviewer key;
2. builds a real Haystack Agent whose tools come from the gateway (`callgate_toolset`) and from
   local Python functions, governed by `CallgateHook`, driven by a scripted chat generator;
3. runs it: reads are allowed, a delete is denied, a write asks a person — a reviewer approves it
   through the HTTP API while the agent waits — and the file is written;
4. exports the run as a bundle and verifies it offline (`callgate verify --strict`, key pinned);
5. prints the run's timeline and checks everything it expected; exits 1 when anything differs.

Run: `python examples/haystack-agent/agent.py` (after `npm run build` and installing
python/callgate-haystack). `--keep` keeps the temporary folder (data, sandbox, bundle).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.tools import create_tool_from_function
from haystack.utils import Secret

from haystack_integrations.common.callgate import CallgateClient
from haystack_integrations.common.callgate.testing import CallgateServer, free_port, repository_root
from haystack_integrations.hooks.callgate import CallgateHook
from haystack_integrations.tools.callgate import Receipt, Refusal, callgate_toolset, extract_outcome

POLICY = """
version: 1
default: deny
approval: { ttl: 60s, wait: 60s }
profiles:
  assistant: [read_text_file, list_allowed_directories, write_file]
rules:
  - id: reads
    match: { tools: [read_text_file, list_allowed_directories, count_words] }
    effect: allow
  - id: writes-need-a-person
    match: { tools: [write_file] }
    effect: ask
    reason: writing a file needs a person
  - id: no-deletes
    match: { tools: [delete_file] }
    effect: deny
    reason: this agent never deletes files
"""


def count_words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def delete_file(path: str) -> str:
    """Delete a file."""
    Path(path).unlink()
    return f"deleted {path}"


def result_of(messages: list[ChatMessage], call_id: str) -> ChatMessage:
    return next(m for m in messages if m.role == ChatRole.TOOL and m.tool_call_result.origin.id == call_id)


def text_of(outcome: Receipt | Refusal) -> str:
    if isinstance(outcome, Refusal):
        return ""
    value = outcome.value
    return str(value.get("content", "")) if isinstance(value, dict) else str(value)


@component
class ScriptedModel:
    """Plays the model: each reply depends on the tool results it has read so far."""

    def __init__(self, sandbox: Path) -> None:
        self.sandbox = sandbox
        self.step = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.step += 1
        notes = str(self.sandbox / "notes.txt")
        if self.step == 1:
            reply = ChatMessage.from_assistant(
                "Let me look at the notes.",
                tool_calls=[
                    ToolCall(tool_name="list_allowed_directories", arguments={}, id="call-list"),
                    ToolCall(tool_name="read_text_file", arguments={"path": notes}, id="call-read"),
                ],
            )
        elif self.step == 2:
            text = text_of(extract_outcome(result_of(messages, "call-read")))
            reply = ChatMessage.from_assistant(
                "I will count the words and tidy up.",
                tool_calls=[
                    ToolCall(tool_name="count_words", arguments={"text": text}, id="call-count"),
                    ToolCall(tool_name="delete_file", arguments={"path": notes}, id="call-delete"),
                ],
            )
        elif self.step == 3:
            words = extract_outcome(result_of(messages, "call-count")).value
            summary = str(self.sandbox / "summary.txt")
            reply = ChatMessage.from_assistant(
                "Saving a summary.",
                tool_calls=[
                    ToolCall(
                        tool_name="write_file",
                        arguments={"path": summary, "content": f"{words} words"},
                        id="call-write",
                    )
                ],
            )
        else:
            reply = ChatMessage.from_assistant("The notes have a summary now; I was not allowed to delete them.")
        return {"replies": [reply]}


class Reviewer(threading.Thread):
    """A person at the approvals inbox: approves the one pending approval through the HTTP API."""

    def __init__(self, client: CallgateClient) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.seen: list[dict[str, Any]] = []

    def run(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.seen:
            for approval in self.client.list_approvals(status="pending"):
                arguments = json.dumps(approval.get("arguments"))
                print(f"  reviewer sees: {approval['tool']} {arguments} ({approval['reason']})")
                self.client.approve(approval["id"], reason="a summary is fine")
                print(f"  reviewer approved {approval['id']}")
                self.seen.append(approval)
            time.sleep(0.05)


def log_key(server: CallgateServer) -> str:
    for line in server.log().splitlines():
        if line.strip().startswith("log key"):
            return line.split()[-1]
    raise RuntimeError("the server did not print its log key")


def timeline(bundle: dict[str, Any]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for record in bundle["records"]:
        kind = record["type"]
        if kind == "call-decision":
            rows[record["call_id"]] = {
                "call": record["call_id"],
                "tool": record["tool"],
                "decision": record["effect"],
                "rule": ",".join(record["rules"]) or "-",
                "approval": "-",
                "outcome": "-",
            }
        elif kind == "approval-response" and record["call_id"] in rows:
            rows[record["call_id"]]["approval"] = f"{record['status']} by {record['reviewer']}"
        elif kind == "call-end" and record["call_id"] in rows:
            kind_note = f" ({record['error_kind']})" if record.get("error_kind") else ""
            rows[record["call_id"]]["outcome"] = record["outcome"] + kind_note
    return list(rows.values())


def main() -> int:
    parser = argparse.ArgumentParser(description="A Haystack agent governed by callgate.")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="callgate-haystack-example-"))
    sandbox = work / "sandbox"
    sandbox.mkdir()
    (sandbox / "notes.txt").write_text("callgate decides every tool call before it runs", encoding="utf-8")
    filesystem = repository_root() / "node_modules" / ".bin" / "mcp-server-filesystem"
    config = json.dumps(
        {"upstreams": [{"name": "files", "stdio": {"command": str(filesystem), "args": [str(sandbox)]}}]}
    )

    failures: list[str] = []

    def expect(condition: bool, what: str) -> None:
        print(f"  {'ok  ' if condition else 'FAIL'} {what}")
        if not condition:
            failures.append(what)

    (work / "data").mkdir()
    server = CallgateServer(work / "data", free_port(), config=config, policy=POLICY)
    try:
        server.launch()
    except RuntimeError as error:
        print(f"cannot start callgate serve with the MCP gateway (upstreams in callgate.yaml):\n{error}")
        shutil.rmtree(work, ignore_errors=True)
        return 1
    try:
        agent_key = server.create_key("agent", "haystack-example")
        reviewer = server.client(server.create_key("reviewer", "example-reviewer"))
        print(f"callgate server at {server.url} (data in {server.data_dir})")

        tools = callgate_toolset(url=server.url, profile="assistant", api_key=Secret.from_token(agent_key))
        gate = CallgateHook(url=server.url, api_key=Secret.from_token(agent_key))
        agent = Agent(
            chat_generator=ScriptedModel(sandbox),
            tools=[tools, create_tool_from_function(count_words), create_tool_from_function(delete_file)],
            hooks=gate.hooks(),
        )
        watcher = Reviewer(reviewer)
        watcher.start()
        context: dict[str, Any] = {"example": "haystack-agent"}
        print("running the agent")
        result = agent.run([ChatMessage.from_user("Summarise my notes, then clean up.")], hook_context=context)
        watcher.join(5)
        gate.close()
        tools.close()
        run_id = context["callgate_run_id"]
        print(f"agent answered: {result['last_message'].text}")

        bundle = server.client(agent_key).bundle(run_id)
        bundle_path = work / "bundle.json"
        bundle_path.write_text(json.dumps(bundle), encoding="utf-8")
        verified = server.verify(bundle_path, "--public-key", log_key(server), "--strict")
        print(
            f"exported {len(bundle['records'])} records to {bundle_path}; callgate verify: exit {verified.returncode}"
        )

        rows = timeline(bundle)
        print(f"\n{'call':14}{'tool':26}{'decision':10}{'rule':22}{'approval':34}outcome")
        for row in rows:
            print(
                f"{row['call']:14}{row['tool']:26}{row['decision']:10}{row['rule']:22}{row['approval']:34}{row['outcome']}"
            )
        print()

        by_call = {row["call"]: row for row in rows}
        messages = result["messages"]
        expect(by_call.get("call-read", {}).get("outcome") == "ok", "the gateway read is allowed and ran")
        expect(by_call.get("call-list", {}).get("outcome") == "ok", "listing the allowed folders is allowed")
        expect(by_call.get("call-count", {}).get("outcome") == "ok", "the local word count is allowed and ran")
        delete_refusal = extract_outcome(result_of(messages, "call-delete"))
        expect(isinstance(delete_refusal, Refusal) and delete_refusal.kind == "policy-denied", "the delete is denied")
        expect((sandbox / "notes.txt").exists(), "the notes were not deleted")
        expect(
            by_call.get("call-write", {}).get("approval", "").startswith("approved by example-reviewer"),
            "the write asked a person, who approved it through the API",
        )
        summary = sandbox / "summary.txt"
        written = summary.read_text(encoding="utf-8") if summary.exists() else None
        expect(written == "8 words", "the approved write ran with its exact arguments")
        expect(len(watcher.seen) == 1, "the reviewer was asked exactly once")
        expect(verified.returncode == 0, "the exported run verifies offline (strict, key pinned)")
        expect(bool(result["last_message"].text), "the agent finished with an answer")
    finally:
        server.close()
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
