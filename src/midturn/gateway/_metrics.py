"""Prometheus metrics, written by hand in the text exposition format (version 0.0.4)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

__all__ = ["Metrics"]

_BUCKETS = (0.1, 0.5, 1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3600.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Metrics:
    """The gateway's counters. One instance per app; only touched from its event loop."""

    def __init__(self) -> None:
        self.open_streams = 0
        self.waiting_requests = 0
        self._bucket_counts = [0] * len(_BUCKETS)
        self._latency_sum = 0.0
        self._latency_count = 0
        self._requests: Counter[tuple[str, int]] = Counter()

    def observe_settle(self, created_at: datetime, settled_at: datetime | None) -> None:
        if settled_at is None:
            return
        seconds = max(0.0, (settled_at - created_at).total_seconds())
        self._latency_sum += seconds
        self._latency_count += 1
        for index, bound in enumerate(_BUCKETS):
            if seconds <= bound:
                self._bucket_counts[index] += 1

    def count_request(self, route: str, status: int) -> None:
        self._requests[(route, status)] += 1

    def render(
        self,
        pending: int,
        *,
        streams_dropped: int = 0,
        stream_buffer_bytes: int = 0,
        event_log_reads: int = 0,
    ) -> str:
        lines = [
            "# HELP midturn_pending_interactions Interactions waiting for a person.",
            "# TYPE midturn_pending_interactions gauge",
            f"midturn_pending_interactions {pending}",
            "# HELP midturn_open_streams Server-sent event streams currently open.",
            "# TYPE midturn_open_streams gauge",
            f"midturn_open_streams {self.open_streams}",
            "# HELP midturn_streams_dropped_total Event streams ended for falling too far "
            "behind (their clients resume with Last-Event-ID).",
            "# TYPE midturn_streams_dropped_total counter",
            f"midturn_streams_dropped_total {streams_dropped}",
            "# HELP midturn_stream_buffer_bytes Bytes of event frames held for open streams "
            "and not yet written to them.",
            "# TYPE midturn_stream_buffer_bytes gauge",
            f"midturn_stream_buffer_bytes {stream_buffer_bytes}",
            "# HELP midturn_event_log_reads_total Reads of the event log by the stream hub "
            "(live events reach streams from the runtime without one; a read fills a gap).",
            "# TYPE midturn_event_log_reads_total counter",
            f"midturn_event_log_reads_total {event_log_reads}",
            "# HELP midturn_waiting_requests Long-poll requests currently held.",
            "# TYPE midturn_waiting_requests gauge",
            f"midturn_waiting_requests {self.waiting_requests}",
            "# HELP midturn_settle_latency_seconds Time from park to settle, for "
            "interactions settled through this gateway.",
            "# TYPE midturn_settle_latency_seconds histogram",
        ]
        for bound, count in zip(_BUCKETS, self._bucket_counts, strict=True):
            lines.append(f'midturn_settle_latency_seconds_bucket{{le="{_number(bound)}"}} {count}')
        lines += [
            f'midturn_settle_latency_seconds_bucket{{le="+Inf"}} {self._latency_count}',
            f"midturn_settle_latency_seconds_sum {_number(self._latency_sum)}",
            f"midturn_settle_latency_seconds_count {self._latency_count}",
            "# HELP midturn_http_requests_total HTTP requests by route template and status.",
            "# TYPE midturn_http_requests_total counter",
        ]
        for (route, status), count in sorted(self._requests.items()):
            lines.append(
                f'midturn_http_requests_total{{route="{_escape(route)}",status="{status}"}} {count}'
            )
        return "\n".join(lines) + "\n"
