//! The recording format's tests: writing, reading back, and what is made of damaged files.

use super::*;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::write::GzEncoder;
use flate2::Compression;

/// A directory of its own for each test, removed when the test ends (even by a panic).
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("recording-{test}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn at(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(micros).unwrap()
}

fn header() -> Header {
    let mut extra = Map::new();
    extra.insert("setup".into(), "vLLM 0.33 · 2 URLs · every 1.5s".into());
    extra.insert("nested".into(), serde_json::json!({"a": [1, 2.5, null]}));
    Header {
        started: at(1_796_153_029_088_207),
        interval: Duration::from_millis(1500),
        window: Duration::from_secs(90),
        urls: vec!["http://a:8000/metrics".into(), "https://b:8000/metrics".into()],
        extra,
    }
}

/// Pages, a failure, an error page and an OpenMetrics one, with what JSON must escape.
fn scrapes() -> Vec<Recorded> {
    let page = |n: i64, tick| Recorded {
        url: "http://a:8000/metrics".into(),
        start: at(1_796_153_030_000_001 + n * 1_000_000),
        end: at(1_796_153_030_012_345 + n * 1_000_000),
        status: Some(200),
        content_type: Some("text/plain; version=0.0.4; charset=utf-8".into()),
        body: Some(format!(
            "# HELP x \"quoted\" \\ and ünïcode\nvllm:x{{model_name=\"m\"}} {n}\n\tend"
        )),
        error: None,
        tick,
    };
    vec![
        page(0, Some(0)),
        page(1, Some(1)),
        Recorded {
            url: "https://b:8000/metrics".into(),
            start: at(1_796_153_032_000_000),
            end: at(1_796_153_032_000_000),
            status: None,
            content_type: None,
            body: None,
            error: Some("connection refused".into()),
            tick: Some(1),
        },
        Recorded {
            status: Some(503),
            content_type: Some("text/html".into()),
            body: Some("<h1>Service Unavailable</h1>".into()),
            ..page(3, None)
        },
        Recorded {
            content_type: Some("application/openmetrics-text; version=1.0.0".into()),
            body: Some("# EOF\n".into()),
            ..page(4, Some(4))
        },
    ]
}

fn record(path: &Path) {
    let mut writer = Writer::create(path, &header()).unwrap();
    for scrape in scrapes() {
        writer.write(&scrape).unwrap();
    }
    writer.finish(Some(7)).unwrap();
}

/// Every item, errors as their text.
fn read_all(replay: &mut Replay) -> Vec<Result<Recorded, String>> {
    replay.map(|r| r.map_err(|e| e.to_string())).collect()
}

fn write_lines(path: &Path, lines: &[&str]) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

#[test]
fn round_trips_plain_gzip_and_zstd() {
    let dir = TempDir::new("round-trip");
    for name in ["run.jsonl", "run.jsonl.gz", "run.jsonl.zst"] {
        let path = dir.file(name);
        record(&path);
        let mut replay = open(&path).unwrap();
        assert_eq!(replay.header(), Some(&header()), "{name}");
        let read: Vec<Recorded> = replay.by_ref().map(Result::unwrap).collect();
        assert_eq!(read, scrapes(), "{name}");
        assert!(!replay.truncated(), "{name}");
    }
    let bytes = |name| std::fs::read(dir.file(name)).unwrap();
    assert_eq!(bytes("run.jsonl.gz")[..2], GZIP_MAGIC);
    assert_eq!(bytes("run.jsonl.zst")[..4], ZSTD_MAGIC);
    assert_eq!(bytes("run.jsonl")[0], b'{');
}

#[test]
fn the_plain_file_is_the_documented_shape() {
    let dir = TempDir::new("shape");
    let path = dir.file("run.jsonl");
    record(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + scrapes().len());
    assert_eq!(lines.last().unwrap(), &r#"{"end_of_run":true,"ticks":7}"#);
    assert!(
        lines[0].starts_with(
            r#"{"format":"vllm_monitor recording","version":1,"started":1796153029.088207,"interval_s":1.5,"window_s":90.0,"urls":["http://a:8000/metrics","https://b:8000/metrics"],"setup":"#
        ),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[3],
        r#"{"url":"https://b:8000/metrics","start":1796153032.0,"end":1796153032.0,"error":"connection refused","tick":1}"#
    );
    assert!(lines[1].starts_with(
        r#"{"url":"http://a:8000/metrics","start":1796153030.000001,"end":1796153030.012345,"status":200,"content_type":"#
    ));
    assert_eq!(to_json(&scrapes()[2]).to_string(), lines[3]);
    assert_eq!(header_to_json(&header()).to_string(), lines[0]);
}

#[test]
fn times_round_trip_to_the_microsecond() {
    let check = |micros: i64| {
        let t = at(micros);
        let text = serde_json::to_string(&Value::from(seconds(t))).unwrap();
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            from_seconds(back.as_f64().unwrap()),
            Some(t),
            "{micros} written as {text}"
        );
    };
    for base in [
        1_800_000_000_000_000,
        1_796_153_029_000_000,
        2_147_483_647_000_000,
        0,
    ] {
        for k in 0..200_000 {
            check(base + k * 7_919);
            check(base - k * 13);
        }
        check(base + 999_999);
    }
    // Another scraper's six decimals (Python's round(t, 6)).
    let value: Value = serde_json::from_str("1796153029.088207").unwrap();
    assert_eq!(
        from_seconds(value.as_f64().unwrap()),
        Some(at(1_796_153_029_088_207))
    );
    // Finer than a microsecond is dropped, not rounded into a different second.
    let fine = DateTime::from_timestamp(1_800_000_000, 999_999_999).unwrap();
    assert_eq!(from_seconds(seconds(fine)), Some(at(1_800_000_000_999_999)));
    assert_eq!(from_seconds(f64::NAN), None);
    assert_eq!(from_seconds(1e300), None);
}

#[test]
fn times_round_trip_through_a_file() {
    let dir = TempDir::new("times");
    let path = dir.file("t.jsonl.zst");
    let starts: Vec<i64> = (0..1000)
        .map(|k| 1_800_000_000_000_000 + k * 1_000_003 + k % 7)
        .collect();
    let mut writer = Writer::create(&path, &header()).unwrap();
    for &start in &starts {
        let scrape = Recorded {
            start: at(start),
            end: at(start + 1),
            ..scrapes()[2].clone()
        };
        writer.write(&scrape).unwrap();
    }
    writer.finish(Some(7)).unwrap();
    let read: Vec<i64> = open(&path)
        .unwrap()
        .map(|r| r.unwrap().start.timestamp_micros())
        .collect();
    assert_eq!(read, starts);
}

#[test]
fn durations_read_back_as_given() {
    for given in [
        Duration::from_millis(1100),
        Duration::from_millis(250),
        Duration::from_secs(90),
        Duration::from_secs(3600),
        Duration::from_nanos(1_234_567_891),
        Duration::ZERO,
    ] {
        assert_eq!(duration(given.as_secs_f64()), Some(given));
    }
    assert_eq!(duration(-1.0), None);
}

#[test]
fn reads_a_recording_without_header() {
    let dir = TempDir::new("no-header");
    let path = dir.file("other.jsonl");
    let lines: Vec<String> = scrapes().iter().map(|s| to_json(s).to_string()).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    write_lines(&path, &lines);
    let mut replay = open(&path).unwrap();
    assert_eq!(replay.header(), None);
    assert_eq!(
        read_all(&mut replay),
        scrapes().into_iter().map(Ok).collect::<Vec<_>>()
    );
    assert!(!replay.truncated());
}

#[test]
fn skips_a_header_of_another_scraper() {
    let dir = TempDir::new("foreign-header");
    let path = dir.file("other.jsonl");
    write_lines(
        &path,
        &[
            r#"{"format":"someone else's","version":7,"started":"yesterday"}"#,
            r#"{"url":"u","start":1.5,"end":2,"status":200,"content_type":null,"body":"x 1\n"}"#,
        ],
    );
    let mut replay = open(&path).unwrap();
    assert_eq!(replay.header(), None);
    let read = read_all(&mut replay);
    assert_eq!(read.len(), 1);
    let scrape = read[0].as_ref().unwrap();
    assert_eq!((scrape.start, scrape.end), (at(1_500_000), at(2_000_000)));
    assert_eq!(scrape.content_type, None);
}

#[test]
fn ignores_fields_it_does_not_know() {
    let dir = TempDir::new("extra-fields");
    let path = dir.file("other.jsonl");
    write_lines(
        &path,
        &[
            r#"{"latency_ms":12,"url":"u","labels":{"job":"x"},"start":10,"end":11,"error":"timeout","status":null,"retries":[1,2]}"#,
        ],
    );
    let read: Vec<Recorded> = open(&path).unwrap().map(Result::unwrap).collect();
    assert_eq!(
        read,
        [Recorded {
            url: "u".into(),
            start: at(10_000_000),
            end: at(11_000_000),
            status: None,
            content_type: None,
            body: None,
            error: Some("timeout".into()),
            tick: None,
        }]
    );
}

#[test]
fn a_bad_line_is_reported_with_its_number_and_reading_goes_on() {
    let dir = TempDir::new("bad-lines");
    let path = dir.file("bad.jsonl");
    let good = r#"{"url":"u","start":1,"end":2,"body":"ok"}"#;
    write_lines(
        &path,
        &[
            &header_to_json(&header()).to_string(),
            good,
            r#"{"url":"u","start":1,"end":2,"body":"#,
            "",
            r#"{"url":"u","start":1,"body":"x"}"#,
            r#"{"start":1,"end":2,"body":"x"}"#,
            r#"{"url":"u","start":"1796153029","end":2,"body":"x"}"#,
            r#"{"url":"u","start":3,"end":2,"body":"x"}"#,
            r#"{"url":"u","start":1,"end":2,"status":200}"#,
            r#"{"url":"u","start":1,"end":2,"body":"x","error":"y"}"#,
            r#"{"url":"u","start":1,"end":2,"status":-1,"error":"y"}"#,
            "[1,2]",
            &header_to_json(&header()).to_string(),
            good,
        ],
    );
    let mut replay = open(&path).unwrap();
    assert!(replay.header().is_some());
    let read = read_all(&mut replay);
    let errors: Vec<&str> = read
        .iter()
        .filter_map(|r| r.as_ref().err())
        .map(String::as_str)
        .collect();
    assert_eq!(
        errors,
        [
            "line 3: not JSON: EOF while parsing a value at column 36",
            "line 5: no \"end\"",
            "line 6: no \"url\"",
            "line 7: \"start\" (\"1796153029\") is not a number (Unix seconds)",
            "line 8: \"end\" (2) is before \"start\" (3)",
            "line 9: neither \"body\" nor \"error\"",
            "line 10: both \"body\" and \"error\"",
            "line 11: \"status\" (-1) is not an HTTP status",
            "line 12: not a JSON object",
            "line 13: a header in the middle of the recording (were two recordings joined?)",
        ]
    );
    assert_eq!(read.iter().filter(|r| r.is_ok()).count(), 2);
    assert!(
        read.last().unwrap().is_ok(),
        "the line after the bad ones is read"
    );
    assert!(!replay.truncated());
}

#[test]
fn a_first_line_that_is_not_json_is_a_bad_line_not_a_failure() {
    let dir = TempDir::new("bad-first");
    let path = dir.file("bad.jsonl");
    write_lines(
        &path,
        &["garbage", r#"{"url":"u","start":1,"end":2,"body":"ok"}"#],
    );
    let mut replay = open(&path).unwrap();
    assert_eq!(replay.header(), None);
    let read = read_all(&mut replay);
    assert_eq!(
        read[0].as_ref().unwrap_err(),
        "line 1: not JSON: expected value at column 1"
    );
    assert!(read[1].is_ok());
}

/// Every length a killed or cut copy could have: what is read is a beginning of what was
/// written, never an error, and the cut is told whenever the file shows it.
fn check_every_cut(name: &str) {
    let dir = TempDir::new("cuts");
    let whole_path = dir.file(name);
    record(&whole_path);
    let whole = std::fs::read(&whole_path).unwrap();
    let plain = !name.ends_with(".gz") && !name.ends_with(".zst");
    let cut_path = dir.file(&format!("cut-{name}"));
    let mut read_before = 0;
    for length in 1..whole.len() {
        std::fs::write(&cut_path, &whole[..length]).unwrap();
        let mut replay = open(&cut_path).unwrap_or_else(|e| panic!("{name} cut at {length}: {e}"));
        let read: Vec<Recorded> = replay
            .by_ref()
            .map(|r| r.unwrap_or_else(|e| panic!("{name} cut at {length}: {e}")))
            .collect();
        assert_eq!(read[..], scrapes()[..read.len()], "{name} cut at {length}");
        assert!(read.len() >= read_before, "{name} cut at {length}");
        read_before = read.len();
        // A plain file cut at the end of a line, or just before its newline, is whole as
        // far as anyone can tell.
        let looks_whole = plain && (whole[length - 1] == b'\n' || whole[length] == b'\n');
        assert_eq!(replay.truncated(), !looks_whole, "{name} cut at {length}");
        if replay.header().is_none() {
            assert!(read.is_empty(), "{name} cut at {length}");
        }
    }
    // Cut in its last byte: a compressed stream's end, a plain file's last newline.
    assert_eq!(read_before, scrapes().len(), "{name}");
}

#[test]
fn a_cut_gzip_file_reads_every_complete_line() {
    check_every_cut("run.jsonl.gz");
}

#[test]
fn a_cut_zstd_file_reads_every_complete_line() {
    check_every_cut("run.jsonl.zst");
}

#[test]
fn a_cut_plain_file_reads_every_complete_line() {
    check_every_cut("run.jsonl");
}

#[test]
fn a_killed_writer_leaves_every_scrape_readable() {
    let dir = TempDir::new("killed");
    for name in ["run.jsonl.gz", "run.jsonl.zst", "run.jsonl"] {
        let path = dir.file(name);
        let mut writer = Writer::create(&path, &header()).unwrap();
        for scrape in scrapes() {
            writer.write(&scrape).unwrap();
        }
        // What a kill does: no finish, no Drop, no flush beyond what each write did.
        std::mem::forget(writer);
        let mut replay = open(&path).unwrap();
        assert_eq!(replay.header(), Some(&header()), "{name}");
        let read: Vec<Recorded> = replay.by_ref().map(Result::unwrap).collect();
        assert_eq!(read, scrapes(), "{name}");
        // A plain file has no end marker to miss.
        assert_eq!(replay.truncated(), name != "run.jsonl", "{name}");
    }
}

#[test]
fn dropping_the_writer_ends_the_file_properly() {
    let dir = TempDir::new("dropped");
    for name in ["run.jsonl.gz", "run.jsonl.zst"] {
        let path = dir.file(name);
        {
            let mut writer = Writer::create(&path, &header()).unwrap();
            writer.write(&scrapes()[0]).unwrap();
        }
        let mut replay = open(&path).unwrap();
        assert_eq!(replay.by_ref().count(), 1, "{name}");
        assert!(!replay.truncated(), "{name}");
    }
}

#[test]
fn a_newer_version_is_refused() {
    let dir = TempDir::new("newer");
    let path = dir.file("new.jsonl.gz");
    let mut line = header_to_json(&header());
    line["version"] = 2.into();
    line["interval_s"] = "whatever a later version means".into();
    let mut encoder = GzEncoder::new(File::create(&path).unwrap(), Compression::default());
    writeln!(encoder, "{line}").unwrap();
    encoder.finish().unwrap();
    let e = open(&path).err().unwrap();
    assert_eq!(
        e.to_string(),
        "line 1: recorded by a newer vllm_monitor (format version 2); this one reads version 1"
    );
}

#[test]
fn a_damaged_header_of_ours_is_refused() {
    let dir = TempDir::new("damaged-header");
    let path = dir.file("run.jsonl");
    write_lines(
        &path,
        &[r#"{"format":"vllm_monitor recording","version":1,"started":1,"urls":[]}"#],
    );
    let e = open(&path).err().unwrap();
    assert_eq!(
        (e.line, e.message.as_str()),
        (1, "the recording's header: no \"interval_s\"")
    );
}

/// A header's interval is held to `--interval`'s bounds: a microsecond would have the
/// replay compute a million intervals a second of the recording.
#[test]
fn a_header_interval_under_100ms_is_refused_as_the_command_line_refuses_it() {
    let dir = TempDir::new("tiny-interval");
    let path = dir.file("run.jsonl");
    for (interval, refused) in [("1e-6", true), ("0.099", true), ("0", true), ("0.1", false)] {
        write_lines(
            &path,
            &[&format!(
                r#"{{"format":"vllm_monitor recording","version":1,"started":1,"interval_s":{interval},"window_s":10,"urls":[]}}"#
            )],
        );
        match open(&path) {
            Err(e) if refused => {
                assert_eq!(e.line, 1, "{interval}");
                assert!(e.message.contains("\"interval_s\""), "{e}");
                assert!(e.message.contains("under 100ms"), "{e}");
            }
            Ok(replay) if !refused => assert_eq!(replay.header().unwrap().interval.as_millis(), 100),
            other => panic!("{interval}: {:?}", other.map(|r| r.header().cloned())),
        }
    }
}

#[test]
fn extra_header_fields_cannot_shadow_the_header() {
    let mut shadowing = header();
    shadowing.extra.insert("version".into(), 99.into());
    shadowing.extra.insert("url".into(), "x".into());
    shadowing.extra.insert("kept".into(), true.into());
    let line = header_to_json(&shadowing);
    assert_eq!(line["version"], VERSION);
    assert!(line.get("url").is_none());
    let dir = TempDir::new("shadow");
    let path = dir.file("run.jsonl");
    let writer = Writer::create(&path, &shadowing).unwrap();
    writer.finish(Some(7)).unwrap();
    let replay = open(&path).unwrap();
    let read = replay.header().unwrap();
    assert_eq!(read.extra.get("kept"), Some(&Value::Bool(true)));
    assert_eq!(read.extra.keys().collect::<Vec<_>>(), ["setup", "nested", "kept"]);
}

#[test]
fn the_first_bytes_decide_not_the_name() {
    let dir = TempDir::new("magic");
    for (written, renamed) in [
        ("a.jsonl.gz", "a.jsonl"),
        ("b.jsonl.zst", "b.jsonl.gz"),
        ("c.jsonl", "c.jsonl.zst"),
    ] {
        record(&dir.file(written));
        std::fs::rename(dir.file(written), dir.file(renamed)).unwrap();
        let mut replay = open(&dir.file(renamed)).unwrap();
        assert_eq!(replay.header(), Some(&header()), "{written} as {renamed}");
        let read: Vec<Recorded> = replay.by_ref().map(Result::unwrap).collect();
        assert_eq!(read, scrapes(), "{written} as {renamed}");
    }
}

#[test]
fn joined_gzip_files_read_as_one() {
    let dir = TempDir::new("joined");
    let path = dir.file("a.gz");
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    writeln!(encoder, "{}", to_json(&scrapes()[0])).unwrap();
    let mut joined = encoder.finish().unwrap();
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    writeln!(encoder, "{}", to_json(&scrapes()[1])).unwrap();
    joined.extend(encoder.finish().unwrap());
    std::fs::write(&path, joined).unwrap();
    let read: Vec<Recorded> = open(&path).unwrap().map(Result::unwrap).collect();
    assert_eq!(read, scrapes()[..2]);
}

#[test]
fn corrupt_compressed_data_is_an_error_not_a_cut() {
    let dir = TempDir::new("corrupt");
    let path = dir.file("run.jsonl.gz");
    record(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    // The CRC of the data, in the gzip trailer.
    bytes[n - 6] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let mut replay = open(&path).unwrap();
    let read = read_all(&mut replay);
    assert_eq!(read.iter().filter(|r| r.is_ok()).count(), scrapes().len());
    let last = read.last().unwrap().as_ref().unwrap_err();
    assert!(last.starts_with("line 8: unreadable from here on: "), "{last}");
    assert!(!replay.truncated());
}

#[test]
fn a_last_line_without_newline_is_read_when_whole() {
    let dir = TempDir::new("no-newline");
    let path = dir.file("run.jsonl");
    std::fs::write(&path, "\n{\"url\":\"u\",\"start\":1,\"end\":2,\"body\":\"ok\"}").unwrap();
    let mut replay = open(&path).unwrap();
    assert_eq!(replay.by_ref().map(Result::unwrap).count(), 1);
    assert!(!replay.truncated());
}

#[test]
fn an_empty_file_is_an_empty_recording() {
    let dir = TempDir::new("empty");
    let path = dir.file("run.jsonl.gz");
    std::fs::write(&path, "").unwrap();
    let mut replay = open(&path).unwrap();
    assert!(replay.header().is_none());
    assert_eq!(replay.next().map(|r| r.is_ok()), None);
    assert!(!replay.truncated());
}

#[test]
fn an_unreadable_file_is_line_0() {
    let dir = TempDir::new("missing");
    let e = open(&dir.file("missing.jsonl")).err().unwrap();
    assert_eq!(e.line, 0);
    assert!(e.message.contains("No such file"), "{e}");
    assert!(e.to_string().starts_with("line 0: "), "{e}");
}

#[test]
fn a_finished_recording_says_how_many_intervals_its_run_computed() {
    let dir = TempDir::new("ticks");
    for name in ["run.jsonl", "run.jsonl.gz", "run.jsonl.zst"] {
        let path = dir.file(name);
        record(&path);
        let mut replay = open(&path).unwrap();
        assert_eq!(replay.ticks(), None, "not before the end");
        let scrapes = read_all(&mut replay);
        assert_eq!(scrapes.len(), self::scrapes().len(), "{scrapes:?}");
        assert!(scrapes.iter().all(Result::is_ok), "{scrapes:?}");
        assert_eq!((replay.ticks(), replay.truncated()), (Some(7), false), "{name}");
        // The line to report a count that cannot be right by: the last, after the header.
        assert_eq!(
            replay.ticks_line(),
            Some(self::scrapes().len() as u64 + 2),
            "{name}"
        );
    }
}
