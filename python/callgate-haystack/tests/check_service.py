"""
The generated harness's check service (``test/conformance/generated/check-service.ts``): one Node
22 process, one JSON request and answer a line, for the tests that compare this package with
callgate's core (the generated runs' checks, Number::toString, ``callgate-normalize/1``).
"""

from __future__ import annotations

import json
import math
import subprocess
import threading
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[3]
NODE22 = REPOSITORY / "tools" / "node22" / "node_modules" / "node" / "bin" / "node"
SERVICE = REPOSITORY / "test" / "conformance" / "generated" / "check-service.ts"


class Harness:
    """The check service: one Node process, one JSON request and answer a line."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [str(NODE22), "--experimental-transform-types", "--no-warnings", str(SERVICE)],
            cwd=REPOSITORY,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="surrogatepass",
        )
        self.lock = threading.Lock()

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            assert self.process.stdin and self.process.stdout
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(10)


def tagged(value: Any) -> list[Any]:
    """
    ``value`` as the service's tagged tree (check-service.ts, ``untag``): a Python value as the
    JavaScript value it stands for — a float by its repr (NaN and the infinities included), an
    integer by its digits (a bigint beyond ±(2^53−1)), a lone surrogate kept in its string.
    """
    if value is None:
        return ["z"]
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, int):
        return ["i", str(value)]
    if isinstance(value, float):
        if math.isnan(value):
            return ["n", "NaN"]
        if math.isinf(value):
            return ["n", "Infinity" if value > 0 else "-Infinity"]
        return ["n", repr(value)]
    if isinstance(value, str):
        return ["s", value]
    if isinstance(value, dict):
        return ["o", [[key, tagged(item)] for key, item in value.items()]]
    if isinstance(value, (list, tuple)):
        return ["a", [tagged(item) for item in value]]
    raise TypeError(f"no JavaScript value for {type(value).__name__}")
