//! The guide: from a page of text to the figure you want, one step at a time.
//!
//! Each section is a runnable example (`cargo test --doc` runs them). The library reads
//! text you hand it, at the time you say it was scraped: HTTP, files and clocks are yours.
//!
//! ```toml
//! [dependencies]
//! promrate = "0.4"  # before it is on crates.io: promrate = { path = "../promrate" }, a clone
//! chrono = "0.4"   # its default features include the clock: `Utc::now()` for "scraped now"
//! ```
//!
//! promrate needs only chrono's `std` feature; without chrono's clock,
//! `DateTime::<Utc>::from(std::time::SystemTime::now())` is "now" too.
//!
//! # Contents
//! 1. [Parse a page](#parse-a-page)
//! 2. [Select series](#select-series)
//! 3. [Rates through restarts](#rates-through-restarts)
//! 4. [Windows and what they cover](#windows-and-what-they-cover)
//! 5. [Per label, smoothed](#per-label-smoothed)
//! 6. [Gauges, and totals since the start](#gauges-and-totals-since-the-start)
//! 7. [Quantiles and means of histograms](#quantiles-and-means-of-histograms)
//! 8. [OpenMetrics 2.0: start timestamps, one-line histograms](#openmetrics-20-start-timestamps-one-line-histograms)
//! 9. [Pages as they arrive](#pages-as-they-arrive)
//! 10. [PromQL's functions over your own points](#promqls-functions-over-your-own-points)
//! 11. [Errors](#errors)
//! 12. [Writing pages back](#writing-pages-back)
//!
//! # Parse a page
//!
//! [`parse`](crate::parse) reads the Prometheus text format (0.0.4, and 1.0.0 with
//! Prometheus 3's quoted UTF-8 names); [`Parser::new`](crate::Parser::new) takes
//! [`Format::OpenMetrics`](crate::Format::OpenMetrics) or `Format::OpenMetrics2` (rc0:
//! `st@` start timestamps, composite values for histograms, gauge histograms and
//! summaries, native histograms, several exemplars) with full validation, and
//! [`Format::from_content_type`](crate::Format::from_content_type) picks one from an
//! HTTP header. Samples borrow from the page (no allocation per sample); a bad line is an
//! error with its line and column, and the page goes on after it.
//!
//! ```
//! use promrate::Entry;
//!
//! let page = "# TYPE vllm:generation_tokens_total counter\n\
//!             vllm:generation_tokens_total{engine=\"0\",model_name=\"llama-3\"} 7852\n\
//!             vllm:num_requests_running{engine=\"0\" 12\n\
//!             vllm:num_requests_waiting{engine=\"0\"} 3\n";
//! let mut values = Vec::new();
//! let mut bad = Vec::new();
//! for entry in promrate::parse(page) {
//!     match entry {
//!         Ok(Entry::Sample(s)) => {
//!             assert_eq!(s.labels().get("engine").unwrap(), "0");
//!             values.push((s.name(), s.value()));
//!         }
//!         Ok(_) => {} // metadata: # TYPE, # HELP, # UNIT
//!         Err(e) => bad.push((e.line, e.column)),
//!     }
//! }
//! assert_eq!(values, [("vllm:generation_tokens_total", 7852.0), ("vllm:num_requests_waiting", 3.0)]);
//! assert_eq!(bad, [(3, 38)]); // the missing `}`
//! ```
//!
//! Nothing is limited by default: no page Prometheus accepts is refused for its size. Opt-in limits
//! carry Prometheus' names (`sample_limit`, `label_limit`, `label_name_length_limit`,
//! `label_value_length_limit`, `body_size_limit`, and `max_line_len`), each with its own
//! typed error. `strict(false)` keeps unknown escapes as written (as the Prometheus server
//! does) and, for OpenMetrics, checks lines on their own (vLLM's OpenMetrics output
//! repeats metadata where the format forbids it).
//!
//! ```
//! use promrate::{Format, Parser};
//!
//! let parser = Parser::new(Format::from_content_type("text/plain; version=0.0.4")).sample_limit(1);
//! let errors = parser.parse("a 1\nb 2\n").filter(Result::is_err).count();
//! assert_eq!(errors, 1); // the second sample is over the limit
//! ```
//!
//! # Select series
//!
//! A [`Selector`](crate::Selector) is a PromQL series selector: `=`, `!=`, `=~`, `!~`
//! (fully anchored, compiled once), `__name__`, label-only selectors, `"`/`'`/backtick
//! strings with PromQL's escapes, and PromQL's rule that one matcher must not match the
//! empty string. [`Selector::matches`](crate::Selector::matches) compares the sample's name
//! as written; [`Selector::matches_family`](crate::Selector::matches_family), which the
//! tracker uses, also lets a histogram's or summary's name pick its `_bucket`, `_sum`,
//! `_count` and `_created` series (`ttft_seconds` picks `ttft_seconds_count`). `=~` and `!~`
//! need the default feature `regex`.
//!
//! ```
//! use promrate::{Entry, Selector};
//!
//! let tokens = Selector::parse(r#"vllm:generation_tokens_total{model_name=~"llama.*"}"#)?;
//! let page = "vllm:generation_tokens_total{engine=\"0\",model_name=\"llama-3\"} 1000\n\
//!             vllm:generation_tokens_total{engine=\"1\",model_name=\"llama-3\"} 2000\n\
//!             vllm:generation_tokens_total{engine=\"0\",model_name=\"qwen\"} 9000\n";
//! let mut total = 0.0;
//! for entry in promrate::parse(page) {
//!     if let Entry::Sample(s) = entry? {
//!         if tokens.matches(&s) {
//!             total += s.value();
//!         }
//!     }
//! }
//! assert_eq!(total, 3000.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Rates through restarts
//!
//! A [`Tracker`](crate::Tracker) follows whole scrapes of the series its selectors pick:
//! identity by name and label set, staleness, and restarts (a value that drops, a changed
//! `_created`, a changed `process_start_time_seconds`). A [`Query`](crate::Query) asks
//! for one figure and [`Tracker::evaluate`](crate::Tracker::evaluate) answers it. The
//! estimators: `Rate`, `Increase` and `Irate` are PromQL's, bit for bit; `WindowRate` and
//! `WindowIncrease` compare the scrape nearest the window's start with the newest, never
//! extrapolated and never across a gap; `Ewma` is a smoothed rate.
//!
//! Two scrapes ten seconds apart, engine 1 restarted in between (its counter began again
//! from 0):
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Tracker};
//!
//! let page = |engine0: u32, engine1: u32| {
//!     format!(
//!         "# TYPE vllm:generation_tokens_total counter\n\
//!          vllm:generation_tokens_total{{engine=\"0\"}} {engine0}\n\
//!          vllm:generation_tokens_total{{engine=\"1\"}} {engine1}\n"
//!     )
//! };
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
//! tracker.ingest(&page(1000, 2000), t0)?;
//! let report = tracker.ingest(&page(1500, 300), t0 + TimeDelta::seconds(10))?;
//! assert_eq!(report.resets.len(), 1, "engine 1 restarted");
//!
//! let tok_s = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10));
//! assert_eq!(tracker.evaluate(&tok_s)?.value()?, 80.0); // (500 + 300) / 10 s, not -120/s
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `Tracker::vllm_preset` reads vLLM's OpenMetrics spelling (`vllm_x` for `vllm:x`) and
//! its client's quirks. A selector that matched none of a page's samples is named in the
//! ingest's report, with the names on the page nearest to it. PromQL's estimators read the
//! page's `_created` times, as Prometheus 3.14+ with start timestamps does
//! (`Query::start_timestamps(false)` computes from the values alone). A scrape over a
//! limit of its parser, or past `Tracker::max_series`, is refused whole and changes
//! nothing, as Prometheus fails such a scrape.
//!
//! # Windows and what they cover
//!
//! Every group of an answer says what time its points cover
//! ([`Coverage`](crate::Coverage)), and why it is shorter than the window asked when it is
//! ([`Shortened`](crate::Shortened): since the series' first point, after a gap, or
//! because the retention keeps less). A minute asked, ten seconds known:
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Shortened, Tracker};
//!
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
//! tracker.ingest("vllm:generation_tokens_total 1000\n", t0)?;
//! tracker.ingest("vllm:generation_tokens_total 1800\n", t0 + TimeDelta::seconds(10))?;
//!
//! let minute = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::minutes(1));
//! let answer = tracker.evaluate(&minute)?;
//! let coverage = answer.groups[0].coverage.clone().unwrap();
//! assert_eq!(answer.value()?, 80.0);
//! assert_eq!(coverage.span, TimeDelta::seconds(10));
//! assert_eq!(coverage.shortened, Some(Shortened::SinceFirstPoint));
//!
//! // PromQL's rate over the same minute: 800 tokens extrapolated 5 s before the first
//! // point (half the interval), then divided by the whole minute.
//! let promql = Query::new(&tokens, Estimator::Rate).window(TimeDelta::minutes(1));
//! assert_eq!(tracker.evaluate(&promql)?.value()?, 20.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A query's settings: `.window`, `.at` (evaluate in the past), `.by` (a figure per label
//! value), `.scope` (`SeriesScope::NewestPage` by default: a stopped target stops counting
//! at once; `UntilStale` counts as PromQL does), `.promql(RangeFunctions::new(w)...)`
//! (Prometheus 3 or 2 semantics, the lookback, and Prometheus 3.7+'s `anchored` and
//! `smoothed` modifiers) and `.window_rule(WindowRule::new(w)...)` (the window estimators'
//! slack and gap).
//!
//! The window estimators (`WindowRate`, `WindowIncrease`) start at the scrape nearest the
//! window's start, and may reach back past it by the *slack* (a window again, by default)
//! to find one: a 10 s window over scrapes 10 s apart reads the two newest, and a message
//! about too few scrapes names the window and its slack together. PromQL's `Rate` reads
//! only the points inside its window and extrapolates a little past them, then divides by
//! the whole window: asked for a minute with ten seconds of points, it read a quarter of
//! the window rate above (PromQL's answer, which the window rate does not share).
//!
//! # Per label, smoothed
//!
//! `.by([...])` gives one group per value of the labels, sorted by those values; each
//! group's value is a number or the reason it has none
//! ([`NoValue`](crate::NoValue): one point so far, not a counter, gone from the newest
//! page, ...), each estimator reading its window as above (PromQL's `Rate` only the
//! points inside it: over scrapes 15 s apart, a 30 s window holds two of them, not three).
//! The EWMA's time constant is the tracker's (set it with
//! [`Tracker::ewma_time_constant`](crate::Tracker::ewma_time_constant) before ingesting):
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Tracker};
//!
//! let page = |engine0: u32, engine1: u32| {
//!     format!(
//!         "vllm:generation_tokens_total{{engine=\"0\"}} {engine0}\n\
//!          vllm:generation_tokens_total{{engine=\"1\"}} {engine1}\n"
//!     )
//! };
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
//! tracker.ingest(&page(1000, 2000), t0)?;
//! tracker.ingest(&page(1500, 300), t0 + TimeDelta::seconds(10))?;
//!
//! let ewma = tracker.evaluate(&Query::new(&tokens, Estimator::Ewma).by(["engine"]))?;
//! let per_engine: Vec<(Option<&str>, f64)> =
//!     ewma.groups.iter().map(|g| (g.label("engine"), g.value.clone().unwrap())).collect();
//! assert_eq!(per_engine, [(Some("0"), 50.0), (Some("1"), 30.0)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Gauges, and totals since the start
//!
//! The same road reads what is not a rate: [`Estimator::Last`](crate::Estimator::Last) (a
//! gauge's newest value, summed per group), [`Estimator::Average`](crate::Estimator::Average)
//! (its mean over the window) and [`Estimator::TotalIncrease`](crate::Estimator::TotalIncrease)
//! (a counter's increase since the tracker's first page, through every restart). A tracker
//! made with no selectors (`Tracker::new([])`) keeps every series of its pages:
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Tracker};
//!
//! let mut tracker = Tracker::new([]);
//! let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
//! tracker.ingest("vllm:num_requests_running 4\nvllm:generation_tokens_total 900\n", t0)?;
//! tracker.ingest("vllm:num_requests_running 8\nvllm:generation_tokens_total 1200\n", t0 + TimeDelta::seconds(10))?;
//! // Restarted: 100 tokens since, 400 in all.
//! tracker.ingest("vllm:num_requests_running 6\nvllm:generation_tokens_total 100\n", t0 + TimeDelta::seconds(20))?;
//!
//! let running = Selector::parse("vllm:num_requests_running")?;
//! assert_eq!(tracker.evaluate(&Query::new(&running, Estimator::Last))?.value()?, 6.0);
//! let mean = Query::new(&running, Estimator::Average).window(TimeDelta::seconds(30));
//! assert_eq!(tracker.evaluate(&mean)?.value()?, 6.0);
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! assert_eq!(tracker.evaluate(&Query::new(&tokens, Estimator::TotalIncrease))?.value()?, 400.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Quantiles and means of histograms
//!
//! [`Query::quantile`](crate::Query::quantile) reads
//! `histogram_quantile(q, sum by (le) (increase(x_bucket[w])))`: each bucket's increase
//! over the window, then PromQL's interpolation. [`Query::mean`](crate::Query::mean)
//! reads `increase(x_sum) / increase(x_count)`, and [`Query::buckets`](crate::Query::buckets)
//! the buckets themselves. The query names the histogram's family:
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Tracker};
//!
//! let page = |fast: u32, all: u32| {
//!     format!(
//!         "# TYPE vllm:time_to_first_token_seconds histogram\n\
//!          vllm:time_to_first_token_seconds_bucket{{le=\"0.1\"}} {fast}\n\
//!          vllm:time_to_first_token_seconds_bucket{{le=\"1.0\"}} {all}\n\
//!          vllm:time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {all}\n\
//!          vllm:time_to_first_token_seconds_count {all}\n"
//!     )
//! };
//! let ttft = Selector::parse("vllm:time_to_first_token_seconds")?;
//! let mut tracker = Tracker::new([ttft.clone()]);
//! let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
//! tracker.ingest(&page(500, 1000), t0)?;
//! tracker.ingest(&page(590, 1100), t0 + TimeDelta::seconds(10))?;
//!
//! let window = Query::new(&ttft, Estimator::WindowIncrease).window(TimeDelta::seconds(10));
//! let p95 = tracker.evaluate(&window.clone().quantile(0.95))?.value()?;
//! assert!((p95 - 0.55).abs() < 1e-9); // 90 of 100 under 0.1 s: halfway through (0.1, 1.0]
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # OpenMetrics 2.0: start timestamps, one-line histograms
//!
//! A tracker reads the text format unless told otherwise: give it the page's format with
//! [`Tracker::read_as`](crate::Tracker::read_as) (from the Content-Type,
//! [`Format::from_content_type`](crate::Format::from_content_type), which maps
//! `application/openmetrics-text; version=2.0.0` to `Format::OpenMetrics2`). Read as text,
//! an OpenMetrics 2.0 page is bad lines (`invalid timestamp`, `invalid sample value`),
//! counted in the [`IngestReport`](crate::IngestReport) and kept as nothing.
//!
//! A sample's `st@` is its start (created) time; a histogram, gauge histogram or summary
//! is one line, its buckets read in place. The tracker keeps such a line as the classic
//! series an OpenMetrics 1.0 page has (`x_bucket{le=...}`, `x_count`, `x_sum`), each
//! started at the `st@`, so a restart that only the start time tells is still seen:
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Format, Parser, Query, Selector, Tracker};
//!
//! let page = |n: u32, start: &str| {
//!     let half = n / 2;
//!     [
//!         "# TYPE tokens counter".to_string(),
//!         format!("tokens_total {n} st@{start}"),
//!         "# TYPE ttft_seconds histogram".to_string(),
//!         format!("ttft_seconds {{count:{n},sum:{n},bucket:[0.1:{half},1.0:{n},+Inf:{n}]}} st@{start}"),
//!         "# EOF\n".to_string(),
//!     ]
//!     .join("\n")
//! };
//! let first = page(1000, "1764000000.5");
//! let entries = Parser::new(Format::OpenMetrics2).parse(&first).collect::<Result<Vec<_>, _>>()?;
//! let samples: Vec<_> = entries.into_iter().filter_map(|e| e.into_sample()).collect();
//! assert_eq!(samples[0].start_timestamp_ms(), Some(1_764_000_000_500));
//! let buckets: Vec<(f64, f64)> = samples[1].composite().unwrap().buckets().unwrap().collect();
//! assert_eq!(buckets, [(0.1, 500.0), (1.0, 1000.0), (f64::INFINITY, 1000.0)]);
//!
//! let (tokens, ttft) = (Selector::parse("tokens_total")?, Selector::parse("ttft_seconds")?);
//! let mut tracker = Tracker::new([tokens.clone(), ttft.clone()]);
//! tracker.read_as(Format::from_content_type("application/openmetrics-text; version=2.0.0"));
//! let t0 = DateTime::from_timestamp(1_764_000_010, 0).unwrap();
//! tracker.ingest(&first, t0)?;
//! // Restarted 5 s before this scrape, and already past the old count: only `st@` tells.
//! let report = tracker.ingest(&page(1200, "1764000015"), t0 + TimeDelta::seconds(10))?;
//! assert_eq!(report.resets.len(), 1 + 5); // the counter; the histogram's 3 buckets, count, sum
//! let rate = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10));
//! assert_eq!(tracker.evaluate(&rate)?.value()?, 120.0); // 1200 new tokens in 10 s
//! let window = Query::new(&ttft, Estimator::WindowIncrease).window(TimeDelta::seconds(10));
//! let p50 = tracker.evaluate(&window.quantile(0.5))?.value()?;
//! assert!((p50 - 0.1).abs() < 1e-9); // half of the 1200 new ones under 0.1 s
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Pages as they arrive
//!
//! A tracker need not hold a page whole: [`Tracker::ingest_reader`](crate::Tracker::ingest_reader)
//! reads one from anything that implements [`std::io::Read`] (an HTTP response's body, a
//! decompressor, a file), and [`Tracker::ingest_chunks`](crate::Tracker::ingest_chunks)
//! takes chunks you push, cut anywhere (inside a line or a UTF-8 character), then
//! `finish`es. Either way the series, points and report are those of
//! [`Tracker::ingest`](crate::Tracker::ingest) on the whole page, bad lines with their line
//! numbers in the page; memory is the longest line cut between two chunks, not the page.
//! A strict OpenMetrics parser is the exception (its rules span the page, so it gathers
//! the page first).
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Tracker};
//!
//! /// A body that arrives seven bytes at a time, as a socket may give it.
//! struct Trickle<'a>(&'a [u8]);
//! impl std::io::Read for Trickle<'_> {
//!     fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
//!         let n = buf.len().min(7).min(self.0.len());
//!         buf[..n].copy_from_slice(&self.0[..n]);
//!         self.0 = &self.0[n..];
//!         Ok(n)
//!     }
//! }
//! let page = |tokens: u32| {
//!     format!("# TYPE vllm:generation_tokens_total counter\n\
//!              vllm:generation_tokens_total{{model_name=\"llama-3\"}} {tokens}\n\
//!              vllm:num_requests_running{{model_name=\"llama-3\"}} oops\n")
//! };
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
//! let report = tracker.ingest_reader(Trickle(page(1000).as_bytes()), t0)?;
//! // The matching sample recorded; the bad line counted, the first error kept with its line.
//! assert_eq!((report.samples, report.bad_lines), (1, 1));
//! assert_eq!(report.first_error.unwrap().line, 3); // `oops` is not a number
//!
//! // The next scrape in chunks of your own: here, cut in the middle of a label value.
//! let text = page(1600);
//! let (head, tail) = text.split_at(text.find("llama").unwrap() + 3);
//! let mut scrape = tracker.ingest_chunks(t0 + TimeDelta::seconds(10))?;
//! scrape.push(head);
//! scrape.push(tail);
//! scrape.finish()?;
//! let tok_s = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10));
//! assert_eq!(tracker.evaluate(&tok_s)?.value()?, 60.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # PromQL's functions over your own points
//!
//! [`promql::RangeFunctions`](crate::promql::RangeFunctions) has `rate`, `increase`,
//! `delta`, `irate`, `idelta`, `resets` and `changes` over any slice of points, with
//! `Semantics::Prometheus3` (the default) or `Prometheus2`; `.anchored()` and
//! `.smoothed()` (Prometheus 3.7+, only for the functions PromQL allows them with);
//! `.with_start_times(..)` for start-timestamp-aware `rate` and `increase`. A function
//! with no value answers `None`, never a made-up number; `RangeFunctions::check` says why.
//! For one live counter outside a tracker, [`CounterSeries`](crate::series::CounterSeries) keeps
//! its points, restarts and retention.
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::promql::{Point, RangeFunctions};
//!
//! // 2/s, scraped every minute from 60 s to 300 s: 480 seen, extrapolated to the 5 m.
//! let points: Vec<Point> = (1..=5).map(|m| Point::from_millis(m * 60_000, m as f64 * 120.0)).collect();
//! let at = DateTime::from_timestamp(300, 0).unwrap();
//! let five_minutes = RangeFunctions::new(TimeDelta::minutes(5));
//! assert_eq!(five_minutes.increase(&points, at), Some(600.0));
//! // One point in a 30 s window: no rate, and check says why.
//! let half_minute = RangeFunctions::new(TimeDelta::seconds(30));
//! assert_eq!(half_minute.rate(&points, at), None);
//! assert!(half_minute.check(&points, at).is_err());
//! ```
//!
//! # Errors
//!
//! Every error is typed and says what to change. A page's bad line is a
//! [`ParseError`](crate::ParseError) (line, column, kind); a bad selector a
//! [`SelectorError`](crate::SelectorError) with its column; a refused scrape an
//! [`IngestError`](crate::IngestError). A query about series the tracker does not keep
//! (with the nearest names it does keep), a rate over a histogram's every part, a quantile
//! of `95`, a window longer than the retention, or a PromQL modifier PromQL does not allow
//! is a [`QueryError`](crate::QueryError). A figure that has no value is not an error: its
//! group holds a [`NoValue`](crate::NoValue) instead, a query before any scrape too
//! (`NoValue::NoScrapes`: the query was right, the data is not there yet).
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, QueryError, Selector, Tracker};
//!
//! assert_eq!(Selector::parse("vllm:x{engine=}").unwrap_err().column, 15);
//!
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
//! tracker.ingest("vllm:generation_tokens_total 1000\n", t0)?;
//!
//! let one_point = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10));
//! assert!(tracker.evaluate(&one_point)?.value().is_err()); // a NoValue: one point so far
//!
//! let other = Selector::parse("vllm:prompt_tokens_total")?;
//! let not_kept = tracker.evaluate(&Query::new(&other, Estimator::WindowRate).window(TimeDelta::seconds(10)));
//! assert!(matches!(not_kept, Err(QueryError::NotTracked { .. })), "{not_kept:?}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Writing pages back
//!
//! [`text::write`](crate::text::write) renders samples and families back, escaped, with
//! values formatted as Go and prometheus_client format them (`1.950573e+06`). The
//! repository's `promcat` example prints a page's samples, bad lines on stderr as
//! `line:column: message`:
//!
//! ```sh
//! cargo run --example promcat -- FILE|URL|- [--selector SEL] [--openmetrics] [--json]
//! ```
