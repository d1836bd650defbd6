//! The TSDB source against canned answers of the API: matrices, error bodies, the split
//! of requests, the pages, and a past span read from a tiny HTTP server on a free port.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use clap::Parser as _;

use super::api::{parse_each, parse_matrix, parse_strings, ApiError, Series};
use super::pages::{self, head, written, Span, Written};
use super::split::{group_instances, intervals_per_request, selector};
use super::*;
use crate::gpus::GpuSettings;
use crate::http::Access;
use crate::pipeline::{Pipeline, Settings};
use crate::when::parse_time;

const MATRIX: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[
 {"metric":{"__name__":"vllm:generation_tokens_total","instance":"b:8000","job":"vllm"},
  "values":[[1800000002,"30"],[1800000001.5,"20"]]},
 {"metric":{"__name__":"vllm:num_requests_running","instance":"a:8000","model_name":"m \"q\""},
  "values":[[1800000001.25,"NaN"],[1800000002.25,"+Inf"]]}]}}"#;

#[test]
fn a_matrix_is_read_with_its_own_timestamps_sorted() {
    let series = parse_matrix(200, MATRIX).unwrap();
    assert_eq!(series.len(), 2);
    assert_eq!(series[0].name, "vllm:generation_tokens_total");
    assert_eq!(
        series[0].samples,
        vec![(1_800_000_001_500, 20.0), (1_800_000_002_000, 30.0)]
    );
    assert!(series[1].samples[0].1.is_nan() && series[1].samples[1].1 == f64::INFINITY);
    let whole = written(series);
    let as_read: Vec<Written> = pages::sorted(parse_each(200, MATRIX).unwrap());
    assert_eq!(as_read.len(), whole.len(), "written as read: every series");
    for (a, b) in whole.iter().zip(&as_read) {
        assert_eq!(a.head, b.head, "written as read: the same lines");
        assert_eq!(
            a.samples.iter().map(|s| (s.0, s.1.to_bits())).collect::<Vec<_>>(),
            b.samples.iter().map(|s| (s.0, s.1.to_bits())).collect::<Vec<_>>(),
            "written as read: the same samples, bit for bit"
        );
    }
    let heads: Vec<String> = whole.into_iter().map(|w| w.head).collect();
    assert_eq!(
        heads,
        [
            r#"vllm:generation_tokens_total{instance="b:8000",job="vllm"}"#,
            r#"vllm:num_requests_running{instance="a:8000",model_name="m \"q\""}"#,
        ]
    );
    assert_eq!(
        head("a.b", &[]),
        r#"{"a.b"}"#,
        "a name outside the classic set is quoted"
    );
}

/// A sample whose value is no number (text that is none, `""`, `null`, a JSON number, one
/// beyond `f64`) is left out and counted, the first named; its series' other samples and
/// the other series are read (the whole answer was refused: every instance went blank,
/// and each read after reached back to the same sample). The API's warnings and infos
/// come with the answer.
#[test]
fn a_sample_that_is_no_number_is_left_out_and_the_rest_read() {
    let answer = r#"{"status":"success","warnings":["partial response: store s1 unavailable"],
      "infos":["some info"],"data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"a","instance":"i1"},"values":[[1,"1"],[2,"1e400"],[3,"3"],[4,""],[5,null],[6,7],[7,"x"],[8,[1]],[9,"9"]]},
      {"metric":{"__name__":"b","instance":"i2"},"values":[[1,"5"]]}]}}"#;
    let read = super::api::parse_answer::<Series>(200, answer).unwrap();
    let samples: Vec<Vec<(i64, f64)>> = read.series.iter().map(|s| s.samples.clone()).collect();
    assert_eq!(
        samples,
        [vec![(1_000, 1.0), (3_000, 3.0), (9_000, 9.0)], vec![(1_000, 5.0)]]
    );
    assert_eq!(read.unreadable.samples, 6);
    assert_eq!(read.unreadable.first.as_deref(), Some(r#"a: "1e400""#));
    assert_eq!(read.said, ["partial response: store s1 unavailable", "some info"]);
    let written = parse_each::<Written>(200, answer).unwrap();
    assert_eq!(written.len(), 2);
}

#[test]
fn the_apis_errors_say_what_to_change() {
    let cases = [
        (
            422,
            r#"{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}"#,
            "--query.max-samples",
        ),
        (
            503,
            r#"{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}"#,
            "--query.timeout",
        ),
        (
            422,
            r#"{"status":"error","errorType":"422","error":"cannot select more than -search.maxSamplesPerQuery=1000 samples"}"#,
            "-search.maxSamplesPerQuery",
        ),
        (
            400,
            r#"{"status":"error","errorType":"bad_data","error":"1:2: parse error: unexpected"}"#,
            "refused the query as written",
        ),
        (401, "Unauthorized\n", "--bearer-token-file"),
        (404, "404 page not found\n", "/api/v1/query"),
    ];
    for (status, body, advice) in cases {
        let error = parse_matrix(status, body).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with(&format!("HTTP {status}")), "{text}");
        assert!(text.contains(advice), "{status}: {text}");
        if body.starts_with('{') {
            // The API's own words are kept whole.
            let message: serde_json::Value = serde_json::from_str(body).unwrap();
            assert!(text.contains(message["error"].as_str().unwrap()), "{text}");
            assert!(matches!(error, ApiError::Refused { .. }));
        } else {
            assert!(matches!(error, ApiError::NotApi { .. }), "{text}");
        }
    }
    assert_eq!(
        parse_strings(200, r#"{"status":"success","data":["a","b"]}"#).unwrap(),
        ["a", "b"]
    );
}

#[test]
fn requests_are_split_by_instance_and_time() {
    let instances: Vec<String> = (0..10).map(|i| format!("10.0.0.{i}:8000")).collect();
    let counts: Vec<(String, usize)> = instances.iter().map(|i| (i.clone(), 400)).collect();
    assert_eq!(
        group_instances(&instances, &counts, 4_000),
        vec![Vec::<String>::new()]
    );
    let groups = group_instances(&instances, &counts, 1_000);
    assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 2, 2, 2]);
    assert_eq!(groups.concat(), instances, "every instance once, in order");
    // An instance not counted (gone at the count's time) is taken as large as the largest.
    let groups = group_instances(&instances, &counts[..1], 1_000);
    assert_eq!(groups.len(), 5);
    // 10,000 servers of 393 series: groups of 508 servers (200,000 series at most).
    let fleet: Vec<String> = (0..10_000).map(|i| format!("s{i:05}")).collect();
    let sized: Vec<(String, usize)> = fleet.iter().map(|i| (i.clone(), 393)).collect();
    let groups = group_instances(&fleet, &sized, split::MAX_SERIES_PER_REQUEST);
    assert!(groups
        .iter()
        .all(|g| g.len() * 393 <= split::MAX_SERIES_PER_REQUEST));
    assert_eq!(groups.len(), 20);
    // 15 s intervals and a 30 s lookback: 44,444 series a request (113 vLLM servers).
    assert_eq!(split::series_per_request(15_000, 30_000, 1.0), 44_444);
    assert_eq!(
        split::series_per_request(1_000, 0, 1.0),
        split::MAX_SERIES_PER_REQUEST
    );
    // Time: a request's samples at a sample per second stay under the bound.
    let n = intervals_per_request(200_000, 15_000, 30_000, split::MAX_SAMPLES_PER_REQUEST, 1.0);
    assert_eq!(n, 1, "10 s per series: one 15 s interval");
    let n = intervals_per_request(400, 1_000, 30_000, split::MAX_SAMPLES_PER_REQUEST, 1.0);
    assert_eq!(n, split::MAX_INTERVALS_PER_REQUEST);
    assert!(
        intervals_per_request(20_000, 2_000, 30_000, split::MAX_SAMPLES_PER_REQUEST, 1.0) * 2 + 30 <= 100
    );
    // The answers of all groups kept only when they fit together: not at 10,000 servers
    // (3.93 M series) nor at 1,000, where each group is read when due and then dropped.
    for series in [3_930_000, 393_000] {
        let reads = split::past_reads(series, 15_000, 30_000, 1.0);
        assert_eq!(
            reads,
            split::PastReads {
                keep_answers: false,
                intervals_per_request: 1
            }
        );
    }
    // At the density measured: a TSDB scraping every 15 s holds 3 samples a series over
    // 45 s, so 1,000 servers (393,000 series) are read in two requests of 200,000 series
    // at most, kept for 3 intervals; 10,000 scraped every 30 s still one at a time.
    let every_15_s: Vec<(i64, f64)> = (0..21).map(|k| (k * 15_000, 0.0)).collect();
    let late: Vec<(i64, f64)> = vec![(285_000, 0.0), (300_000, 0.0)];
    let density = split::samples_per_s([every_15_s.as_slice(), late.as_slice(), &[]]).unwrap();
    assert!((density - 1.0 / 15.0).abs() < 1e-12, "{density}");
    assert_eq!(
        split::samples_per_s([&[(0, 1.0)][..]]),
        None,
        "one sample tells no density"
    );
    assert_eq!(
        split::series_per_request(15_000, 30_000, density),
        split::MAX_SERIES_PER_REQUEST
    );
    assert_eq!(
        split::past_reads(393_000, 15_000, 30_000, density),
        split::PastReads {
            keep_answers: true,
            intervals_per_request: 3
        }
    );
    assert!(!split::past_reads(3_930_000, 15_000, 30_000, 1.0 / 30.0).keep_answers);
    let reads = split::past_reads(20_000, 15_000, 30_000, 1.0);
    assert!(reads.keep_answers);
    assert_eq!(
        reads.intervals_per_request, 4,
        "100 s a series: the 30 s lookback and four 15 s intervals"
    );
    let narrowed = selector(
        r#"{__name__=~"vllm[:_].+"}"#,
        &["10.0.0.1:8000".into(), "x".into()],
    );
    assert_eq!(
        narrowed,
        r#"{__name__=~"vllm[:_].+",instance=~"10\\.0\\.0\\.1:8000|x"}"#
    );
}

#[test]
fn times_are_rfc_3339_or_before_now() {
    let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    assert_eq!(parse_time("now").unwrap().resolve(now), now);
    assert_eq!(parse_time("-2h").unwrap().resolve(now), now - TimeDelta::hours(2));
    assert_eq!(
        parse_time("now-30m").unwrap().resolve(now),
        now - TimeDelta::minutes(30)
    );
    assert_eq!(
        parse_time("2027-01-15T08:00:00+01:00").unwrap().resolve(now),
        DateTime::parse_from_rfc3339("2027-01-15T07:00:00Z").unwrap()
    );
    for bad in ["yesterday", "2h", "-two hours", "2027-13-01T00:00:00Z"] {
        let e = parse_time(bad).unwrap_err();
        assert!(e.contains("RFC 3339"), "{bad}: {e}");
    }
}

/// The k-th new sample of each series on the k-th page; a series without a new sample in
/// the span repeats its newest within the lookback, one from before it is left out.
#[test]
fn a_span_becomes_pages_of_explicit_timestamps() {
    let s = |name: &str, samples: &[(i64, f64)]| super::api::Series {
        name: name.into(),
        labels: vec![("instance".into(), "a".into())],
        samples: samples.to_vec(),
    };
    let series = written(vec![
        s("fast_total", &[(900, 1.0), (1_100, 2.0), (1_600, 3.0)]),
        s("slow_total", &[(950, 7.0)]),
        s("old_total", &[(100, 5.0)]),
    ]);
    let span = Span::of(&series, 1_000, 2_000, 500);
    assert_eq!(span.pages, 2);
    let (first, newest) = span.page(&series, 0);
    assert_eq!(
        first,
        "fast_total{instance=\"a\"} 2 1100\nslow_total{instance=\"a\"} 7 950\n"
    );
    assert_eq!(newest, Some(1_100));
    let (second, newest) = span.page(&series, 1);
    assert_eq!(
        second,
        "fast_total{instance=\"a\"} 3 1600\nslow_total{instance=\"a\"} 7 950\n"
    );
    assert_eq!(newest, Some(1_600));
    let empty = Span::of(&series, 2_000, 3_000, 300);
    assert_eq!(empty.pages, 0, "nothing within the lookback: no page");
}

/// A repeat is left out when its instance is not among those served, read from its line
/// as written: a whole `instance` label (not `xinstance`), its escapes kept; a series
/// with new samples, or without an instance, is kept whatever is served.
#[test]
fn repeats_of_instances_not_served_are_left_out() {
    let s = |name: &str, labels: &[(&str, &str)], samples: &[(i64, f64)]| super::api::Series {
        name: name.into(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        samples: samples.to_vec(),
    };
    let series = written(vec![
        s(
            "a_total",
            &[("xinstance", "gone"), ("instance", "b\"c")],
            &[(900, 1.0)],
        ),
        s("b_total", &[("instance", "gone")], &[(950, 2.0)]),
        s("c_total", &[("instance", "gone")], &[(1_500, 3.0)]),
        s("d_total", &[], &[(800, 4.0)]),
    ]);
    let mut span = Span::of(&series, 1_000, 2_000, 500);
    let (dropped, newest) = span.drop_repeats_unless(&series, ["b\"c"]);
    assert_eq!((dropped, newest), (vec!["gone".to_string()], Some(950)));
    let (page, _) = span.page(&series, 0);
    assert_eq!(
        page,
        "a_total{xinstance=\"gone\",instance=\"b\\\"c\"} 1 900\n\
         c_total{instance=\"gone\"} 3 1500\nd_total 4 800\n"
    );
    let mut span = Span::of(&series, 1_000, 2_000, 500);
    let (dropped, _) = span.drop_repeats_unless(&series, []);
    assert_eq!(dropped, ["b\\\"c", "gone"], "as written, escapes kept");
    assert_eq!(span.pages, 1);
}

/// A tiny Prometheus HTTP API on a free port: answers by the request's path, keeps the
/// paths asked, and stops when dropped.
struct CannedApi {
    port: u16,
    asked: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl CannedApi {
    fn start(answer: impl Fn(&str) -> (u16, String) + Send + 'static) -> CannedApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (kept, stopped) = (Arc::clone(&asked), Arc::clone(&stop));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                let mut line = String::new();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                reader.read_line(&mut line).unwrap();
                let mut header = String::new();
                while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                    header.clear();
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                let decoded = percent_encoding::percent_decode_str(&path)
                    .decode_utf8_lossy()
                    .into_owned();
                let (status, body) = answer(&decoded);
                kept.lock().unwrap().push(decoded);
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        CannedApi { port, asked, stop }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for CannedApi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn success(data: &str) -> (u16, String) {
    (200, format!(r#"{{"status":"success","data":{data}}}"#))
}

/// The `time=` and `[Nms]` of a samples query.
fn range_of(path: &str) -> Option<(i64, i64)> {
    let range: i64 = path.split("}[").nth(1)?.split("ms]").next()?.parse().ok()?;
    let time: f64 = path.split("time=").nth(1)?.split('&').next()?.parse().ok()?;
    Some(((time * 1000.0).round() as i64, range))
}

/// The matrix of `instances`' counters at 100 tokens/s each, scraped every 500 ms and
/// restarted (from 0) at `restart_ms`, over the `range` ms before `at`.
fn counter_matrix(instances: &[&str], at: i64, range: i64, restart_ms: i64) -> (u16, String) {
    counter_matrix_every(500, instances, at, range, restart_ms)
}

/// [`counter_matrix`] scraped every `step` ms.
fn counter_matrix_every(
    step: i64,
    instances: &[&str],
    at: i64,
    range: i64,
    restart_ms: i64,
) -> (u16, String) {
    let servers: Vec<(&str, i64)> = instances.iter().map(|i| (*i, 0)).collect();
    offset_matrix(step, &servers, at, range, restart_ms)
}

/// Servers at 100 tokens/s each, scraped every `step` ms, each `offset` ms into the step,
/// restarted (from 0) at `restart_ms`: the matrix over the `range` ms before `at`.
fn offset_matrix(step: i64, servers: &[(&str, i64)], at: i64, range: i64, restart_ms: i64) -> (u16, String) {
    let result: Vec<String> = servers
        .iter()
        .map(|(instance, offset)| {
            let first = (at - range - offset).div_euclid(step) + 1;
            let values: Vec<String> = (first..=(at - offset).div_euclid(step))
                .map(|k| {
                    let t = k * step + offset;
                    let tokens = if t >= restart_ms {
                        (t - restart_ms) / 10
                    } else {
                        t / 10
                    };
                    format!("[{}.{:03},\"{tokens}\"]", t / 1000, t % 1000)
                })
                .collect();
            format!(
                r#"{{"metric":{{"__name__":"vllm:generation_tokens_total","instance":"{instance}"}},"values":[{}]}}"#,
                values.join(",")
            )
        })
        .collect();
    success(&format!(
        r#"{{"resultType":"matrix","result":[{}]}}"#,
        result.join(",")
    ))
}

/// A counter at 100 tokens/s scraped every 500 ms, restarted (from 0) at `restart_ms`.
fn counter_api(restart_ms: i64) -> impl Fn(&str) -> (u16, String) {
    move |path: &str| {
        if path.starts_with("/api/v1/label/__name__/") {
            success(r#"["vllm:generation_tokens_total"]"#)
        } else if path.starts_with("/api/v1/label/instance/") {
            success(r#"["gpu1:8000"]"#)
        } else if path.contains("count by (instance)") {
            success(
                r#"{"resultType":"vector","result":[{"metric":{"instance":"gpu1:8000"},"value":[1,"1"]}]}"#,
            )
        } else if let Some((at, range)) = range_of(path) {
            counter_matrix(&["gpu1:8000"], at, range, restart_ms)
        } else {
            (404, "404 page not found".into())
        }
    }
}

fn settings() -> Settings {
    Settings {
        window: TimeDelta::seconds(4),
        interval: TimeDelta::seconds(1),
        timeout: TimeDelta::seconds(1),
        ewma_tau: TimeDelta::seconds(4),
        by: Some("instance".into()),
        max_groups: crate::top::DEFAULT_MAX_GROUPS,
        target_requests: None,
        gpu: GpuSettings::default(),
        slo: Vec::new(),
        max_series: usize::MAX,
        points_every: None,
    }
}

/// The TSDB's own scrape interval is measured at the start, so that each series' points
/// are allocated for what it holds, not one per interval; no denser than a sample a
/// second (the canned TSDB holds one every 500 ms).
#[test]
fn the_tsdbs_scrape_interval_is_measured_at_the_start() {
    assert_eq!(
        super::points_every(Some(1.0 / 30.0)),
        Some(TimeDelta::seconds(30))
    );
    assert_eq!(super::points_every(Some(1000.0)), Some(TimeDelta::seconds(1)));
    assert_eq!(super::points_every(None), None);
    let api = CannedApi::start(counter_api(i64::MAX));
    let started = started_from(
        &api,
        &["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:00:20Z"],
    );
    assert_eq!(started.points_every, Some(TimeDelta::seconds(1)));
}

/// `--prometheus` started on `api` with `args` (after the base URL).
fn started_from(api: &CannedApi, args: &[&str]) -> super::Started {
    let base = api.base();
    let mut argv = vec!["vllm_monitor", "--prometheus", &base];
    argv.extend_from_slice(args);
    let args = crate::args::Args::try_parse_from(argv).unwrap();
    let client = Access::default().client(Duration::from_secs(5), 1 << 20);
    start(&args, &base, client, Arc::new(AtomicBool::new(false))).unwrap()
}

/// What a past span's replay shows a test: a page (the reader before the page is read),
/// or an interval (the reader and the pipeline after its tick).
enum Seen<'a> {
    Page(&'a Reader),
    Tick(&'a Reader, &'a Pipeline),
}

/// Replays `--prometheus` from `api` with `args` (after the base URL) through a pipeline
/// of [`settings`], every page read without error; `seen` is shown each page and tick.
/// Returns the pipeline and the URLs the reader started with.
fn replay_past(api: &CannedApi, args: &[&str], seen: impl FnMut(Seen<'_>)) -> (Pipeline, Vec<String>) {
    replay_past_in(api, args, settings(), seen)
}

/// [`replay_past`] through a pipeline of `settings` (its `points_every` as measured).
fn replay_past_in(
    api: &CannedApi,
    args: &[&str],
    settings: Settings,
    mut seen: impl FnMut(Seen<'_>),
) -> (Pipeline, Vec<String>) {
    let started = started_from(api, args);
    let mut reader = started.reader;
    let settings = Settings {
        points_every: started.points_every,
        ..settings
    };
    let mut p = Pipeline::new(
        settings,
        started.schedule,
        &started.urls,
        String::new(),
        Vec::new(),
    );
    while !p.is_over() {
        let schedule = *p.schedule();
        match reader.next_step(&schedule, p.ticks()) {
            Step::Wait(_) => panic!("a past span never waits"),
            Step::Page(scrape) => {
                assert!(scrape.result.is_ok(), "{:?}", scrape.result.err());
                seen(Seen::Page(&reader));
                p.ingest(&scrape, 0);
            }
            Step::Tick => {
                p.tick();
                seen(Seen::Tick(&reader, &p));
            }
        }
    }
    (p, started.urls)
}

/// A past `span` read every `interval` through a pipeline with `window` and `timeout`:
/// the pipeline, and `row` of each interval's snapshot.
fn past_rows<T>(
    api: &CannedApi,
    span: [&str; 4],
    (interval, window, timeout): (TimeDelta, TimeDelta, TimeDelta),
    row: impl Fn(&crate::snapshot::Snapshot) -> T,
) -> (Pipeline, Vec<T>) {
    let settings = Settings {
        window,
        interval,
        timeout,
        ..settings()
    };
    let every = format!("{}s", interval.num_seconds());
    let mut rows = Vec::new();
    let (p, _) = replay_past_in(
        api,
        &[&span[..], &["--interval", &every]].concat(),
        settings,
        |seen| {
            if let Seen::Tick(_, p) = seen {
                rows.push(row(p.snapshot().unwrap()));
            }
        },
    );
    (p, rows)
}

/// A past span read from the canned API through the pipeline: every full window without
/// the restart is the counter's exact 100 tokens/s, and the restart is announced.
#[test]
fn a_past_span_is_read_through_the_pipeline_with_its_restart() {
    let from = 1_800_000_000_000;
    assert_eq!(
        DateTime::<Utc>::from_timestamp_millis(from).unwrap().to_rfc3339(),
        "2027-01-15T08:00:00+00:00"
    );
    let api = CannedApi::start(counter_api(from + 10_000));
    let span = ["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:00:20Z"];
    let mut rates = Vec::new();
    let (p, _) = replay_past(&api, &[&span[..], &["--interval", "1s"]].concat(), |seen| {
        if let Seen::Tick(_, p) = seen {
            let snapshot = p.snapshot().unwrap();
            rates.push((snapshot.elapsed, snapshot.figures.generation.window));
        }
    });
    assert_eq!(rates.len(), 20);
    let restarts: Vec<&str> = p
        .events()
        .iter()
        .filter(|(_, e)| e.kind == crate::events::EventKind::Restart)
        .map(|(_, e)| e.source.as_str())
        .collect();
    assert_eq!(restarts, ["gpu1:8000"], "{:?}", p.events());
    let mut checked = 0;
    for (elapsed, rate) in &rates {
        // Full windows away from the restart at 10 s.
        if *elapsed >= 5.0 && !(10.0..=15.0).contains(elapsed) {
            let rate = rate.unwrap_or_else(|| panic!("no rate at {elapsed} s: {rates:?}"));
            assert!((rate - 100.0).abs() < 1e-9, "{rate} at {elapsed} s");
            checked += 1;
        }
    }
    assert!(checked >= 10, "{rates:?}");
    // The scrape density measured once over five minutes, then the span in requests of
    // many intervals (one series), each asking its range once.
    let asked = api.asked.lock().unwrap().clone();
    let mut samples: Vec<(i64, i64)> = asked.iter().filter_map(|p| range_of(p)).collect();
    assert_eq!(samples.first(), Some(&(from + 20_000, 300_000)), "{asked:?}");
    samples.remove(0);
    assert_eq!(samples.len(), 1, "{asked:?}");
    assert!(
        samples[0].0 >= from + 20_000 && samples[0].1 >= 20_000 + 30_000,
        "{samples:?}"
    );
}

/// Read from a TSDB that scrapes more often than the monitor reads, a series keeps its
/// window and two of the TSDB's scrape intervals of points, not two of the monitor's
/// intervals: at 10,000 servers that is the difference between fitting in 1.5 GB or not.
#[test]
fn a_tsdb_series_keeps_two_of_the_tsdbs_intervals_beyond_its_window() {
    let span = ["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:00:40Z"];
    let api = CannedApi::start(counter_api(i64::MAX));
    let settings = Settings {
        window: TimeDelta::seconds(8),
        interval: TimeDelta::seconds(8),
        ..settings()
    };
    let mut most = 0;
    let mut ticks = 0;
    let (p, _) = replay_past_in(
        &api,
        &[&span[..], &["--interval", "8s"]].concat(),
        settings,
        |seen| {
            if let Seen::Tick(_, p) = seen {
                ticks += 1;
                let target = p.target(0).expect("not lent in a replay");
                for series in target.tracker.series() {
                    most = most.max(series.counter().map_or(0, |c| c.points().len()));
                }
            }
        },
    );
    // The canned TSDB holds a point every 500 ms; scrape density is measured no finer
    // than a second, so the retention is 8 s + 2 x 1 s: 20 points and the one at or
    // before its start. Two of the monitor's 8 s intervals would keep 49.
    assert_eq!(p.settings().points_every, Some(TimeDelta::seconds(1)));
    assert_eq!(p.settings().retention(), TimeDelta::seconds(10));
    assert_eq!(ticks, 5);
    assert!((20..=21).contains(&most), "{most} points");
}

/// A TSDB without the families: the error names them and the nearest names it has.
#[test]
fn a_missing_family_is_named_with_the_nearest_names() {
    let api = CannedApi::start(|path: &str| {
        if path.contains("match[]") {
            success("[]")
        } else if path.starts_with("/api/v1/label/__name__/") {
            success(r#"["up","vllm_generation_tokens","go_goroutines"]"#)
        } else {
            (404, "404 page not found".into())
        }
    });
    let args =
        crate::args::Args::try_parse_from(["vllm_monitor", "--prometheus", &api.base(), "--from", "-1h"])
            .unwrap();
    let client = Access::default().client(Duration::from_secs(5), 1 << 20);
    let Err(error) = start(&args, &api.base(), client, Arc::default()) else {
        panic!("started without the families")
    };
    assert!(
        error.contains("no series of the inference servers' families"),
        "{error}"
    );
    assert!(
        error.contains("the nearest names it has: vllm_generation_tokens"),
        "{error}"
    );
    assert!(!error.contains("go_goroutines"), "{error}");
    // A family missing beside the others is a note.
    let notes = missing_generation(&[
        "vllm:num_requests_running".into(),
        "vllm:generation_tokens".into(),
    ]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("vllm:generation_tokens_total is missing"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("vllm:generation_tokens"), "{}", notes[0]);
}

/// A refused query at the start is the API's words and what to change.
#[test]
fn a_refused_start_says_the_apis_words() {
    let api = CannedApi::start(|_: &str| {
        (
            401,
            r#"{"status":"error","errorType":"unauthorized","error":"authentication required"}"#.into(),
        )
    });
    let args = crate::args::Args::try_parse_from(["vllm_monitor", "--prometheus", &api.base()]).unwrap();
    let client = Access::default().client(Duration::from_secs(5), 1 << 20);
    let Err(error) = start(&args, &api.base(), client, Arc::default()) else {
        panic!("started without credentials")
    };
    assert!(
        error.contains("HTTP 401 (unauthorized): authentication required"),
        "{error}"
    );
    assert!(error.contains("--bearer-token-file"), "{error}");
}

/// A TSDB that refuses requests over 12 s of samples as too many: the past span is asked
/// again in halves until a request passes, and every interval is read.
#[test]
fn a_request_refused_as_too_large_is_halved_in_time() {
    let counter = counter_api(i64::MAX);
    let api = CannedApi::start(move |path: &str| {
        match range_of(path) {
        Some((_, range)) if range > 12_000 + 3_000 => (
            422,
            r#"{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}"#
                .into(),
        ),
        _ => counter(path),
    }
    });
    let mut pages = 0;
    let span = ["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:00:40Z"];
    let (p, _) = replay_past(
        &api,
        &[&span[..], &["--interval", "1s", "--lookback", "3s"]].concat(),
        |seen| {
            if let Seen::Page(_) = seen {
                pages += 1;
            }
        },
    );
    assert_eq!(p.ticks(), 40);
    assert_eq!(pages, 80, "every sample of the span, two a second");
    let rate = p.snapshot().unwrap().figures.generation.window.unwrap();
    assert!((rate - 100.0).abs() < 1e-9, "{rate}");
    let asked: Vec<(i64, i64)> = api
        .asked
        .lock()
        .unwrap()
        .iter()
        .filter_map(|p| range_of(p))
        .collect();
    assert!(
        asked.iter().any(|a| a.1 > 15_000),
        "the first request was refused: {asked:?}"
    );
    let passed: Vec<i64> = asked.iter().map(|a| a.1).filter(|&r| r <= 15_000).collect();
    assert!(passed.len() >= 4, "{asked:?}");
}

/// Two servers said to hold 1,500,000 series each (a fleet too large for all its answers
/// to be kept at once): each interval reads one group after the other, one answer is held
/// at a time, and every interval still has each server's exact rate.
#[test]
fn a_past_span_too_large_to_keep_holds_one_answer_at_a_time() {
    let api = CannedApi::start(|path: &str| {
        if path.starts_with("/api/v1/label/__name__/") {
            success(r#"["vllm:generation_tokens_total"]"#)
        } else if path.starts_with("/api/v1/label/instance/") {
            success(r#"["a:8000","b:8000"]"#)
        } else if path.contains("count by (instance)") {
            success(
                r#"{"resultType":"vector","result":[{"metric":{"instance":"a:8000"},"value":[1,"1500000"]},{"metric":{"instance":"b:8000"},"value":[1,"1500000"]}]}"#,
            )
        } else if let Some((at, range)) = range_of(path) {
            let named: Vec<&str> = ["a:8000", "b:8000"]
                .into_iter()
                .filter(|i| path.contains(i))
                .collect();
            counter_matrix(&named, at, range, i64::MAX)
        } else {
            (404, "404 page not found".into())
        }
    });
    let span = ["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:00:10Z"];
    let mut rates = Vec::new();
    let (_, urls) = replay_past(
        &api,
        &[&span[..], &["--interval", "1s", "--lookback", "3s"]].concat(),
        |seen| match seen {
            Seen::Page(reader) => {
                assert!(
                    reader.answers_held() <= 1,
                    "{} answers held",
                    reader.answers_held()
                );
            }
            Seen::Tick(reader, p) => {
                assert_eq!(reader.answers_held(), 0, "every answer dropped after its pages");
                let snapshot = p.snapshot().unwrap();
                let groups: Vec<Option<f64>> = snapshot.groups.as_ref().map_or(Vec::new(), |(_, g)| {
                    g.iter().map(|(_, f)| f.generation.window).collect()
                });
                rates.push((snapshot.elapsed, snapshot.figures.generation.window, groups));
            }
        },
    );
    assert_eq!(urls.len(), 2, "{urls:?}");
    assert_eq!(rates.len(), 10);
    for (elapsed, total, groups) in rates.iter().filter(|r| r.0 >= 5.0) {
        assert_eq!(groups.len(), 2, "at {elapsed} s");
        let exact = |rate: &Option<f64>, known: f64| {
            let rate = rate.unwrap_or_else(|| panic!("no rate at {elapsed} s: {rates:?}"));
            assert!((rate - known).abs() < 1e-9, "{rate} at {elapsed} s, not {known}");
        };
        exact(total, 200.0);
        groups.iter().for_each(|rate| exact(rate, 100.0));
    }
    // The density measured, then one request a group an interval, each for that interval
    // and the lookback.
    let mut asked: Vec<(i64, i64)> = api
        .asked
        .lock()
        .unwrap()
        .iter()
        .filter_map(|p| range_of(p))
        .collect();
    assert_eq!(asked.remove(0).1, 300_000, "{asked:?}");
    assert_eq!(asked.len(), 20, "{asked:?}");
    assert!(asked.iter().all(|a| a.1 == 1_000 + 3_000), "{asked:?}");
}

/// A TSDB of `servers` at 100 tokens/s each, a sample every 500 ms, whose last server stops
/// answering at `dead_ms`: its raw samples end there, and the TSDB marks its series stale
/// (its instant queries leave it out from then on).
fn tsdb_with_a_server_stopping(servers: &'static [&'static str], dead_ms: i64) -> CannedApi {
    let dying = servers[servers.len() - 1];
    CannedApi::start(move |path: &str| {
        if path.starts_with("/api/v1/label/__name__/") {
            success(r#"["vllm:generation_tokens_total"]"#)
        } else if path.starts_with("/api/v1/label/instance/") {
            let names: Vec<String> = servers.iter().map(|s| format!("\"{s}\"")).collect();
            success(&format!("[{}]", names.join(",")))
        } else if path.contains("count by (instance)") {
            let time: f64 = path
                .split("time=")
                .nth(1)
                .and_then(|t| t.split('&').next()?.parse().ok())
                .unwrap();
            let result: Vec<String> = servers
                .iter()
                .filter(|s| **s != dying || (time * 1000.0) as i64 <= dead_ms)
                .map(|i| format!(r#"{{"metric":{{"instance":"{i}"}},"value":[1,"1"]}}"#))
                .collect();
            success(&format!(
                r#"{{"resultType":"vector","result":[{}]}}"#,
                result.join(",")
            ))
        } else if let Some((at, range)) = range_of(path) {
            let series = |instance: &str| {
                let until = if instance == dying { at.min(dead_ms) } else { at };
                let first = (at - range).div_euclid(500) + 1;
                let values: Vec<String> = (first..=until.div_euclid(500))
                    .map(|k| format!("[{}.{:03},\"{}\"]", k * 500 / 1000, k * 500 % 1000, k * 50))
                    .collect();
                format!(
                    r#"{{"metric":{{"__name__":"vllm:generation_tokens_total","instance":"{instance}"}},"values":[{}]}}"#,
                    values.join(",")
                )
            };
            let result: Vec<String> = servers.iter().map(|s| series(s)).collect();
            success(&format!(
                r#"{{"resultType":"matrix","result":[{}]}}"#,
                result.join(",")
            ))
        } else {
            (404, "404 page not found".into())
        }
    })
}

/// Two servers; the second stops answering at 8 s, and the TSDB marks its series stale
/// while their newest raw samples stay within the lookback. It is gone from the pages at
/// the next interval, as `/federate` would leave it out, not 30 s later when the lookback
/// lets go of its samples.
#[test]
fn a_server_the_tsdb_marked_stale_is_gone_at_once() {
    let from: i64 = 1_800_000_000_000;
    let api = tsdb_with_a_server_stopping(&["gpu1:8000", "gpu2:8000"], from + 8_000);
    let span = ["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:00:20Z"];
    let (p, _) = replay_past(&api, &[&span[..], &["--interval", "1s"]].concat(), |_| {});
    let stale: Vec<(String, i64)> = p
        .events()
        .iter()
        .filter(|(_, e)| e.kind == crate::events::EventKind::Stale)
        .map(|(_, e)| (e.source.clone(), e.at.timestamp_millis() - from))
        .collect();
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert_eq!(stale[0].0, "gpu2:8000");
    assert!(stale[0].1 <= 10_000, "gone {} ms in", stale[0].1);
}

/// A lone server that stops answering: its group has nothing left to show, which the
/// reader says as a failed scrape naming the server and its newest sample, at the next
/// interval; the pages before it are its samples.
#[test]
fn a_lone_server_the_tsdb_marked_stale_is_a_failed_scrape() {
    let from: i64 = 1_800_000_000_000;
    let api = tsdb_with_a_server_stopping(&["gpu1:8000"], from + 8_000);
    let span = ["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:00:20Z"];
    let started = started_from(&api, &[&span[..], &["--interval", "1s"]].concat());
    let mut reader = started.reader;
    let mut p = Pipeline::new(
        settings(),
        started.schedule,
        &started.urls,
        String::new(),
        Vec::new(),
    );
    let mut failed = Vec::new();
    while !p.is_over() {
        let schedule = *p.schedule();
        match reader.next_step(&schedule, p.ticks()) {
            Step::Wait(_) => panic!("a past span never waits"),
            Step::Page(scrape) => {
                if let Err(message) = &scrape.result {
                    failed.push((scrape.end.timestamp_millis() - from, message.clone()));
                }
                p.ingest(&scrape, 0);
            }
            Step::Tick => {
                p.tick();
            }
        }
    }
    let (first_ms, message) = failed.first().unwrap_or_else(|| panic!("no failed scrape"));
    assert!((8_000..=10_000).contains(first_ms), "{failed:?}");
    assert_eq!(
        message,
        "no sample of gpu1:8000 since 2027-01-15T08:00:08.000Z: the TSDB marks its series stale \
         (its target stopped answering, or they left its page)"
    );
}

/// A TSDB that takes connections and never answers: a read waits as long as the caller's
/// patience and no longer, the request left to finish; the next read waits for that one
/// instead of sending another (one request at most is left waiting); a run that stops
/// gives up at once. (Nothing here asserts how long a wait took: only what was sent.)
#[test]
fn a_tsdb_that_never_answers_is_waited_for_an_interval_at_most_and_not_piled_up() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let taken = Arc::new(Mutex::new(Vec::new()));
    let held = Arc::clone(&taken);
    let server = std::thread::spawn(move || {
        // Each connection is kept open, unanswered, until the test ends.
        for stream in listener.incoming().take(2) {
            held.lock().unwrap().push(stream.unwrap());
        }
    });
    let stop = Arc::new(AtomicBool::new(false));
    let client = Access::default().client(Duration::from_secs(600), 1 << 20);
    let api = super::api::Api::new(&format!("http://127.0.0.1:{port}"), client, Arc::clone(&stop));
    let patience = || Some(std::time::Instant::now() + Duration::from_millis(300));
    api.patient_until(patience());
    let first = api.label_values("instance", None, 0, 1).unwrap_err().to_string();
    assert!(first.contains("no answer within the interval"), "{first}");
    api.patient_until(patience());
    let second = api.label_values("instance", None, 0, 1).unwrap_err().to_string();
    assert!(
        second.contains("has not answered the read before yet"),
        "{second}"
    );
    assert_eq!(taken.lock().unwrap().len(), 1, "a second request was sent");
    // Stopped, a read without patience (a past span's) gives up too.
    api.patient_until(None);
    stop.store(true, Ordering::SeqCst);
    let stopped = api.label_values("instance", None, 0, 1).unwrap_err().to_string();
    assert_eq!(stopped, "stopped");
    // The server's loop ends with a second connection; the kept ones close with it.
    let _ = TcpStream::connect(("127.0.0.1", port));
    server.join().unwrap();
}

/// What the API says beside its samples (a partial response's warning), and the samples
/// left out as no number, reach the run once each, not at every read.
#[test]
fn the_apis_warnings_and_samples_left_out_are_said_once() {
    let api = CannedApi::start(|path: &str| {
        let (status, body) = counter_api(i64::MAX)(path);
        if range_of(path).is_none() {
            return (status, body);
        }
        let body = body
            .replacen(
                r#""status":"success""#,
                r#""status":"success","warnings":["partial response: store s1 unavailable"]"#,
                1,
            )
            .replacen(r#""values":[["#, r#""values":[[1799999999.5,null],["#, 1);
        (status, body)
    });
    let started = started_from(
        &api,
        &[
            "--from",
            "2027-01-15T08:00:00Z",
            "--to",
            "2027-01-15T08:00:10Z",
            "--interval",
            "1s",
        ],
    );
    let mut reader = started.reader;
    let schedule = started.schedule;
    let (mut notes, mut ticks, mut pages) = (Vec::new(), 0, 0);
    while schedule.last.is_none_or(|last| ticks < last) {
        match reader.next_step(&schedule, ticks) {
            Step::Wait(_) => panic!("a past span never waits"),
            Step::Page(_) => pages += 1,
            Step::Tick => ticks += 1,
        }
        notes.extend(reader.take_notes());
    }
    let reads = api
        .asked
        .lock()
        .unwrap()
        .iter()
        .filter(|p| range_of(p).is_some())
        .count();
    assert!(pages >= 4 && reads >= 2, "{pages} pages, {reads} reads");
    let texts: Vec<&str> = notes.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(texts[0], "the TSDB said: partial response: store s1 unavailable");
    assert!(
        texts[1].starts_with("1 sample(s) whose value is no number left out"),
        "{texts:?}"
    );
}

/// A TSDB whose newest samples lag the clock (VictoriaMetrics hides the newest 30 s by
/// default): a live run follows that far behind, said at the start, so that each
/// interval's samples are there when it is read (they never were: every row was empty,
/// or the run ended with "never answered"). One that does not lag is followed at once.
#[test]
fn a_live_run_follows_a_tsdb_that_lags_the_clock() {
    assert_eq!(
        super::behind_the_clock(Some(60_000), 95_000, Some(1.0), 2_000),
        Some(TimeDelta::seconds(36))
    );
    assert_eq!(
        super::behind_the_clock(Some(90_000), 95_000, Some(0.2), 1_000),
        None,
        "within a scrape of the TSDB's"
    );
    assert_eq!(super::behind_the_clock(None, 95_000, None, 1_000), None);
    let lagging = |path: &str| match range_of(path) {
        Some((at, range)) => counter_matrix(&["gpu1:8000"], at - 35_000, range, i64::MAX),
        None => counter_api(i64::MAX)(path),
    };
    let api = CannedApi::start(lagging);
    let before = Utc::now();
    let started = started_from(&api, &["--interval", "1s"]);
    let behind = before - started.schedule.tick_at(0);
    assert!(
        behind >= TimeDelta::seconds(35) && behind <= TimeDelta::seconds(40),
        "{behind}"
    );
    assert!(
        started.notes.iter().any(|n| n.contains("behind the clock")),
        "{:?}",
        started.notes
    );
    let api = CannedApi::start(counter_api(i64::MAX));
    let started = started_from(&api, &["--interval", "1s"]);
    assert!(started.schedule.tick_at(0) >= before, "followed at once");
}

/// What the other TSDBs say in their own words: Mimir's and Thanos' per-query limits are
/// refusals a smaller request may pass (a past span read less at a time; it failed whole),
/// VictoriaMetrics' `isPartial` is said as the others' warnings are, and `"result": null`
/// is no series, not a broken answer.
#[test]
fn what_mimir_thanos_and_victoriametrics_say_is_read() {
    let refused = |message: &str| {
        let body = format!(r#"{{"status":"error","errorType":"execution","error":"{message}"}}"#);
        parse_each::<Series>(422, &body).unwrap_err()
    };
    for message in [
        "the query exceeded the maximum number of chunks (limit: 2000000 chunks) (err-mimir-max-chunks-per-query)",
        "the query exceeded the maximum number of series (limit: 100000 series) (err-mimir-max-series-per-query)",
        "rpc error: code = Unknown desc = exceeded bytes limit while fetching chunks: limit 1000 violated (got 2048)",
        "expanding series: exceeded series limit: limit 10 violated (got 11)",
    ] {
        assert!(refused(message).is_too_large(), "{message}");
    }
    assert!(!refused("parse error: unexpected character").is_too_large());
    let partial = r#"{"status":"success","isPartial":true,"data":{"resultType":"matrix","result":[]}}"#;
    let read = super::api::parse_answer::<Series>(200, partial).unwrap();
    assert_eq!(read.said.len(), 1);
    assert!(read.said[0].starts_with("isPartial"), "{:?}", read.said);
    let none = r#"{"status":"success","data":{"resultType":"matrix","result":null}}"#;
    assert!(parse_each::<Series>(200, none).unwrap().is_empty());
}

/// A recording rule stored under a server's name without `instance` (`sum without
/// (instance)`) is left out of an answer whose other series are servers': it counted every
/// server twice (4,000 tok/s of 2,000). An answer without any `instance` keeps its series
/// (a TSDB that drops the label: one unnamed server).
#[test]
fn a_series_without_an_instance_beside_servers_is_left_out() {
    let answer = r#"{"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"vllm:generation_tokens_total","instance":"gpu1:8000"},"values":[[1,"1"]]},
      {"metric":{"__name__":"vllm:generation_tokens_total","job":"vllm"},"values":[[1,"2"]]},
      {"metric":{"__name__":"vllm:generation_tokens_total","instance":"gpu2:8000"},"values":[[1,"1"]]}]}}"#;
    let mut series = parse_each::<Written>(200, answer).unwrap();
    let (left_out, first) = pages::servers_only(&mut series);
    assert_eq!(left_out, 1);
    assert_eq!(
        first.as_deref(),
        Some(r#"vllm:generation_tokens_total{job="vllm"}"#)
    );
    assert_eq!(series.len(), 2);
    assert!(series.iter().all(|s| s.head.contains("instance=")));
    let unnamed = answer
        .replace(r#""instance":"gpu1:8000""#, r#""job":"a""#)
        .replace(r#""instance":"gpu2:8000""#, r#""job":"b""#);
    let mut series = parse_each::<Written>(200, &unnamed).unwrap();
    assert_eq!(pages::servers_only(&mut series), (0, None));
    assert_eq!(series.len(), 3);
}

/// A live run whose servers are read in groups lists the instances again each minute: a
/// server that appears later (an autoscaled replica) goes to the group with the fewest,
/// said, where it was never read (its tokens missing from every total).
#[test]
fn a_server_that_appears_later_is_read_in_a_group() {
    let api = CannedApi::start(|path: &str| {
        if path.starts_with("/api/v1/label/instance/") {
            success(r#"["a:8000","b:8000","c:8000","new:8000"]"#)
        } else {
            (404, "404 page not found".into())
        }
    });
    let client = Access::default().client(Duration::from_secs(5), 1 << 20);
    let api = super::api::Api::new(&api.base(), client, Arc::default());
    let now = Utc::now();
    let schedule = Schedule::new(now, Duration::from_secs(1), None);
    let groups = vec![
        vec!["a:8000".to_string(), "b:8000".to_string()],
        vec!["c:8000".to_string()],
    ];
    let reads = split::PastReads {
        keep_answers: false,
        intervals_per_request: 1,
    };
    let mode = Mode::Live(crate::clock::LiveClock::start());
    let mut reader = Reader::new(api, federate_match(), groups, 30_000, mode, reads, &schedule);
    let at = schedule.tick_at(0).timestamp_millis();
    reader.list_again(at + 1_000);
    assert_eq!(reader.groups[1], ["c:8000"], "not before a minute");
    reader.list_again(at + 60_000);
    assert_eq!(reader.groups[1], ["c:8000", "new:8000"]);
    assert_eq!(reader.groups[0].len(), 2);
    let notes = reader.take_notes();
    assert_eq!(
        notes,
        [(
            1,
            "a new server, new:8000, is read from now on in this group".to_string()
        )]
    );
    reader.list_again(at + 120_000);
    assert_eq!(reader.groups[1].len(), 2, "listed once");
    assert!(reader.take_notes().is_empty());
}

/// A TSDB that scrapes every 15 s (Prometheus' example configuration; its default is a
/// minute), read at the monitor's default 2 s interval: its points are 15 s apart, which
/// is no outage, and every full window has the counter's exact rate. The intervals
/// between its scrapes bring no new sample: no new page, and no stall judged on them.
#[test]
fn a_tsdb_scraping_every_15_s_gives_every_full_window_its_rate() {
    let api = CannedApi::start(|path: &str| match range_of(path) {
        Some((at, range)) => counter_matrix_every(15_000, &["gpu1:8000"], at, range, i64::MAX),
        None => counter_api(i64::MAX)(path),
    });
    let span = ["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:02:00Z"];
    let seconds = TimeDelta::seconds;
    let (p, rows) = past_rows(&api, span, (seconds(2), seconds(30), seconds(2)), |s| {
        (
            s.elapsed,
            s.figures.generation.window,
            s.window.fresh_pages,
            s.verdict.stalled,
        )
    });
    assert_eq!(p.settings().points_every, Some(TimeDelta::seconds(15)));
    assert_eq!(rows.len(), 60);
    let full: Vec<_> = rows.iter().filter(|r| r.0 >= 45.0).collect();
    for (elapsed, rate, _, _) in &full {
        let rate = rate.unwrap_or_else(|| panic!("no rate at {elapsed} s: {rows:?}"));
        assert!((rate - 100.0).abs() < 1e-9, "{rate} at {elapsed} s");
    }
    assert!(rows.iter().all(|r| !r.3), "no stall: {rows:?}");
    let new_pages = rows.iter().filter(|r| r.2 > 0).count();
    assert!(
        (8..=9).contains(&new_pages),
        "a new page each 15 s: {new_pages} of {rows:?}"
    );
}

/// A TSDB that falls 2.5 s behind during a live run (a remote-write backlog: its samples
/// come late, with their own times), read every 250 ms: the late samples are read when
/// they come, not lost to the intervals already read; no interval without a new sample
/// judges a stall; the lag is said once; and the count since the start is the counter's.
#[test]
fn a_tsdb_falling_behind_during_a_live_run_is_read_late_not_lost() {
    let lag_from = Utc::now().timestamp_millis() + 2_000;
    let api = CannedApi::start(move |path: &str| match range_of(path) {
        Some((at, range)) => {
            let now = Utc::now().timestamp_millis();
            let visible = if now >= lag_from { now - 2_500 } else { now };
            let until = at.min(visible);
            counter_matrix_every(100, &["gpu1:8000"], until, range - (at - until), i64::MAX)
        }
        None => counter_api(i64::MAX)(path),
    });
    let started = started_from(&api, &["--interval", "250ms", "--duration", "8s"]);
    let mut reader = started.reader;
    let settings = Settings {
        window: TimeDelta::seconds(5),
        interval: TimeDelta::milliseconds(250),
        timeout: TimeDelta::seconds(1),
        points_every: started.points_every,
        ..settings()
    };
    let mut p = Pipeline::new(
        settings,
        started.schedule,
        &started.urls,
        String::new(),
        Vec::new(),
    );
    let (mut notes, mut ticks_behind, mut late_news) = (Vec::new(), 0, 0);
    let mut delivered = i64::MIN;
    while !p.is_over() {
        let schedule = *p.schedule();
        match reader.next_step(&schedule, p.ticks()) {
            Step::Wait(wait) => std::thread::sleep(wait),
            Step::Page(scrape) => {
                notes.extend(reader.take_notes().into_iter().map(|n| n.1));
                p.ingest(&scrape, 0);
            }
            Step::Tick => {
                p.tick();
                let s = p.snapshot().unwrap();
                assert!(!s.verdict.stalled, "stalled at {} s", s.elapsed);
                let now = reader.delivered_ms[0];
                if Utc::now().timestamp_millis() - now > 2_000 {
                    ticks_behind += 1;
                    late_news += usize::from(now > delivered && s.window.fresh_pages > 0);
                }
                delivered = now;
            }
        }
    }
    // Behind, intervals still read the samples that came late.
    assert!(
        ticks_behind >= 10 && late_news * 2 >= ticks_behind,
        "{late_news} of {ticks_behind}"
    );
    let behind: Vec<&String> = notes.iter().filter(|n| n.contains("fallen behind")).collect();
    assert_eq!(behind.len(), 1, "{notes:?}");
    // Every token the counter counted up to the newest sample read (100 a second).
    let s = p.snapshot().unwrap();
    let first = p.target(0).unwrap().since.unwrap().timestamp_millis();
    let counted = s.figures.since_start.generated.unwrap();
    let truth = (reader.delivered_ms[0] - first) as f64 / 10.0;
    assert!((counted - truth).abs() < 1e-6, "{counted} of {truth}");
}

/// A TSDB that takes the start's first request and never answers it: a live run of
/// `--duration` ends when it was to end, saying why, not at the client's deadline (a
/// minute by default; 30 s here, whose message would not name the duration).
#[test]
fn a_start_the_tsdb_never_answers_ends_with_the_runs_duration() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        // Each connection is held, unanswered, until the loop ends.
        let held: Vec<TcpStream> = listener.incoming().take(2).filter_map(Result::ok).collect();
        drop(held);
    });
    let base = format!("http://127.0.0.1:{port}");
    let args = crate::args::Args::try_parse_from(["vllm_monitor", "--prometheus", &base, "--duration", "1s"])
        .unwrap();
    let client = Access::default().client(Duration::from_secs(30), 1 << 20);
    let failed = start(&args, &base, client, Arc::new(AtomicBool::new(false)));
    let message = failed.err().expect("no start without an answer");
    assert!(
        message.contains("no answer before the run's --duration ended"),
        "{message}"
    );
    let _ = TcpStream::connect(("127.0.0.1", port));
    server.join().unwrap();
}

/// A TSDB that answers 503 with `Retry-After` (an overloaded querier) is left alone that
/// long: the reads meanwhile fail at once, saying so, without a request; the one after
/// is sent. Seconds and HTTP dates are read; a wait is honoured up to five minutes.
#[test]
fn a_retry_after_is_honoured() {
    use crate::http::retry_after;
    assert_eq!(retry_after("7", 0), Some(Duration::from_secs(7)));
    assert_eq!(
        retry_after("Thu, 01 Jan 1970 00:01:40 GMT", 40),
        Some(Duration::from_secs(60))
    );
    assert_eq!(retry_after("soon", 0), None);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let mut asked = 0;
        for stream in listener.incoming().take(2) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            asked += 1;
            let (status, extra, body) = match asked {
                1 => (
                    "503 Service Unavailable",
                    "Retry-After: 1\r\n",
                    r#"{"status":"error","errorType":"unavailable","error":"too many outstanding requests"}"#,
                ),
                _ => ("200 OK", "", r#"{"status":"success","data":["gpu1:8000"]}"#),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        asked
    });
    let client = Access::default().client(Duration::from_secs(10), 1 << 20);
    let stop = Arc::new(AtomicBool::new(false));
    let api = super::api::Api::new(&format!("http://127.0.0.1:{port}"), client, stop);
    let refused = api.label_values("instance", None, 0, 1).unwrap_err().to_string();
    assert!(refused.contains("503"), "{refused}");
    let waiting = api.label_values("instance", None, 0, 1).unwrap_err().to_string();
    assert!(waiting.contains("Retry-After"), "{waiting}");
    std::thread::sleep(Duration::from_millis(1_100));
    assert_eq!(api.label_values("instance", None, 0, 1).unwrap(), ["gpu1:8000"]);
    assert_eq!(server.join().unwrap(), 2, "no request while left alone");
}

/// The canned API of servers `a:8000` and `b:8000` at 100 tokens/s each, scraped every
/// `every` ms, `b` `offset` ms after `a`.
fn two_servers_every(every: i64, offset: i64) -> impl Fn(&str) -> (u16, String) {
    move |path: &str| match range_of(path) {
        Some((at, range)) => offset_matrix(every, &[("a:8000", 0), ("b:8000", offset)], at, range, i64::MAX),
        None if path.starts_with("/api/v1/label/instance/") => success(r#"["a:8000","b:8000"]"#),
        None if path.contains("count by (instance)") => success(
            r#"{"resultType":"vector","result":[{"metric":{"instance":"a:8000"},"value":[1,"1"]},{"metric":{"instance":"b:8000"},"value":[1,"1"]}]}"#,
        ),
        None => counter_api(i64::MAX)(path),
    }
}

/// Two servers a TSDB scrapes every 15 s, 7 s apart, read every 2 s: the summary's mean
/// is over the span their tokens were counted in, each counter's own, not the pages' (the
/// first page's and last page's samples lag by up to 7 s more for one of them: the mean
/// was up to 8.6% off against a real Prometheus).
#[test]
fn the_summarys_mean_is_over_each_counters_own_span() {
    let api = CannedApi::start(two_servers_every(15_000, 7_000));
    let span = ["--from", "2027-01-15T08:00:01Z", "--to", "2027-01-15T08:01:31Z"];
    let seconds = TimeDelta::seconds;
    let (p, _) = past_rows(&api, span, (seconds(2), seconds(30), seconds(2)), |_| ());
    let summary = p.summary();
    let mean = summary.mean_generation_rate.unwrap();
    assert!(
        (mean / 200.0 - 1.0).abs() < 0.001,
        "{mean} ({:?} tokens)",
        summary.generated_tokens
    );
}

/// A TSDB scraping two servers every minute, 30 s apart, a past span read every 15 s with
/// the default 30 s lookback: a series' newest sample is up to a minute old, so the
/// lookback is raised to two minutes, said; every row after the first window has both
/// servers' rate (each was "gone" and "back" every other interval, 5% of the tokens lost).
#[test]
fn a_lookback_shorter_than_the_tsdbs_scrapes_is_raised() {
    let api = CannedApi::start(two_servers_every(60_000, 30_000));
    let span = ["--from", "2027-01-15T08:00:00Z", "--to", "2027-01-15T08:10:00Z"];
    let started = started_from(&api, &[&span[..], &["--interval", "15s"]].concat());
    assert!(
        started.notes.iter().any(|n| n.contains("the lookback is 120 s")),
        "{:?}",
        started.notes
    );
    let seconds = TimeDelta::seconds;
    let (p, rows) = past_rows(&api, span, (seconds(15), seconds(120), seconds(10)), |s| {
        (s.elapsed, s.figures.generation.window)
    });
    assert_eq!(rows.len(), 40);
    for (elapsed, rate) in rows.iter().filter(|r| r.0 >= 180.0) {
        let rate = rate.unwrap_or_else(|| panic!("no rate at {elapsed} s: {rows:?}"));
        assert!((rate - 200.0).abs() < 1e-9, "{rate} at {elapsed} s");
    }
    let gone: Vec<_> = p
        .events()
        .iter()
        .filter(|(_, e)| e.kind == crate::events::EventKind::Stale)
        .collect();
    assert!(gone.is_empty(), "{gone:?}");
}
