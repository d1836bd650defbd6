"""Prometheus and OpenMetrics pages parsed in Rust, PromQL selectors, and restart-aware
rates (PromQL's ``rate``, ``increase`` and ``irate`` bit for bit, window rates, EWMA,
histogram quantiles), from the Rust library promrate.

>>> import promrate
>>> [sample] = promrate.parse('vllm:generation_tokens_total{engine="0"} 7852\\n')
>>> sample.name, sample.labels, sample.value
('vllm:generation_tokens_total', {'engine': '0'}, 7852.0)
"""

from . import promql
from ._promrate import (
    Answer,
    Coverage,
    Entries,
    Estimator,
    Exemplar,
    GroupAnswer,
    Histogram,
    IngestError,
    IngestReport,
    Metadata,
    NativeHistogram,
    NoValue,
    ParseError,
    Query,
    QueryError,
    Refusal,
    ResetEvent,
    Sample,
    Selector,
    SelectorError,
    SeriesScope,
    Summary,
    Tracker,
    Unmatched,
    __version__,
    parse,
)

__all__ = [
    "Answer",
    "Coverage",
    "Entries",
    "Estimator",
    "Exemplar",
    "GroupAnswer",
    "Histogram",
    "IngestError",
    "IngestReport",
    "Metadata",
    "NativeHistogram",
    "NoValue",
    "ParseError",
    "Query",
    "QueryError",
    "Refusal",
    "ResetEvent",
    "Sample",
    "Selector",
    "SelectorError",
    "SeriesScope",
    "Summary",
    "Tracker",
    "Unmatched",
    "__version__",
    "parse",
    "promql",
]
