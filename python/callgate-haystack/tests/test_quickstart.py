"""
The README's quick start, run as a user runs it: `callgate serve --config
examples/gateway/callgate.yaml` (the sample setup), an agent key in the environment, and
examples/haystack-agent/quickstart.py in a separate process; a reviewer approves its write
through the HTTP API, standing in for the person at the inbox.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from haystack_integrations.common.callgate.client import CallgateClient
from haystack_integrations.common.callgate.testing import ensure_built, free_port

REPOSITORY = Path(__file__).resolve().parents[3]
QUICKSTART = REPOSITORY / "examples" / "haystack-agent" / "quickstart.py"
SUMMARY = REPOSITORY / "examples" / "gateway" / "sandbox" / "summary.md"


def create_key(cli: Path, data: Path, role: str, name: str) -> str:
    done = subprocess.run(
        ["node", str(cli), "keys", "create", "--role", role, "--name", name, "--data", str(data)],
        capture_output=True,
        text=True,
        check=True,
    )
    return next(line.strip() for line in done.stdout.splitlines() if line.strip().startswith("cg_"))


def test_quickstart_runs_against_the_sample_gateway(tmp_path: Path) -> None:
    cli = ensure_built(REPOSITORY)
    data = tmp_path / "data"
    agent_key = create_key(cli, data, "agent", "quickstart-agent")
    reviewer_key = create_key(cli, data, "reviewer", "quickstart-reviewer")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = REPOSITORY / "examples" / "gateway" / "callgate.yaml"
    server = subprocess.Popen(
        ["node", str(cli), "serve", "--config", str(config), "--data", str(data), "--port", str(port)],
        cwd=tmp_path,  # not the repository: the sample's paths resolve against its own folder
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    approved: list[dict] = []

    def review() -> None:
        reviewer = CallgateClient(url, reviewer_key)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not approved:
            with contextlib.suppress(httpx.HTTPError):
                for approval in reviewer.list_approvals(status="pending"):
                    reviewer.approve(approval["id"], reason="a summary is fine")
                    approved.append(approval)
            time.sleep(0.1)

    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            with contextlib.suppress(httpx.HTTPError):
                health = httpx.get(f"{url}/v1/health", timeout=1.0).json()
                if health.get("upstreams", [{}])[0].get("status") == "connected":
                    break
            assert time.monotonic() < deadline, "callgate serve did not connect its upstream in 30 s"
            time.sleep(0.1)
        reviewer = threading.Thread(target=review, daemon=True)
        reviewer.start()
        env = {**os.environ, "CALLGATE_URL": url, "CALLGATE_API_KEY": agent_key}
        done = subprocess.run(
            [sys.executable, str(QUICKSTART)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        reviewer.join(5)
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.strip().splitlines()
        assert lines[-2].startswith("Done: "), done.stdout
        assert lines[-1].startswith("callgate run "), done.stdout
        assert [approval["tool"] for approval in approved] == ["write_file"]
        words = len((REPOSITORY / "examples" / "gateway" / "sandbox" / "notes.md").read_text().split())
        assert SUMMARY.read_text(encoding="utf-8") == f"The notes have {words} words.\n"
    finally:
        with contextlib.suppress(FileNotFoundError):
            SUMMARY.unlink()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
