"""promrate.Tracker from Python: the library's front door (Query, Estimator, Answer),
restarts, reasons instead of empty answers, errors as exceptions, times and durations in
Python's types."""

import datetime
import math

import pytest

import promrate
from conftest import DATA

E = promrate.Estimator
T0 = 1_764_000_000
UTC = datetime.timezone.utc


def test_tokens_per_second_through_a_restart():
    tokens = promrate.Selector("vllm:generation_tokens_total")
    tracker = promrate.Tracker([tokens])
    # Before any scrape: no value, and no time it was evaluated at.
    before = tracker.evaluate(promrate.Query(tokens, E.WINDOW_RATE, window=10))
    assert (before.value, before.reason.kind, before.at) == (None, "no_scrapes", None)
    first = tracker.ingest("vllm:generation_tokens_total 5000\n", T0)
    assert (first.samples, first.new_series, first.resets) == (1, 1, [])
    report = tracker.ingest("vllm:generation_tokens_total 300\n", T0 + 10)
    assert [(r.name, r.cause) for r in report.resets] == [("vllm:generation_tokens_total", "value_dropped")]
    answer = tracker.evaluate(promrate.Query(tokens, E.WINDOW_RATE, window=10))
    assert answer.value == 30.0 and answer.reason is None
    assert answer.at == datetime.datetime.fromtimestamp(T0 + 10, UTC)
    assert answer.window == datetime.timedelta(seconds=10)
    # PromQL's increase over the same points sees the restart too: never negative.
    assert tracker.evaluate(promrate.Query(tokens, E.INCREASE, window=20)).value > 0


def test_a_restart_only_the_process_start_time_shows_and_two_processes_behind_one_url():
    tokens = "vllm:generation_tokens_total"
    page = lambda start, n: f"process_start_time_seconds {start}\n{tokens} {n}\n"
    tracker = promrate.Tracker([tokens])
    tracker.ingest(page(T0 - 100, 4000), T0)
    # Restarted at T0 + 5 and past the old value by T0 + 10: only the start time tells.
    report = tracker.ingest(page(T0 + 5, 6000), T0 + 10)
    assert [r.cause for r in report.resets] == ["process_restarted"]
    assert tracker.evaluate(promrate.Query(tokens, E.WINDOW_INCREASE, window=10)).value == 6000.0
    # Then the start time goes back: two processes answer in turn, no rate.
    tracker.ingest(page(T0 - 100, 4100), T0 + 20)
    answer = tracker.evaluate(promrate.Query(tokens, E.WINDOW_RATE, window=20))
    assert answer.value is None and answer.reason.kind == "erratic_counter"
    assert answer.reason.details["start_went_back"] is True


def test_per_label_promql_window_and_ewma_agree_on_a_steady_counter():
    tracker = promrate.Tracker(["vllm:generation_tokens_total"])
    for s in range(7):
        page = f'vllm:generation_tokens_total{{engine="0"}} {800 * s}\nvllm:generation_tokens_total{{engine="1"}} {400 * s}\n'
        tracker.ingest(page, T0 + 10 * s)
    for estimator, window in [(E.RATE, 60), (E.WINDOW_RATE, 60), (E.EWMA, None), (E.IRATE, 60)]:
        answer = tracker.evaluate(promrate.Query("vllm:generation_tokens_total", estimator, window, by=["engine"]))
        assert [(g.labels, g.value) for g in answer.groups] == [({"engine": "0"}, 80.0), ({"engine": "1"}, 40.0)], estimator
        assert answer.group("1").value == 40.0 and answer.group("9") is None
    window = tracker.evaluate(promrate.Query("vllm:generation_tokens_total", E.WINDOW_INCREASE, 60))
    assert window.value == 7200.0 and window.groups[0].series == 2
    coverage = window.groups[0].coverage
    assert (coverage.span, coverage.shortened) == (datetime.timedelta(seconds=60), None)
    assert tracker.evaluate(promrate.Query("vllm:generation_tokens_total", E.EWMA)).groups[0].coverage is None


def test_quantile_and_mean_of_a_histogram():
    ttft = "vllm:time_to_first_token_seconds"
    tracker = promrate.Tracker([ttft])

    def page(fast, total, seconds):
        return (
            f"# TYPE {ttft} histogram\n{ttft}_bucket{{le=\"0.1\"}} {fast}\n{ttft}_bucket{{le=\"1.0\"}} {total}\n"
            f"{ttft}_bucket{{le=\"+Inf\"}} {total}\n{ttft}_sum {seconds}\n{ttft}_count {total}\n"
        )

    tracker.ingest(page(500, 1000, 100.0), T0)
    tracker.ingest(page(590, 1100, 130.0), T0 + 60)
    minute = promrate.Query(ttft, E.WINDOW_INCREASE, window=60)
    assert abs(tracker.quantile(0.95, minute).value - 0.55) < 1e-9
    assert tracker.mean(minute).value == 0.3
    for q in (float("nan"), 95):
        with pytest.raises(promrate.QueryError) as raised:
            tracker.quantile(q, minute)
        assert raised.value.kind == "invalid_quantile"
    # A histogram's name with a rate: its parts would be added together.
    with pytest.raises(promrate.QueryError) as raised:
        tracker.evaluate(minute)
    assert raised.value.kind == "histogram_name"


def test_no_value_says_why():
    tracker = promrate.Tracker()
    tracker.ingest('t_total{engine="0"} 0\nt_total{engine="1"} 0\nkv 0.5\n', T0)
    one = tracker.evaluate(promrate.Query("t_total", E.WINDOW_RATE, 10))
    assert one.value is None and one.reason.kind == "too_few_scrapes" and one.reason.details["found"] == 1
    typo = tracker.evaluate(promrate.Query("t_total", E.EWMA, by=["engnie"]))
    assert typo.missing_labels == ["engnie"]
    gauge = tracker.evaluate(promrate.Query("kv", E.EWMA))
    assert (gauge.reason.kind, gauge.reason.details) == ("not_a_counter", {"name": "kv"})
    tracker.ingest('t_total{engine="0"} 100\n', T0 + 10)
    gone = tracker.evaluate(promrate.Query("t_total", E.WINDOW_RATE, 10, by=["engine"])).group("1")
    assert gone.value is None and gone.reason.kind == "not_on_newest_page"
    assert gone.reason.details["last_seen"] == datetime.datetime.fromtimestamp(T0, UTC)
    missing = tracker.evaluate(promrate.Query("t:total", E.EWMA))
    assert missing.groups == [] and missing.reason.kind == "no_series"
    # PromQL's way counts the series that stopped until it goes stale.
    promql_like = promrate.Query("t_total", E.WINDOW_RATE, 10, scope=promrate.SeriesScope.UNTIL_STALE, by=["engine"])
    assert tracker.evaluate(promql_like).group("0").value == 10.0


def test_query_errors_are_exceptions_with_a_kind():
    tracker = promrate.Tracker(["a_total"], retention=60, ewma_time_constant=10)
    tracker.ingest("a_total 1\n", T0)
    cases = [
        (promrate.Query("b_total", E.RATE, 10), "not_tracked"),
        (promrate.Query("a_total", E.RATE), "window_missing"),
        (promrate.Query("a_total", E.RATE, 120), "window_beyond_retention"),
        (promrate.Query("a_total", E.IRATE, 10, modifier="anchored"), "modifier_not_allowed"),
        (promrate.Query("a_total", E.EWMA, 30), "ewma_time_constant"),
    ]
    for query, kind in cases:
        with pytest.raises(promrate.QueryError) as raised:
            tracker.evaluate(query)
        assert raised.value.kind == kind, query
        # Said in Python, as whole sentences: no Rust call a Python user cannot type.
        assert "::" not in str(raised.value) and "(..)" not in str(raised.value), str(raised.value)
    with pytest.raises(promrate.QueryError, match=r"window=\.\.\."):
        tracker.evaluate(promrate.Query("a_total", E.RATE))
    with pytest.raises(promrate.QueryError, match=r"given to Tracker\(\[\.\.\.\]\)"):
        tracker.evaluate(promrate.Query("b_total", E.RATE, 10))
    with pytest.raises(ValueError, match="modifier is 'anchored', 'smoothed' or None"):
        promrate.Query("a_total", E.RATE, 10, modifier="other")


def test_ingest_errors_refuse_the_whole_scrape():
    tracker = promrate.Tracker(max_series=2)
    tracker.ingest("a 1\nb 1\n", T0)
    with pytest.raises(promrate.IngestError) as raised:
        tracker.ingest("a 2\nb 2\nc 2\n", T0 + 1)
    assert raised.value.kind == "series_limit" and (len(tracker), tracker.scrapes) == (2, 1)
    with pytest.raises(promrate.IngestError) as raised:
        tracker.ingest("a 3\n", T0)
    assert raised.value.kind == "not_after_last"
    assert "not after the previous scrape" in str(raised.value)


def test_times_and_durations():
    tracker = promrate.Tracker()
    aware = datetime.datetime(2025, 11, 24, 16, 0, tzinfo=UTC)
    tracker.ingest("a_total 0\n", aware)
    tracker.ingest("a_total 10\n", aware.timestamp() + 2.5)  # Unix seconds, a float
    tracker.ingest("a_total 20\n", datetime.datetime(2025, 11, 24, 17, 0, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=1))))
    assert tracker.last_scrape == aware + datetime.timedelta(seconds=5)
    rate = tracker.evaluate(promrate.Query("a_total", E.WINDOW_RATE, datetime.timedelta(seconds=2.5)))
    assert rate.value == 4.0
    with pytest.raises(ValueError, match="naive datetime"):
        tracker.ingest("a_total 30\n", datetime.datetime(2025, 11, 24, 16, 0, 10))
    with pytest.raises(TypeError, match="aware datetime or Unix seconds"):
        tracker.ingest("a_total 30\n", "now")
    with pytest.raises(TypeError, match="timedelta or seconds"):
        promrate.Query("a_total", E.RATE, "1m")


def test_settings_are_checked_when_given_and_name_themselves():
    for kwargs, words in [
        ({"retention": -5}, "retention is a duration longer than 0, not -5 s"),
        ({"retention": 0}, "retention is a duration longer than 0, not 0 s"),
        ({"ewma_time_constant": 0}, "ewma_time_constant is a duration longer than 0"),
        ({"ewma_restart_after": -1}, "ewma_restart_after is a duration longer than 0"),
        ({"stale_after": -1}, "stale_after is a count, 0 or more, not -1"),
        ({"max_series": -1}, "max_series is a count, 0 or more, not -1"),
        ({"start_time_skew": -1}, "start_time_skew is how far clocks may be apart, 0 or more, not -1 s"),
    ]:
        with pytest.raises(ValueError, match=words):
            promrate.Tracker(**kwargs)
    # One selector where a list is asked for: the list it meant.
    with pytest.raises(TypeError, match=r"a list is asked for here: \['a_total'\], not 'a_total'"):
        promrate.Tracker("a_total")
    with pytest.raises(TypeError, match=r"\['engine'\], not 'engine'"):
        promrate.Query("a_total", E.RATE, 60, by="engine")
    assert repr(promrate.Tracker(["a_total"], max_series=10, stale_after=0, start_time_skew=0)) == "Tracker(['a_total'], series=0, scrapes=0)"


def test_the_ewma_time_constant_is_30_s_by_default_as_documented():
    assert "ewma_time_constant` (default 30 s)" in promrate.Tracker.__doc__
    tracker = promrate.Tracker()
    for k, value in enumerate([1000, 1300, 1600]):
        tracker.ingest(f"a_total {value}\n", T0 + 15 * k)
    # 20/s over each 15 s interval: the EWMA starts at the first interval's rate.
    assert tracker.evaluate(promrate.Query("a_total", E.EWMA)).value == 20.0
    tracker.ingest("a_total 1600\n", T0 + 45)
    weight = 1 - math.exp(-15 / 30)
    assert tracker.evaluate(promrate.Query("a_total", E.EWMA)).value == pytest.approx(20.0 * (1 - weight), rel=1e-12)


def test_bytes_that_are_not_utf8_are_bad_lines_and_the_rest_is_read():
    report = promrate.Tracker().ingest(b'a_total 1\nb_total{x="\xff"} 2\nc_total 3\n', T0)
    assert (report.samples, report.bad_lines) == (2, 1)
    assert str(report.first_error) == "line 2, column 12: not UTF-8"


def test_bad_lines_are_counted_and_the_first_reported():
    report = promrate.Tracker().ingest('a_total 1\nb_total{x="1" 2\nc_total NaNx\nd_total 4\n', T0)
    assert (report.samples, report.bad_lines) == (2, 2)
    assert str(report.first_error) == "line 2, column 15: expected ',' or '}' after a label"


def test_vllm_pages_with_the_preset_in_both_formats():
    # Two real vLLM 0.33 pages ten seconds apart, in the text format; and its OpenMetrics
    # page (names spelled vllm_...) read with the preset.
    t0 = (DATA / "vllm" / "vllm-0.33-v1-single-t0.prom").read_text()
    t10 = (DATA / "vllm" / "vllm-0.33-v1-single-t10.prom").read_text()
    tokens = "vllm:generation_tokens_total"
    tracker = promrate.Tracker([tokens]).vllm_preset()
    tracker.ingest(t0, T0)
    tracker.ingest(t10, T0 + 10)

    def value(page):
        [s] = [e for e in promrate.parse(page) if isinstance(e, promrate.Sample) and e.name == tokens]
        return s.value

    assert tracker.evaluate(promrate.Query(tokens, E.WINDOW_RATE, 10)).value == (value(t10) - value(t0)) / 10
    om = (DATA / "vllm" / "vllm-0.33-v1-single-t0.openmetrics.txt").read_text()
    om_tracker = promrate.Tracker([tokens]).vllm_preset().read_as("application/openmetrics-text; version=1.0.0")
    report = om_tracker.ingest(om, T0)
    assert report.bad_lines == 0 and report.samples == 1 and report.unmatched is None
    unmatched = promrate.Tracker([tokens]).ingest("vllm_generation_tokens_total 1\n", T0).unmatched
    assert unmatched.nearest == ["vllm_generation_tokens_total"] and unmatched.differs_in_separators
    # What to do, as Python spells it.
    assert "Tracker(normalize_names=True), or Tracker.vllm_preset() for vLLM" in str(unmatched)
    assert "::" not in str(unmatched)


def test_reprs():
    tracker = promrate.Tracker(["a_total"])
    assert repr(tracker) == "Tracker(['a_total'], series=0, scrapes=0)"
    query = promrate.Query("a_total", E.RATE, 60, at=T0, by=["engine"], modifier="smoothed", lookback=120)
    assert repr(query) == "Query('a_total', Estimator.RATE, window=60 s, at=2025-11-24T16:00:00Z, by=['engine'], modifier='smoothed', lookback=120 s)"
    assert (query.estimator, query.selector) == (E.RATE, 'a_total')
    tracker.ingest("a_total 1\n", T0)
    assert repr(tracker.evaluate(promrate.Query("a_total", E.RATE, 60))) == (
        "Answer(value=None, reason=\"the window (2025-11-24T15:59:00Z, 2025-11-24T16:00:00Z] holds 1 point(s); "
        "PromQL's rate, increase and irate need 2 (the window is open on the left: a point exactly at its start is "
        "outside; a window longer than the scrape interval, or the window rate, reads it)\", "
        "at=2025-11-24T16:00:00Z, window=60 s)"
    )


def test_start_time_skew_tells_a_second_process_from_a_restart():
    def page(start, n):
        return f"process_start_time_seconds {start}\ntokens_total {n}\n"

    def run(**settings):
        tracker = promrate.Tracker(["tokens_total"], **settings)
        tracker.ingest(page(T0 - 3600, 500), T0)
        tracker.ingest(page(T0 - 3600, 600), T0 + 10)
        # Another process answers, up since half an hour: while the first answered.
        return tracker.ingest(page(T0 - 1800, 90_000), T0 + 20)

    assert [r.cause for r in run().resets] == ["process_restarted"]
    assert [r.cause for r in run(start_time_skew=60).resets] == ["start_went_back"]


def test_honor_timestamps_false_reads_samples_at_the_page_time():
    # OpenMetrics seconds served as the text format: read as milliseconds of 1970.
    def run(**settings):
        tracker = promrate.Tracker(["tokens_total"], **settings)
        tracker.ingest(f"tokens_total 0 {T0}\n", T0)
        tracker.ingest(f"tokens_total 500 {T0 + 1}\n", T0 + 1)
        return tracker.evaluate(promrate.Query(promrate.Selector("tokens_total"), promrate.Estimator.EWMA)).value

    assert run() == 500_000.0
    assert run(honor_timestamps=False) == 500.0


def test_a_report_gives_the_farthest_own_timestamp():
    tracker = promrate.Tracker()
    report = tracker.ingest(f"a_total 1 {(T0 - 86_400) * 1000}\n", T0)
    assert report.timestamp_skew == -86_400.0
    assert "timestamp_skew=-86400.0" in repr(report)
    assert tracker.ingest("a_total 2\n", T0 + 10).timestamp_skew is None
