"""
The W3C Trace Context (``traceparent``, ``tracestate``) of the active OpenTelemetry context, for
the headers of a request to the callgate server, which parents its spans on it.

OpenTelemetry is optional: without ``opentelemetry-api`` installed, or with no valid span active
(e.g. no SDK installed), no header is added. The propagator is the process's global one
(``opentelemetry.propagate``, W3C Trace Context and Baggage by default).
"""

from __future__ import annotations

from typing import Any

try:
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised where opentelemetry is absent
    _propagate = None  # type: ignore[assignment]
    _trace = None  # type: ignore[assignment]


def trace_headers() -> dict[str, str]:
    """``{"traceparent": "00-<trace id>-<span id>-<flags>", ...}`` of the active span; ``{}`` when none."""
    if _trace is None or _propagate is None:
        return {}
    if not _trace.get_current_span().get_span_context().is_valid:
        return {}
    carrier: dict[str, Any] = {}
    _propagate.inject(carrier)
    return {key: value for key, value in carrier.items() if isinstance(value, str)}
