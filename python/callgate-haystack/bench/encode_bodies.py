"""
The cost of writing request bodies with numbers as JavaScript writes them: this package's
``lossless_json.encode`` against the previous one (``git show <base>:.../lossless_json.py``), side
by side, interleaved in one process, on the bodies the hook sends (a step's decisions request
with the previous step's outcomes), with plain floats, with integer-valued floats beyond 2^53
(written by the exact writer) and with a NaN result (the marker). Prints µs per body, the ratio
new / old and the load average.

Usage: python bench/encode_bodies.py [--base main] [--bodies 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import types
from pathlib import Path

from haystack_integrations.common.callgate import lossless_json

HERE = Path(__file__).resolve().parent
MODULE = "python/callgate-haystack/src/haystack_integrations/common/callgate/lossless_json.py"


def old_module(base: str) -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{base}:{MODULE}"], cwd=HERE, capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("old_lossless_json")
    exec(compile(source, "old_lossless_json.py", "exec"), module.__dict__)
    return module


def body(result: object) -> dict[str, object]:
    call = {"id": "call-1", "tool": "send_invoice", "arguments": {"to": "acme", "amount": 5000.5, "lines": [1, 2, 3]}}
    outcome = {"call_id": "call-0", "attempt": 1, "outcome": "ok", "duration_ms": 1.234, "result": result}
    return {"calls": [call], "consume": True, "outcomes": [outcome], "message": {"role": "assistant", "content": "ok"}}


BODIES = {
    "plain floats": body({"rows": [{"id": n, "score": n / 7, "label": f"row {n}"} for n in range(10)]}),
    "floats beyond 2^53": body({"rows": [{"id": n, "total": 1e16 + n * 2.0} for n in range(10)]}),
    "NaN result (marker)": body({"rows": [{"id": n, "score": float("nan")} for n in range(10)]}),
}


def per_body(encode: object, value: object, count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        encode(value)  # type: ignore[operator]
    return (time.perf_counter() - started) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="main")
    parser.add_argument("--bodies", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    old = old_module(options.base)
    print(f"load average before: {os.getloadavg()}")
    for name, value in BODIES.items():
        olds: list[float] = []
        news: list[float] = []
        for _ in range(options.rounds):  # interleaved: the same load hits both
            olds.append(per_body(old.encode, value, options.bodies))
            news.append(per_body(lossless_json.encode, value, options.bodies))
        best_old, best_new = min(olds), min(news)
        print(
            f"{name:22} old {best_old:7.2f} µs  new {best_new:7.2f} µs  ratio new/old {best_new / best_old:5.2f}"
            f"  (best of {options.rounds} rounds of {options.bodies})"
        )
    print(f"load average after: {os.getloadavg()}", file=sys.stdout)


if __name__ == "__main__":
    main()
