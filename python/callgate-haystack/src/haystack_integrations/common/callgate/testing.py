"""
Run a real ``callgate serve`` process from Python: for tests, examples and benchmarks.

It needs a checkout of the callgate repository (the server is ``node packages/cli/dist/bin.js``,
built with ``npm run build`` when missing) and Node.js on ``PATH``. Nothing here is used by the
hooks or tools themselves.

Usage::

    from haystack_integrations.common.callgate.testing import CallgateServer

    with CallgateServer.start(policy=POLICY_YAML) as server:
        agent_key = server.create_key("agent", "my-agent")
        reviewer = server.client(server.create_key("reviewer", "me"))
        ...
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from .client import CallgateClient


def repository_root(start: Path | None = None) -> Path:
    """
    The callgate checkout this package sits in (the folder holding ``packages/cli``).

    :raises RuntimeError: When no such folder is found above ``start`` (or ``CALLGATE_REPO``).
    """
    configured = os.environ.get("CALLGATE_REPO")
    if configured:
        return Path(configured).resolve()
    here = (start or Path(__file__)).resolve()
    for folder in [here, *here.parents]:
        if (folder / "packages" / "cli" / "package.json").is_file():
            return folder
    raise RuntimeError("cannot find the callgate repository (packages/cli); set CALLGATE_REPO")


def ensure_built(root: Path) -> Path:
    """The built CLI (``packages/cli/dist/bin.js``), running ``npm run build`` first when it is missing."""
    cli = root / "packages" / "cli" / "dist" / "bin.js"
    if not cli.is_file():
        subprocess.run(["npm", "run", "build", "--silent"], cwd=root, check=True)
    if not cli.is_file():
        raise RuntimeError(f"npm run build did not produce {cli}")
    return cli


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class CallgateServer:
    """
    One ``callgate serve`` child process on 127.0.0.1 (or on a Unix-domain socket), with its own
    data folder.

    :param data_dir: The data folder (SQLite database, log key, API keys).
    :param port: The port to listen on (unused with ``socket``).
    :param socket: Listen on a Unix-domain socket, ``callgate.sock`` in the data folder, instead of
        the port (``callgate serve --socket``); :attr:`url` is then ``unix:<path>``.
    :param config: The ``callgate.yaml`` text (policy, upstreams, ...), or None for ``--policy`` only.
    :param policy: The policy YAML text, written to ``policy.yaml`` and passed with ``--policy``.
    """

    def __init__(
        self,
        data_dir: Path,
        port: int,
        *,
        config: str | None = None,
        policy: str | None = None,
        serve_arguments: list[str] | None = None,
        socket: bool = False,
    ) -> None:
        self.root = repository_root()
        self.cli = ensure_built(self.root)
        self.data_dir = data_dir
        self.port = port
        #: The socket's path when serving on one.
        self.socket_path: Path | None = data_dir / "callgate.sock" if socket else None
        self.url = f"unix:{self.socket_path}" if self.socket_path else f"http://127.0.0.1:{port}"
        self.config = config
        self.policy = policy
        #: More ``callgate serve`` arguments, e.g. ``["--synchronous", "FULL"]``.
        self.serve_arguments = list(serve_arguments or [])
        self.process: subprocess.Popen[str] | None = None
        self.log_path = data_dir / "server.log"
        self._owned_dir: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def start(
        cls,
        *,
        config: str | None = None,
        policy: str | None = None,
        port: int | None = None,
        serve_arguments: list[str] | None = None,
        socket: bool = False,
    ) -> CallgateServer:
        """
        Starts a server in a new temporary data folder; stop it with :meth:`stop` (or ``with``).

        ``CALLGATE_NODE_FLAGS`` in the environment adds Node flags to the server's command line
        (e.g. ``--cpu-prof --cpu-prof-dir=/tmp/profiles`` for a benchmark; Node refuses those in
        ``NODE_OPTIONS``).
        """
        owned = tempfile.TemporaryDirectory(prefix="callgate-test-")
        server = cls(
            Path(owned.name),
            port or (0 if socket else free_port()),
            config=config,
            policy=policy,
            serve_arguments=serve_arguments,
            socket=socket,
        )
        server._owned_dir = owned
        server.launch()
        return server

    def node(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Runs ``node packages/cli/dist/bin.js ARGUMENTS`` and returns its output."""
        return subprocess.run(
            ["node", str(self.cli), *arguments], cwd=self.root, capture_output=True, text=True, check=check
        )

    def create_key(self, role: str, name: str) -> str:
        """Creates an API key with ``callgate keys create`` and returns it."""
        done = self.node("keys", "create", "--role", role, "--name", name, "--data", str(self.data_dir))
        for line in done.stdout.splitlines():
            token = line.strip()
            if line.startswith("  ") and token.startswith("cg_") and " " not in token:
                return token
        raise RuntimeError(f"no key in the output of callgate keys create:\n{done.stdout}\n{done.stderr}")

    def launch(self, timeout: float = 30.0) -> None:
        """Starts the process (again, after :meth:`stop`) and waits until ``/v1/health`` answers."""
        arguments = ["serve", "--data", str(self.data_dir)]
        if self.socket_path is not None:
            arguments += ["--socket", str(self.socket_path)]
        else:
            arguments += ["--host", "127.0.0.1", "--port", str(self.port)]
        if self.policy is not None:
            policy_path = self.data_dir / "policy.yaml"
            policy_path.write_text(self.policy, encoding="utf-8")
            arguments += ["--policy", str(policy_path)]
        if self.config is not None:
            config_path = self.data_dir / "callgate.yaml"
            config_path.write_text(self.config, encoding="utf-8")
            arguments += ["--config", str(config_path)]
        arguments += self.serve_arguments
        node_flags = os.environ.get("CALLGATE_NODE_FLAGS", "").split()
        log = self.log_path.open("a", encoding="utf-8")
        self.process = subprocess.Popen(
            ["node", *node_flags, str(self.cli), *arguments],
            cwd=self.root,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        if self.socket_path is not None:
            transport = httpx.HTTPTransport(uds=str(self.socket_path))
            health = "http://localhost/v1/health"
        else:
            transport, health = None, f"{self.url}/v1/health"
        with httpx.Client(transport=transport, timeout=1.0) as probe:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"callgate serve exited with {self.process.returncode}:\n{self.log()}")
                with contextlib.suppress(httpx.HTTPError):
                    if probe.get(health).status_code == 200:
                        return
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"callgate serve did not answer on {self.url} within {timeout}s:\n{self.log()}")

    def stop(self, timeout: float = 15.0) -> None:
        """Stops the process (SIGTERM, then SIGKILL after ``timeout``); the data folder stays."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

    def close(self) -> None:
        """Stops the process and removes a data folder :meth:`start` made."""
        self.stop()
        if self._owned_dir is not None:
            self._owned_dir.cleanup()
            self._owned_dir = None

    def log(self) -> str:
        """What the server printed so far."""
        return self.log_path.read_text(encoding="utf-8") if self.log_path.exists() else ""

    def client(self, key: str) -> CallgateClient:
        """A client of this server with ``key``."""
        return CallgateClient(self.url, key)

    def verify(self, bundle_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
        """Runs ``callgate verify BUNDLE ARGUMENTS`` (offline verification) without raising."""
        return self.node("verify", str(bundle_path), *arguments, check=False)

    def __enter__(self) -> CallgateServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@contextlib.contextmanager
def temporary_folder(prefix: str = "callgate-") -> Iterator[Path]:
    """A temporary folder removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
