"""Every type has a repr that shows what it holds (none is Python's default
`<... object at 0x...>`)."""

import promrate
from promrate import promql


def instances():
    tracker = promrate.Tracker(["t_total"], max_series=10)
    tracker.ingest('t_total{engine="0"} 10 1000\n', at=2)
    report = tracker.ingest('t_total{engine="0"} 2 500\n# TYPE t counter\nt_total{ 1\n', at=3)
    unmatched = tracker.ingest("other_total 1\n", at=4).unmatched
    tracker.ingest('t_total{engine="0"} 1 3000\nt_total{engine="0"} 1 3000\n', at=5)
    restarted = promrate.Tracker().ingest("x_total 5\n", at=1)
    restart = promrate.Tracker()
    restart.ingest("x_total 5\n", at=1)
    reset = restart.ingest("x_total 1\n", at=2).resets[0]
    one_point = promrate.Tracker()
    one_point.ingest('t_total{engine="0"} 1\n', at=1)
    answer = one_point.evaluate(promrate.Query("t_total", promrate.Estimator.WINDOW_RATE, 10, by=["engine"]))
    om = list(promrate.parse('# TYPE a counter\na_total 1 # {id="1"} 2\n# EOF\n', format="openmetrics"))
    om2 = promrate.parse(
        "# TYPE h histogram\nh {count:1,sum:1,schema:0,zero_threshold:0,zero_count:0,"
        "positive_spans:[0:1],positive_buckets:[1],bucket:[+Inf:1]}\n"
        "# TYPE s summary\ns {count:1,sum:1,quantile:[0.5:1]}\n# EOF\n",
        format="openmetrics-2.0.0",
    )
    histogram, summary = (e.composite for e in om2 if isinstance(e, promrate.Sample))
    functions = promql.RangeFunctions(60, semantics=promql.Semantics.PROMETHEUS2)
    return [
        tracker,
        report,
        report.first_refused,
        unmatched,
        restarted,
        reset,
        answer,
        answer.groups[0],
        answer.groups[0].reason,
        promrate.Selector("up"),
        promrate.Query("up", promrate.Estimator.EWMA),
        promrate.Estimator.EWMA,
        promrate.SeriesScope.NEWEST_PAGE,
        promql.Semantics.PROMETHEUS3,
        promrate.parse("a 1\n"),
        om[0],
        om[1],
        om[1].exemplar,
        histogram,
        histogram.native,
        summary,
        functions,
        functions.anchored(),
        functions.smoothed(),
        functions.with_start_times([None]),
    ]


def test_every_type_has_a_repr_of_its_own():
    seen = set()
    for obj in instances():
        assert obj is not None
        text = repr(obj)
        assert " object at 0x" not in text, text
        seen.add(type(obj).__name__)
    coverage_answer = promrate.Tracker()
    coverage_answer.ingest("c_total 0\n", at=0)
    coverage_answer.ingest("c_total 5\n", at=10)
    coverage = coverage_answer.evaluate(promrate.Query("c_total", promrate.Estimator.WINDOW_RATE, 10)).groups[0].coverage
    assert repr(coverage) == "Coverage(start=1970-01-01T00:00:00Z, end=1970-01-01T00:00:10Z, span=10 s, shortened=None)"
    seen.add("Coverage")
    classes = {name for name in promrate.__all__ if isinstance(getattr(promrate, name), type)}
    classes |= set(promql.__all__)
    exceptions = {name for name in classes if issubclass(getattr(promrate, name, getattr(promql, name, None)), BaseException)}
    assert classes - exceptions - seen == set()
