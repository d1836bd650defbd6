//! Servers whose counters misbehave, each beside a good server, on recordings replayed on
//! the virtual clock (`recorded.rs`): a restart that only the process start time announces
//! (prometheus_client in multiprocess mode serves no `_created`), a "counter" that goes
//! down on every scrape, and two replicas answering one URL in turn. Each must give the
//! right figure or none with a reason, never a spike, and leave the good server's figures
//! exact.

use std::time::Duration;

use serde_json::Value;

use crate::recorded::{samples, Grid, Recording, Source, FAILED, ORIGIN_US};

const GOOD: &str = "http://good:8000/metrics";
const FAULTY: &str = "http://faulty:8000/metrics";
const TOKENS: &str = "vllm:generation_tokens_total";

/// A vLLM page as prometheus_client writes it in multiprocess mode: no `_created`, the
/// process start time (Unix seconds) and the token counter.
fn page(start_unix: f64, tokens: f64) -> String {
    format!(
        "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {start_unix}\n\
         # TYPE vllm:generation_tokens_total counter\n\
         vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {}\n\
         # TYPE vllm:num_requests_running gauge\n\
         vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 8\n",
        tokens.round()
    )
}

/// Unix seconds `t` seconds into the recording.
fn unix(t: f64) -> f64 {
    ORIGIN_US as f64 / 1e6 + t
}

/// The good server: 1,000 tokens a second since long before the run.
fn good(t: f64) -> String {
    page(unix(-3_600.0), 1_000.0 * (t + 3_600.0))
}

/// `url`'s group of a row (`--by url`).
fn group<'r>(row: &'r Value, url: &str) -> Option<&'r Value> {
    row["groups"].as_array()?.iter().find(|g| g["url"] == url)
}

fn window_rate(group: &Value) -> Option<f64> {
    group["generation_tokens_per_s"]["window"].as_f64()
}

/// The interval rows (not events), with the good server's window rate checked on each
/// full one: 1,000 tokens a second, within the scrapes' 5 ms of jitter.
fn rows_with_the_good_server_exact(rows: &[Value]) -> Vec<&Value> {
    let intervals: Vec<&Value> = rows.iter().filter(|r| r.get("urls").is_some()).collect();
    let mut checked = 0;
    for row in &intervals {
        let Some(rate) = group(row, GOOD).and_then(window_rate) else {
            continue;
        };
        assert!(
            (rate - 1_000.0).abs() <= 6.0,
            "the good server at {rate} tok/s at {}",
            row["t"]
        );
        checked += 1;
    }
    assert!(
        checked + 12 >= intervals.len(),
        "{checked} of {} rows had the good server's rate",
        intervals.len()
    );
    intervals
}

/// `faulty` beside the good server, a page a second for 40 s (a 10 s window), replayed
/// with a group per URL: the rows.
fn beside_the_good_server(name: &str, faulty: impl Fn(f64) -> String) -> Vec<Value> {
    let grid = Grid::new(Duration::from_secs(1), 40).window(Duration::from_secs(10));
    let recording = Recording::make(
        name,
        grid,
        &[Source::new(GOOD, good), Source::new(FAULTY, faulty)],
    );
    recording.replay(&["--json", "--by", "url"])
}

fn events<'r>(rows: &'r [Value], kind: &str) -> Vec<&'r Value> {
    rows.iter().filter(|r| r["event"] == kind).collect()
}

/// The server counts 1,000 tokens a second, is down from 30 s to 50 s, and restarts at
/// 32 s counting 2,000 a second: by the first scrape after the outage its counter is past
/// the old value, so only the process start time tells. Every token it counted is in the
/// run's total, the restart is announced as seen by the start time, and every window
/// after the outage is exact.
#[test]
fn a_restart_only_the_process_start_time_announces_is_counted() {
    let faulty = |t: f64| match t {
        // Up since ten minutes before the run, idle until it began.
        t if t < 30.0 => page(unix(-600.0), 1_000.0 * t),
        t if t < 50.0 => format!("{FAILED}connection refused"),
        t => page(unix(32.0), 2_000.0 * (t - 32.0)),
    };
    let grid = Grid::new(Duration::from_secs(1), 80).window(Duration::from_secs(10));
    let recording = Recording::make(
        "start-time-restart.jsonl",
        grid,
        &[Source::new(GOOD, good), Source::new(FAULTY, faulty)],
    );
    let rows = recording.replay(&["--json", "--by", "url"]);
    let intervals = rows_with_the_good_server_exact(&rows);
    // Every token the server counted between the run's first and last scrape: up to the
    // outage, then all of the new process's count.
    let value = |index: u64| {
        samples(&recording.scrape(1, index).body, TOKENS)
            .values()
            .sum::<f64>()
    };
    let want_faulty = (value(29) - value(0)) + value(79);
    let want_good = samples(&recording.scrape(0, 79).body, TOKENS)
        .values()
        .sum::<f64>()
        - samples(&recording.scrape(0, 0).body, TOKENS)
            .values()
            .sum::<f64>();
    let summary = events(&rows, "summary")[0];
    let total = summary["generated_tokens"].as_f64().unwrap();
    assert_eq!(total, want_good + want_faulty, "{summary}");
    println!(
        "restart seen only by the process start time: {total} tokens counted (value-only: {})",
        want_good + value(79)
    );
    let restarts = events(&rows, "restart");
    assert_eq!(restarts.len(), 1, "{restarts:?}");
    let message = restarts[0]["message"].as_str().unwrap();
    assert!(
        message.contains("server restarted") && message.contains("1 by start time"),
        "{message}"
    );
    // After the outage the windows start again; each full one is the new rate, exactly.
    let mut after = 0;
    for row in intervals.iter().filter(|r| {
        r["t"]
            .as_str()
            .is_some_and(|t| recording.index_at(&Value::from(t)) >= 62)
    }) {
        let rate = group(row, FAULTY)
            .and_then(window_rate)
            .unwrap_or_else(|| panic!("no window at {}", row["t"]));
        assert!((rate - 2_000.0).abs() <= 12.0, "{rate} tok/s at {}", row["t"]);
        after += 1;
    }
    assert!(after >= 15, "{after} rows after the outage");
}

/// A "counter" that goes down on every scrape with no restart evidence (a buggy
/// exporter): one restart is announced, then the server is announced erratic, once; its
/// window rate is null rather than millions of tokens a second, and the good server
/// beside it is exact.
#[test]
fn a_counter_that_goes_down_every_scrape_is_not_rated() {
    let faulty = |t: f64| {
        let n = (t.round() as i64) as f64;
        let tokens = if n as i64 % 2 == 0 {
            5_000_000.0 + 100.0 * n
        } else {
            1_000.0 + 100.0 * n
        };
        page(unix(-600.0), tokens)
    };
    let rows = beside_the_good_server("dropping-counter.jsonl", faulty);
    let intervals = rows_with_the_good_server_exact(&rows);
    for row in &intervals {
        if let Some(rate) = group(row, FAULTY).and_then(window_rate) {
            // The first drop is a reset, its value counted from zero (1,100 tokens in a
            // second), as Prometheus counts it; never the millions between the values.
            assert!(rate <= 1_200.0, "a spike: {rate} tok/s at {}", row["t"]);
        }
    }
    let erratic = events(&rows, "erratic");
    assert_eq!(erratic.len(), 1, "{erratic:?}");
    let message = erratic[0]["message"].as_str().unwrap();
    assert!(message.contains("two processes behind one URL"), "{message}");
    assert!(
        events(&rows, "restart").len() <= 1,
        "no restart announced per drop"
    );
    let total = events(&rows, "summary")[0]["generated_tokens"].as_f64().unwrap();
    assert!(
        total < 40.0 * 1_000.0 + 10_000.0,
        "the drops' values are no tokens: {total}"
    );
}

/// An exporter whose start time is always 5 s ago (computed from a clock) while its
/// counter climbs at 1,000 tokens a second, scraped every 2 s: one restart at most (the
/// first move is evidence), then a warning, once, that the start time is no process's;
/// its window rate is exact from the first full window after it, not the counter's whole
/// value on every page (51,000 to 56,000 tok/s in a hostile round), and the run's total
/// holds at most that one misread restart. (Scraped every second, the start time moves by
/// a second or less on some pages, and a move of a second after a process seen alive two
/// is one that started while it answered: erratic, not rated; never a spike either.)
#[test]
fn a_start_time_that_moves_on_every_page_is_not_a_restart_each_time() {
    let faulty = |t: f64| page(unix(t - 5.0), 100_000.0 + 1_000.0 * t);
    let grid = Grid::new(Duration::from_secs(2), 30).window(Duration::from_secs(10));
    let recording = Recording::make(
        "moving-start.jsonl",
        grid,
        &[Source::new(GOOD, good), Source::new(FAULTY, faulty)],
    );
    let rows = recording.replay(&["--json", "--by", "url"]);
    let intervals: Vec<&Value> = rows.iter().filter(|r| r.get("urls").is_some()).collect();
    assert!(
        events(&rows, "restart").len() <= 1,
        "{:?}",
        events(&rows, "restart")
    );
    let warnings = events(&rows, "warning");
    let warned = warnings
        .iter()
        .filter(|e| {
            e["message"]
                .as_str()
                .unwrap()
                .contains("counters went on from where they were")
        })
        .count();
    assert_eq!(warned, 1, "{warnings:?}");
    let late: Vec<f64> = intervals
        .iter()
        .filter(|row| row["elapsed_s"].as_f64().unwrap_or(0.0) >= 20.0)
        .filter_map(|row| group(row, FAULTY).and_then(window_rate))
        .collect();
    assert!(late.len() >= 15, "{late:?}");
    for rate in late {
        assert!((rate - 1_000.0).abs() <= 6.0, "{rate} tok/s");
    }
    let total = events(&rows, "summary")[0]["generated_tokens"].as_f64().unwrap();
    // Both servers' 1,000 tokens a second: the restart the first move was read as is
    // taken back when the next move shows the start time to be no process's.
    assert!((total - 2.0 * 58_000.0).abs() <= 2_500.0, "{total}");
}

/// One of a server's two engines leaves its page at 10 s (scaled down; no restart), each
/// having made 1,000 tokens a second: its tokens stay in the URL's count since the start,
/// which never goes down, through the scrapes it is missing from and after it is dropped
/// as stale; the summary holds every token (it lost the engine's 10,000).
#[test]
fn tokens_of_an_engine_that_left_stay_in_the_count_since_the_start() {
    let faulty = |t: f64| {
        let engine = |e: u32, tokens: f64| {
            format!("vllm:generation_tokens_total{{engine=\"{e}\",model_name=\"m\"}} {tokens}\n")
        };
        let mut page = format!(
            "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {}\n\
             # TYPE vllm:generation_tokens_total counter\n",
            unix(-600.0)
        );
        page += &engine(0, (1_000.0 * t).round());
        if t < 10.0 {
            page += &engine(1, (1_000.0 * t).round());
        }
        page + "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 8\n"
    };
    let rows = beside_the_good_server("engine-gone.jsonl", faulty);
    let intervals = rows_with_the_good_server_exact(&rows);
    let counts: Vec<f64> = intervals
        .iter()
        .filter_map(|row| group(row, FAULTY)?["generated_tokens_since_start"].as_f64())
        .collect();
    assert!(counts.len() >= 35, "{counts:?}");
    assert!(counts.windows(2).all(|w| w[1] >= w[0]), "went down: {counts:?}");
    let last = *counts.last().unwrap();
    // Engine 0's 39,000 and engine 1's 9,000 (its last page at 9 s).
    assert!((last - 48_000.0).abs() <= 100.0, "{last}");
    let total = events(&rows, "summary")[0]["generated_tokens"].as_f64().unwrap();
    assert!((total - 48_000.0 - 39_000.0).abs() <= 200.0, "{total}");
}

/// Two replicas deployed together (started 5 s apart) behind one load-balanced URL: the
/// first answers alone for 10 s (a sticky session), then they answer in turn. The second
/// started while the first was seen alive, so its start time is no restart; then the start
/// time goes back and forth. Announced once as two processes behind one URL (not 30
/// restarts), no rate for it (not millions of tokens a second), the good server exact.
#[test]
fn two_replicas_behind_one_url_are_announced_and_not_rated() {
    let faulty = |t: f64| {
        let n = t.round() as i64;
        if n < 10 || n % 2 == 0 {
            page(unix(-900.0), 1_000.0 * (t + 900.0))
        } else {
            page(unix(-895.0), 1_000.0 * (t + 895.0))
        }
    };
    let rows = beside_the_good_server("two-replicas.jsonl", faulty);
    let intervals = rows_with_the_good_server_exact(&rows);
    let rated = intervals
        .iter()
        .filter(|row| group(row, FAULTY).and_then(window_rate).is_some())
        .count();
    assert!(rated <= 12, "{rated} rows rate two processes as one counter");
    // A row whose rates leave it out says so, in its totals and in its group, and its
    // total is then the good server's alone; a row that rates it does not.
    let mut left_out = 0;
    for row in &intervals {
        let faulty = group(row, FAULTY).unwrap();
        let not_rated = row["not_rated"].as_u64().unwrap();
        assert_eq!(faulty["not_rated"], not_rated, "{row}");
        assert_eq!(group(row, GOOD).unwrap()["not_rated"], 0, "{row}");
        if not_rated == 1 {
            left_out += 1;
            assert!(window_rate(faulty).is_none(), "{row}");
            assert_eq!(window_rate(row), group(row, GOOD).and_then(window_rate), "{row}");
        } else {
            assert_eq!(not_rated, 0, "{row}");
        }
    }
    assert!(
        left_out >= 20,
        "{left_out} rows say the erratic server is left out"
    );
    for row in &intervals {
        if let Some(rate) = group(row, FAULTY).and_then(window_rate) {
            assert!((rate - 1_000.0).abs() <= 6.0, "{rate} tok/s at {}", row["t"]);
        }
    }
    let erratic = events(&rows, "erratic");
    assert_eq!(erratic.len(), 1, "{erratic:?}");
    // The summary says its tokens are not in its count (it said 0 tokens of it, as if counted).
    assert_eq!(intervals.last().unwrap()["not_rated"], 1);
    assert_eq!(events(&rows, "summary")[0]["not_rated"], 1);
    assert!(
        erratic[0]["message"].as_str().unwrap().contains("went backwards"),
        "{}",
        erratic[0]["message"]
    );
    assert!(
        events(&rows, "restart").len() <= 1,
        "{:?}",
        events(&rows, "restart")
    );
}

/// A server started again by hand that says it has been up an hour (as the built-in
/// simulator does), with prometheus_client's `_created` on its counter: its start time
/// and its counter's created time fall while the old process still answered. Not a
/// restart whose hour of tokens is new (millions of tokens a second): two processes,
/// announced, not rated, and its count not in the run's total.
#[test]
fn a_server_that_says_it_was_up_while_the_old_one_answered_is_not_a_restart() {
    let with_created = |start: f64, tokens: f64| {
        format!(
            "{}# TYPE vllm:generation_tokens_created gauge\n\
             vllm:generation_tokens_created{{engine=\"0\",model_name=\"m\"}} {}\n",
            page(start, tokens),
            start + 12.5
        )
    };
    let faulty = |t: f64| match t {
        t if t < 20.0 => with_created(unix(-3_600.0), 1_000.0 * (t + 3_600.0)),
        t if t < 23.0 => format!("{FAILED}connection refused"),
        // Started at 23 s, saying it started an hour before, its counter as if it had.
        t => with_created(unix(23.0 - 3_600.0), 1_000.0 * (t - 23.0 + 3_600.0)),
    };
    let rows = beside_the_good_server("up-an-hour-again.jsonl", faulty);
    let intervals = rows_with_the_good_server_exact(&rows);
    for row in &intervals {
        if let Some(rate) = group(row, FAULTY).and_then(window_rate) {
            assert!((rate - 1_000.0).abs() <= 6.0, "{rate} tok/s at {}", row["t"]);
        }
    }
    let erratic = events(&rows, "erratic");
    assert_eq!(erratic.len(), 1, "{erratic:?}");
    let summary = events(&rows, "summary")[0];
    let total = summary["generated_tokens"].as_f64().unwrap();
    assert!(
        total < 2.0 * 40.0 * 1_000.0,
        "an hour of tokens counted as new: {total}"
    );
}

/// The last page lacks the token counter (cut before it, or a server that stopped
/// exposing it): the summary gives the tokens counted up to the newest interval that had
/// them, not none.
#[test]
fn the_summary_keeps_the_count_when_the_last_page_lacks_it() {
    let faulty = |t: f64| {
        if t < 19.0 {
            page(unix(-600.0), 1_000.0 * t)
        } else {
            "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 8\n"
                .to_string()
        }
    };
    let grid = Grid::new(Duration::from_secs(1), 20).window(Duration::from_secs(5));
    let recording = Recording::make("count-gone.jsonl", grid, &[Source::new(FAULTY, faulty)]);
    let rows = recording.replay(&["--json"]);
    let summary = events(&rows, "summary")[0];
    // (The scrapes jitter by a few milliseconds: 1,000 tokens a second of them.)
    let total = summary["generated_tokens"].as_f64().expect("a count");
    assert!((total - 18_000.0).abs() < 20.0, "{summary}");
    let rate = summary["mean_generation_tokens_per_s"].as_f64().unwrap();
    assert!((rate - 1_000.0).abs() < 10.0, "{summary}");
}

/// An exporter that leaves the token counter out of ten pages (a family skipped while it
/// is collected, a TSDB's partial answers): the count since the start keeps what was
/// counted, and when the counter is back counts the tokens of the gap too (the series is
/// kept five minutes, as PromQL's lookback, not dropped after five pages).
#[test]
fn a_page_without_the_token_counter_keeps_the_count_since_the_start() {
    let faulty = |t: f64| {
        let tokens = 1_000.0 * (t + 600.0);
        if (12.0..22.0).contains(&t.round()) {
            format!(
                "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {}\n\
                 # TYPE vllm:num_requests_running gauge\n\
                 vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 8\n",
                unix(-600.0)
            )
        } else {
            page(unix(-600.0), tokens)
        }
    };
    let rows = beside_the_good_server("counter-skipped.jsonl", faulty);
    let intervals = rows_with_the_good_server_exact(&rows);
    let since_start = |row: &Value| row["generated_tokens_since_start"].as_f64();
    let counts: Vec<Option<f64>> = intervals
        .iter()
        .map(|row| group(row, FAULTY).and_then(since_start))
        .collect();
    let seen: Vec<f64> = counts.iter().flatten().copied().collect();
    assert_eq!(seen.len(), counts.len(), "rows without a count: {counts:?}");
    assert!(seen.windows(2).all(|w| w[1] >= w[0]), "went down: {counts:?}");
    let last = *seen.last().unwrap();
    assert!((last - 39_000.0).abs() <= 100.0, "{last}: {counts:?}");
    // The totals too: the good server's count and this one's, never lower than before.
    let totals: Vec<f64> = intervals.iter().filter_map(|row| since_start(row)).collect();
    assert_eq!(totals.len(), intervals.len());
    assert!(totals.windows(2).all(|w| w[1] >= w[0]), "went down: {totals:?}");
    let total = events(&rows, "summary")[0]["generated_tokens"].as_f64().unwrap();
    assert!((total - 2.0 * 39_000.0).abs() <= 200.0, "{total}");
}

/// A lone server replaced by one that says it has been up an hour (the simulator started
/// again by hand): the switch is two processes, not a restart, and counts nothing; every
/// token the new process counts after it is counted (the count stood still for a window
/// before, 10,000 tokens lost), and no stall is announced beside a window rate of 1,000
/// (it was, from 26 s to 33 s).
#[test]
fn a_server_replaced_by_one_up_an_hour_is_counted_and_never_stalled() {
    let replaced = |t: f64| match t {
        t if t < 20.0 => page(unix(-3_600.0), 1_000.0 * (t + 3_600.0)),
        t if t < 23.0 => format!("{FAILED}connection refused"),
        t => page(unix(23.0 - 3_600.0), 1_000.0 * (t - 23.0 + 3_600.0)),
    };
    let grid = Grid::new(Duration::from_secs(1), 60).window(Duration::from_secs(10));
    let recording = Recording::make("replaced.jsonl", grid, &[Source::new(FAULTY, replaced)]);
    let rows = recording.replay(&["--json"]);
    assert!(events(&rows, "stall").is_empty(), "{:?}", events(&rows, "stall"));
    assert_eq!(events(&rows, "erratic").len(), 1);
    let mut rated = 0;
    for row in rows.iter().filter(|r| r.get("urls").is_some()) {
        assert_eq!(row["stalled"], false, "{row}");
        if let Some(rate) = row["generation_tokens_per_s"]["window"].as_f64() {
            assert!((rate - 1_000.0).abs() <= 6.0, "{rate} tok/s at {}", row["t"]);
            rated += 1;
        }
    }
    assert!(rated >= 50, "{rated} rows rated");
    // 19,000 tokens by the last page of the first process, 36,000 from the second's first
    // page at 23 s to the last at 59 s (the scrapes jitter by milliseconds).
    let total = events(&rows, "summary")[0]["generated_tokens"].as_f64().unwrap();
    assert!((total - 55_000.0).abs() <= 20.0, "{total}");
}

/// A server restarted with its counters kept (vLLM with `PROMETHEUS_MULTIPROC_DIR` set and
/// not wiped between runs, which vLLM warns against): a new start time, the count going on
/// from the old one's. Read as a restart, its whole count was new tokens: 366,835 tok/s
/// for a window and an hour of tokens in the summary (a helper's trial). No restart,
/// said once, every window exact.
#[test]
fn counters_kept_across_a_restart_are_not_counted_again() {
    let kept = |t: f64| match t {
        t if t < 30.0 => page(unix(-3_600.0), 1_000.0 * (t + 3_600.0)),
        t => page(unix(29.5), 1_000.0 * (t + 3_600.0)),
    };
    let grid = Grid::new(Duration::from_secs(1), 60).window(Duration::from_secs(10));
    let recording = Recording::make("kept.jsonl", grid, &[Source::new(FAULTY, kept)]);
    let rows = recording.replay(&["--json"]);
    assert!(
        events(&rows, "restart").is_empty(),
        "{:?}",
        events(&rows, "restart")
    );
    let said = events(&rows, "warning")
        .into_iter()
        .filter(|e| {
            e["message"]
                .as_str()
                .unwrap()
                .contains("PROMETHEUS_MULTIPROC_DIR")
        })
        .count();
    assert_eq!(said, 1);
    for row in rows.iter().filter(|r| r.get("urls").is_some()) {
        if let Some(rate) = row["generation_tokens_per_s"]["window"].as_f64() {
            assert!((rate - 1_000.0).abs() <= 6.0, "{rate} tok/s at {}", row["t"]);
        }
    }
    let total = events(&rows, "summary")[0]["generated_tokens"].as_f64().unwrap();
    assert!((total - 59_000.0).abs() <= 20.0, "{total}");
}

/// A rollback with bare counters (no start time, no `_created`): the old process, up an
/// hour, answers again after a new one answered alone for 20 s. Its count leaps from the
/// new one's past where it dropped from: read as tokens, 360,950 tok/s for a window and
/// 3,778,000 tokens of 179,000 (a helper's trial). Now no window above the truth, the
/// return said, and each process counted by its own rise.
#[test]
fn a_rollback_with_bare_counters_gives_no_spike() {
    let bare = |tokens: f64| {
        format!(
            "# TYPE vllm:generation_tokens_total counter\n\
             vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {tokens}\n\
             # TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 8\n"
        )
    };
    let rollback = move |t: f64| match t.round() as i64 {
        t @ 20..40 => bare(1_000.0 * (t - 19) as f64),
        t => bare(1_000.0 * (t + 3_600) as f64),
    };
    let grid = Grid::new(Duration::from_secs(1), 60).window(Duration::from_secs(10));
    let recording = Recording::make("rollback-bare.jsonl", grid, &[Source::new(FAULTY, rollback)]);
    let rows = recording.replay(&["--json"]);
    assert_eq!(events(&rows, "erratic").len(), 1, "the return is said");
    for row in rows.iter().filter(|r| r.get("urls").is_some()) {
        if let Some(rate) = row["generation_tokens_per_s"]["window"].as_f64() {
            assert!(rate <= 1_006.0, "{rate} tok/s at {}", row["t"]);
        }
    }
    // The old process's 19,000 to 19 s and 40,000 from there to 59 s (20,000 of them while
    // away, read at its return); the new one's 1,000 at 20 s (a restart, its whole count)
    // and 19,000 to 39 s.
    let total = events(&rows, "summary")[0]["generated_tokens"].as_f64().unwrap();
    assert_eq!(total, 19_000.0 + 40_000.0 + 1_000.0 + 19_000.0);
}

/// Two replicas deployed a few seconds apart behind one URL answer in turn for ten
/// seconds, then the second alone: each return of the second replica is no restart, so no
/// window after the last switch counts its whole count as new tokens (2,800 tok/s at
/// 38 s where 1,000 were true), and the count goes on while they answer in turn.
#[test]
fn replicas_in_turn_then_one_alone_give_no_spike() {
    let blue_green = |t: f64| {
        let old = page(unix(-3_600.0), 1_000.0 * (t + 3_600.0));
        let new = page(unix(10.0), 1_000.0 * (t - 10.0));
        match t.round() as i64 {
            t if t < 20 => old,
            t if t < 30 && t % 2 == 0 => old,
            _ => new,
        }
    };
    let grid = Grid::new(Duration::from_secs(1), 60).window(Duration::from_secs(10));
    let recording = Recording::make("blue-green.jsonl", grid, &[Source::new(FAULTY, blue_green)]);
    let rows = recording.replay(&["--json"]);
    assert_eq!(events(&rows, "erratic").len(), 1);
    let mut after = 0;
    for row in rows.iter().filter(|r| r.get("urls").is_some()) {
        let Some(rate) = row["generation_tokens_per_s"]["window"].as_f64() else {
            continue;
        };
        // Up to 21 s both replicas served 1,000 a second each, the first window that
        // sees the second counts both; from 31 s on the second alone.
        assert!(rate <= 2_006.0, "{rate} tok/s at {}", row["t"]);
        if row["t"].as_str().is_some_and(|t| t > "2027-01-15T08:00:31") {
            assert!((rate - 1_000.0).abs() <= 6.0, "{rate} tok/s at {}", row["t"]);
            after += 1;
        }
    }
    assert!(after >= 15, "{after} rows rated after the switches");
    // Each replica's own rise between its pages is counted, while they answer in turn
    // too: the first's 28,000 to its last page at 28 s, the second's 11,000 at 21 s (read
    // as a restart: its whole count) and its 38,000 from there to 59 s. The count stood
    // still at each switch before (60,996).
    let total = events(&rows, "summary")[0]["generated_tokens"].as_f64().unwrap();
    assert!((total - 77_000.0).abs() <= 20.0, "{total}");
}
