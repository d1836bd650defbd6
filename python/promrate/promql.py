"""PromQL's range functions over any list of ``(timestamp_ms, value)`` points, bit for bit
as Prometheus computes them (the Rust library's ``promrate::promql``).

>>> from promrate import promql
>>> points = [(15_000 * i, v) for i, v in enumerate([0.0, 30.0, 60.0, 0.0, 30.0])]
>>> promql.RangeFunctions(window=75).increase(points, at=60)  # 60 before the reset, 30 after
90.0
"""

from ._promrate import Anchored, RangeFunctions, Semantics, Smoothed, StartAware

__all__ = ["Anchored", "RangeFunctions", "Semantics", "Smoothed", "StartAware"]
