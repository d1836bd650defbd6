"""The rates in Python are the library's, bit for bit: promrate.promql.RangeFunctions on
the PromQL oracle's vectors (tests/data/oracle, as tests/it/oracle.rs reads them) gives
every answer the Rust tests check, with the same agreement counts; and a Tracker fed the
oracle's counter series answers PromQL's rate, increase and irate with the same bits."""

import datetime
import decimal
import json
import math
import struct

import pytest

import promrate
from conftest import DATA
from promrate import promql

ORACLE = DATA / "oracle"


def number(v):
    if v is None:
        return None
    if isinstance(v, str):
        return {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf}.get(v) or float(v)
    return float(v)


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))


def points(series):
    return [(int(t), number(v)) for t, v in series]


def evaluate(fn, modifier, functions, pts, at_ms):
    at = at_ms / 1000
    target = {None: functions, "anchored": functions.anchored(), "smoothed": functions.smoothed()}[modifier]
    return getattr(target, fn)(pts, at)


def promqltest_agrees(got, want):
    """As tests/it/oracle.rs: bit for bit, or within promqltest's 1e-6 of a literal
    written with fewer than 16 digits, or one ulp from a full-precision literal."""
    if same(got, want):
        return "bit_exact"
    if got is None or want is None or not (math.isfinite(got) and math.isfinite(want)):
        return "differs"
    digits = len(decimal.Decimal(repr(want)).normalize().as_tuple().digits)
    close = abs(got - want) <= 1e-6 * max(abs(got), abs(want), 2.2250738585072014e-308)
    ulps = abs(struct.unpack("<q", struct.pack("<d", got))[0] - struct.unpack("<q", struct.pack("<d", want))[0])
    if close and digits < 16:
        return "short_literal"
    if close and ulps <= 1:
        return "one_ulp"
    return "differs"


@pytest.mark.parametrize(
    "name, semantics, counts",
    [
        ("promqltest-v3.json", promql.Semantics.PROMETHEUS3, (276, 251, 23, 2)),
        ("promqltest-v2.42.json", promql.Semantics.PROMETHEUS2, (92, 91, 1, 0)),
    ],
)
def test_promqltest_answers(name, semantics, counts):
    cases = json.loads((ORACLE / name).read_text())
    tally = {"bit_exact": 0, "short_literal": 0, "one_ulp": 0, "differs": 0}
    failures = []
    for case in cases:
        functions = promql.RangeFunctions(datetime.timedelta(milliseconds=case["window_ms"]), semantics=semantics)
        for labels, series in case["series"].items():
            got = evaluate(case["fn"], case.get("modifier"), functions, points(series), case["time_ms"])
            want = number(case["expected"].get(labels))
            agreement = promqltest_agrees(got, want)
            tally[agreement] += 1
            if agreement == "differs":
                failures.append(f"{case['expr']} {labels}: got {got}, want {want}")
    assert failures == []
    assert (sum(tally.values()), tally["bit_exact"], tally["short_literal"], tally["one_ulp"]) == counts


def random_oracle():
    return json.loads((ORACLE / "random.json").read_text())


def test_random_series_answers_bit_for_bit():
    oracle = random_oracle()
    series = [points(s) for s in oracle["series"]]
    lookback = datetime.timedelta(milliseconds=oracle["lookback_ms"])
    checked, failures = 0, []
    for query in oracle["queries"]:
        window = datetime.timedelta(milliseconds=query["range_ms"])
        for key, semantics, modifier in [
            ("v2", promql.Semantics.PROMETHEUS2, None),
            ("v3", promql.Semantics.PROMETHEUS3, None),
            ("v3_anchored", promql.Semantics.PROMETHEUS3, "anchored"),
            ("v3_smoothed", promql.Semantics.PROMETHEUS3, "smoothed"),
        ]:
            answers = query.get(key)
            if answers is None:
                continue
            functions = promql.RangeFunctions(window, semantics=semantics, lookback=lookback)
            for i, want in enumerate(answers):
                got = evaluate(query["fn"], modifier, functions, series[i], query["at_ms"])
                checked += 1
                if not same(got, number(want)):
                    failures.append(f"{key} {query['fn']} at {query['at_ms']} series {i}: got {got}, want {want}")
    assert checked == 45_888, "random.json holds 45,888 answers"
    assert failures[:30] == []


def test_a_tracker_answers_promqls_functions_bit_for_bit():
    """Each counter series of random.json (no NaN) scraped into a Tracker, one page per
    point; PromQL's rate, increase and irate asked at every query's time and window, as
    PromQL counts series (UNTIL_STALE), equal the oracle's 3.x answers."""
    oracle = random_oracle()
    estimators = {"rate": promrate.Estimator.RATE, "increase": promrate.Estimator.INCREASE, "irate": promrate.Estimator.IRATE}
    queries = [q for q in oracle["queries"] if q["fn"] in estimators]
    checked, answered, failures = 0, 0, []
    for i, raw in enumerate(oracle["series"]):
        pts = points(raw)
        if any(math.isnan(v) or v < 0 for _, v in pts):
            continue
        tracker = promrate.Tracker(["x_total"], retention=datetime.timedelta(days=1), stale_after=10**6)
        for t_ms, v in pts:
            tracker.ingest(f"x_total {v!r}\n", t_ms / 1000)
        for query in queries:
            asked = promrate.Query(
                "x_total",
                estimators[query["fn"]],
                datetime.timedelta(milliseconds=query["range_ms"]),
                at=query["at_ms"] / 1000,
                scope=promrate.SeriesScope.UNTIL_STALE,
            )
            got = tracker.evaluate(asked).value
            want = number(query["v3"][i])
            checked += 1
            answered += got is not None
            if not same(got, want):
                failures.append(f"series {i} {query['fn']}[{query['range_ms']}ms] at {query['at_ms']}: got {got}, want {want}")
    assert failures[:30] == []
    # 20 of the 24 series are counters; 244 queries of these functions each; the others
    # have a reason (too few points in the window).
    assert (checked, answered) == (4_880, 955)


def test_start_timestamp_answers_bit_for_bit_with_prometheus_3_14_rules():
    """The start-time oracle's random series (tests/data/oracle/start-timestamps.json, our
    transcription of Prometheus 3.14's rules): every answer of the four functions through
    promql.RangeFunctions(...).with_start_times(...)."""
    import json
    import math

    from promrate import promql

    oracle = json.loads((DATA / "oracle" / "start-timestamps.json").read_text())
    number = lambda v: None if v is None else float(v)
    series = [
        ([(int(p[0]), number(p[1])) for p in s], [int(p[2]) for p in s]) for s in oracle["random"]["series"]
    ]
    checked = 0
    for q in oracle["random"]["queries"]:
        f = promql.RangeFunctions(window=q["window_ms"] / 1000)
        for (points, starts), want in zip(series, q["answer"]):
            got = getattr(f.with_start_times(starts), q["fn"])(points, at=q["at_ms"] / 1000)
            want = number(want)
            assert (got is None) == (want is None) and (
                got is None or got == want or (math.isnan(got) and math.isnan(want))
            ), (q, got, want)
            checked += 1
    assert checked == 24_000


def test_range_functions_refuse_what_promql_refuses_and_name_it():
    # PromQL refuses `x[0s]` when it parses the query: None from every function would say
    # nothing of why.
    for window in (0, -1):
        with pytest.raises(ValueError, match=f"window is a duration longer than 0, not {window} s"):
            promql.RangeFunctions(window=window)
    with pytest.raises(ValueError, match="lookback is a duration longer than 0"):
        promql.RangeFunctions(window=60, lookback=0)
    points = [(120_000, 1.0), (180_000, 2.0), (240_000, 3.0), (300_000, 4.0)]
    aware = promql.RangeFunctions(window=300).with_start_times([90_000])
    with pytest.raises(ValueError, match=r"1 start time\(s\) for 4 point\(s\): one per point"):
        aware.increase(points, at=360)
    assert promql.RangeFunctions(window=300).with_start_times([90_000] * 4).increase(points, at=360) == 5.142857142857143
