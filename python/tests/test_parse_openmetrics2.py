"""promrate.parse with format="openmetrics-2.0.0": start timestamps, composite values
(histograms, gauge histograms, summaries, native histograms) and several exemplars."""

import datetime
import math

import pytest

import promrate

FORMAT = "openmetrics-2.0.0"


def samples(page, format=FORMAT):
    return [e for e in promrate.parse(page, format=format) if isinstance(e, promrate.Sample)]


def test_the_format_is_named_or_read_from_the_content_type():
    page = "# TYPE foo counter\nfoo_total 17.0 1520879607.789 st@1520430000.123\n# EOF\n"
    content_type = "application/openmetrics-text; version=2.0.0; charset=utf-8"
    for format in (FORMAT, "openmetrics2", content_type):
        [s] = samples(page, format)
        assert (s.name, s.value, s.timestamp_ms) == ("foo_total", 17.0, 1_520_879_607_789)
    # OpenMetrics 1.0 does not know st@.
    errors = [e for e in promrate.parse(page, format="openmetrics") if isinstance(e, promrate.ParseError)]
    assert errors and errors[0].line == 2
    # A mistyped name is refused, not read as text; a Content-Type that is not OpenMetrics
    # is text, as Prometheus reads it.
    for mistake in ("OpenMetrics", "openmetrics-2", "bogus", ""):
        with pytest.raises(ValueError, match="unknown format"):
            promrate.parse(page, format=mistake)
        with pytest.raises(ValueError, match="unknown format"):
            promrate.Tracker().read_as(mistake)
    [s] = samples("foo_total 1\n", "text/plain; version=0.0.4")
    assert s.value == 1.0


def test_start_timestamps_as_milliseconds_and_datetimes():
    page = "# TYPE foo counter\nfoo_total 17.0 1520879607.789 st@1520430000.123\nfoo_total{a=\"b\"} 1\n# EOF\n"
    with_start, without = samples(page)
    assert with_start.start_timestamp_ms == 1_520_430_000_123
    assert with_start.start_timestamp == datetime.datetime(
        2018, 3, 7, 13, 40, 0, 123000, tzinfo=datetime.timezone.utc
    )
    assert (without.start_timestamp_ms, without.start_timestamp) == (None, None)
    assert "start_timestamp_ms=1520430000123" in repr(with_start)
    # Text and OpenMetrics 1.0 samples have none.
    [plain] = samples("foo_total 1\n", "text")
    assert (plain.start_timestamp_ms, plain.composite, plain.exemplars) == (None, None, ())


def test_a_histogram_line_is_its_count_sum_and_buckets():
    page = (
        "# TYPE foo histogram\n"
        "foo {count:17,sum:324789.3,bucket:[0.01:0,0.1:8,1.0:11,10.0:17,+Inf:17]} st@1520430000.123\n"
        "# EOF\n"
    )
    [s] = samples(page)
    h = s.composite
    assert isinstance(h, promrate.Histogram)
    assert (h.kind, h.count, h.sum, h.native) == ("histogram", 17.0, 324789.3, None)
    assert h.buckets == [(0.01, 0.0), (0.1, 8.0), (1.0, 11.0), (10.0, 17.0), (math.inf, 17.0)]
    assert math.isnan(s.value)
    assert s.start_timestamp_ms == 1_520_430_000_123


def test_a_gauge_histogram_and_a_summary():
    page = (
        "# TYPE q gaugehistogram\nq {gcount:5,gsum:-2.5,bucket:[-1.0:2,+Inf:5]}\n"
        "# TYPE rpc summary\nrpc{path=\"/a\"} {count:10,sum:5.0,quantile:[0.5:0.3,0.9:0.7,0.99:1.5]}\n"
        "# EOF\n"
    )
    gauge, summary = samples(page)
    assert (gauge.composite.kind, gauge.composite.count, gauge.composite.sum) == ("gaugehistogram", 5.0, -2.5)
    assert gauge.composite.buckets == [(-1.0, 2.0), (math.inf, 5.0)]
    s = summary.composite
    assert isinstance(s, promrate.Summary)
    assert (s.count, s.sum, s.quantiles) == (10.0, 5.0, [(0.5, 0.3), (0.9, 0.7), (0.99, 1.5)])
    assert summary.labels == {"path": "/a"}
    assert repr(s) == "Summary(count=10.0, sum=5.0, quantiles=[(0.5, 0.3), (0.9, 0.7), (0.99, 1.5)])"


def test_a_native_histogram_with_its_spans_and_buckets():
    page = (
        "# TYPE h histogram\n"
        "h {count:59,sum:1.2e2,schema:7,zero_threshold:1e-4,zero_count:0,negative_spans:[1:2],"
        "negative_buckets:[5,7],positive_spans:[-1:2,3:4],positive_buckets:[5,7,10,9,8,8],"
        "bucket:[0.5:20,+Inf:59]}\n"
        "# EOF\n"
    )
    [s] = samples(page)
    h = s.composite
    assert (h.count, h.sum, h.buckets) == (59.0, 120.0, [(0.5, 20.0), (math.inf, 59.0)])
    n = h.native
    assert isinstance(n, promrate.NativeHistogram)
    assert (n.schema, n.zero_threshold, n.zero_count) == (7, 1e-4, 0.0)
    assert n.positive_spans == [(-1, 2), (3, 4)]
    assert n.positive_buckets == [5.0, 7.0, 10.0, 9.0, 8.0, 8.0]
    assert (n.negative_spans, n.negative_buckets) == ([(1, 2)], [5.0, 7.0])
    assert "native=NativeHistogram(schema=7" in repr(h)


def test_several_exemplars_in_page_order():
    page = (
        "# TYPE foo histogram\n"
        "foo {count:2,sum:1.5,bucket:[1.0:1,+Inf:2]} "
        "# {trace_id=\"a\"} 0.67 1520879607.789 # {trace_id=\"b\"} 1.2 1520879608.5\n"
        "# EOF\n"
    )
    [s] = samples(page)
    assert [(e.labels, e.value, e.timestamp_ms) for e in s.exemplars] == [
        ({"trace_id": "a"}, 0.67, 1_520_879_607_789),
        ({"trace_id": "b"}, 1.2, 1_520_879_608_500),
    ]
    assert s.exemplar.labels == {"trace_id": "a"}


def test_a_malformed_composite_value_is_a_parse_error_with_its_place():
    page = "# TYPE foo histogram\nfoo {count:17,bucket:[+Inf:17]}\n# EOF\n"
    with pytest.raises(promrate.ParseError) as raised:
        promrate.parse(page, format=FORMAT, errors="raise")
    assert raised.value.line == 2 and raised.value.column > 1


def test_a_tracker_reads_an_openmetrics2_page_as_its_openmetrics1_twin():
    def om1(k):
        return (
            "# TYPE rq histogram\n"
            f'rq_bucket{{le="0.1"}} {k}\nrq_bucket{{le="1.0"}} {3 * k}\nrq_bucket{{le="+Inf"}} {4 * k}\n'
            f"rq_count {4 * k}\nrq_sum {1.5 * k}\nrq_created 1700000000.5\n# EOF\n"
        )

    def om2(k):
        return (
            "# TYPE rq histogram\n"
            f"rq {{count:{4 * k},sum:{1.5 * k},bucket:[0.1:{k},1.0:{3 * k},+Inf:{4 * k}]}} st@1700000000.5\n# EOF\n"
        )

    at = lambda i: datetime.datetime(2023, 11, 14, 22, 15, 10 * i, tzinfo=datetime.timezone.utc)
    trackers = []
    for format, page in (("openmetrics", om1), (FORMAT, om2)):
        tracker = promrate.Tracker(["rq"]).read_as(format)
        for i, k in enumerate([10, 20, 35]):
            tracker.ingest(page(k), at(i))
        trackers.append(tracker)
    query = promrate.Query("rq", promrate.Estimator.INCREASE, datetime.timedelta(seconds=20))
    one, two = (t.quantile(0.5, query).value for t in trackers)
    assert one == two and one is not None
    one, two = (t.mean(query).value for t in trackers)
    assert one == two and one is not None


def test_a_native_histogram_has_no_quantile_and_says_why():
    tracker = promrate.Tracker(["h"]).read_as(FORMAT)
    at = lambda i: datetime.datetime(2023, 11, 14, 22, 15, 10 * i, tzinfo=datetime.timezone.utc)
    for i, count in enumerate([4, 9]):
        page = (
            "# TYPE h histogram\n"
            f"h {{count:{count},sum:2.5,schema:0,zero_threshold:0,zero_count:0,"
            f"positive_spans:[0:1],positive_buckets:[{count}]}}\n# EOF\n"
        )
        tracker.ingest(page, at(i))
    query = promrate.Query("h", promrate.Estimator.INCREASE, datetime.timedelta(seconds=20))
    answer = tracker.quantile(0.5, query)
    assert answer.value is None and answer.reason.kind == "native_histogram"
    assert answer.reason.details == {"name": "h"}
    assert tracker.evaluate(promrate.Query("h_count", promrate.Estimator.INCREASE, datetime.timedelta(seconds=20))).value > 0
