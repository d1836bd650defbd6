//! The tracker's settings, changed through `&mut` (each setter returns `&mut Self` to
//! chain), so a tracker that holds history can be reconfigured in place.

use chrono::TimeDelta;

use super::roles::KnownFamilies;
use super::Tracker;
use crate::text::{Format, Parser};

impl Tracker {
    /// The settings vLLM's pages need, in every format and version (and SGLang's, which
    /// the same Python client writes): metric names compared with ':' and '_' alike
    /// ([`Tracker::normalize_names`]: vLLM's OpenMetrics output spells `vllm:x` as
    /// `vllm_x`), and OpenMetrics read line by line ([`Parser::strict`]`(false)`:
    /// prometheus_client repeats a family's metadata where the format forbids it, which
    /// strict mode reports on 22 lines of a vLLM 0.33 page). The format stays the
    /// parser's: set it per page with [`Tracker::read_as`].
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Format, Query, Selector, Tracker};
    /// let tokens = Selector::parse("vllm:generation_tokens_total")?;
    /// let mut tracker = Tracker::new([tokens.clone()]);
    /// tracker.vllm_preset().read_as(Format::from_content_type("application/openmetrics-text; version=1.0.0"));
    /// let at = |s: i64| chrono::DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
    /// let page = |n: u32| format!("# TYPE vllm_generation_tokens counter\nvllm_generation_tokens_total {n}\n# EOF\n");
    /// tracker.ingest(&page(0), at(0))?;
    /// tracker.ingest(&page(300), at(10))?;
    /// let rate = tracker.evaluate(&Query::new(&tokens, Estimator::WindowRate).window(chrono::TimeDelta::seconds(10)))?;
    /// assert_eq!(rate.value()?, 30.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn vllm_preset(&mut self) -> &mut Self {
        self.normalize_names(true);
        self.parser(self.parser.strict(false))
    }

    /// The format of the pages to come, keeping the parser's other settings (limits,
    /// strictness): a server that answers OpenMetrics when asked. Pick it from the HTTP
    /// header with [`Format::from_content_type`].
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Tracker};
    /// let mut t = Tracker::new([]);
    /// t.read_as(Format::from_content_type("application/openmetrics-text; version=1.0.0; charset=utf-8"));
    /// let report = t.ingest("# TYPE a counter\na_total 1 5.5\n# EOF\n", chrono::DateTime::from_timestamp(9, 0).unwrap())?;
    /// assert_eq!((report.samples, report.bad_lines), (1, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_as(&mut self, format: Format) -> &mut Self {
        self.parser(self.parser.with_format(format))
    }

    /// The parser (format, limits) to read pages with. Default: Prometheus text. May change
    /// between scrapes (a server that starts answering OpenMetrics).
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser, Tracker};
    /// let mut t = Tracker::new([]);
    /// t.parser(Parser::new(Format::OpenMetrics).strict(false));
    /// let report = t.ingest("# TYPE a counter\na_total 1 5.5\n# EOF\n", chrono::DateTime::from_timestamp(9, 0).unwrap())?;
    /// assert_eq!(report.samples, 1);
    /// assert_eq!(t.get("a_total", &[]).unwrap().counter().unwrap().last().unwrap().timestamp_ms, 5_500);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parser(&mut self, parser: Parser) -> &mut Self {
        if parser != self.parser {
            // What a position's text was read as depends on the parser.
            self.positions.clear();
        }
        self.parser = parser;
        self
    }

    /// Treat ':' and '_' as equal in metric names (series identity, `# TYPE` families,
    /// selectors and queries), so `vllm:x` and `vllm_x` are one series.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.normalize_names(true);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("vllm:x_total 1\n", at(1))?;
    /// t.ingest("vllm_x_total 2\n", at(2))?;
    /// assert_eq!(t.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn normalize_names(&mut self, on: bool) -> &mut Self {
        self.index.set_normalize_names(on);
        for selector in &mut self.selectors {
            *selector = selector.clone().normalize_names(on);
        }
        self.positions.clear();
        self
    }

    /// How much history each new series keeps. Default [`DEFAULT_RETENTION`](crate::tracker::DEFAULT_RETENTION). A
    /// query with a longer window is refused ([`QueryError::WindowBeyondRetention`](crate::QueryError::WindowBeyondRetention)):
    /// its answer would cover less than it asks.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// t.retention(TimeDelta::seconds(15));
    /// for s in 0..10 {
    ///     t.ingest(&format!("a_total {s}\n"), DateTime::from_timestamp(s * 10, 0).unwrap())?;
    /// }
    /// // 15 s of history plus the point at or before its start.
    /// assert_eq!(t.get("a_total", &[]).unwrap().counter().unwrap().len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retention(&mut self, retention: TimeDelta) -> &mut Self {
        self.retention = retention;
        self
    }

    /// The interval at which series are expected to get points (a scrape interval), as a
    /// hint: each new series' points are then allocated once, for what the retention holds
    /// at that interval, instead of when its second point tells the interval. Like
    /// `Vec::with_capacity`, it changes memory, never what is kept: a faster series grows
    /// its column. A fleet of millions of series saves the allocator's leftovers of the
    /// first allocation (about 30 bytes a series). Default: none.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// t.retention(TimeDelta::seconds(60)).expect_interval(TimeDelta::seconds(15));
    /// for s in 0..10 {
    ///     t.ingest(&format!("a_total {s}\n"), DateTime::from_timestamp(s * 15, 0).unwrap())?;
    /// }
    /// assert_eq!(t.get("a_total", &[]).unwrap().counter().unwrap().len(), 5);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn expect_interval(&mut self, interval: TimeDelta) -> &mut Self {
        self.expected_interval = (interval > TimeDelta::zero()).then_some(interval);
        self
    }

    /// Whether series with the same labels hold one copy of them, from the next new series
    /// on. A server's page repeats its label sets under many names (a histogram's
    /// buckets, `_sum` and `_count`, another histogram with the same bounds, the gauges of
    /// one engine): a vLLM page has about 130 sets for 390 series, and a tracker of
    /// 10,000 such servers holds 1.21 GB instead of 1.32. It costs a table entry for each
    /// distinct set and a lookup for each new series, which a page whose series all have
    /// labels of their own pays for nothing (at a million such series, 36 bytes a series
    /// and a first ingest half as long again: `cargo bench --bench fleet`), so it is off by
    /// default. It changes memory, never what is kept.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.share_label_sets(true);
    /// let page = "h_sum{model=\"m\"} 2\nh_count{model=\"m\"} 1\n";
    /// t.ingest(page, chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let models: Vec<_> = t.series().map(|s| s.label("model")).collect();
    /// assert_eq!(models, [Some("m"), Some("m")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn share_label_sets(&mut self, share: bool) -> &mut Self {
        self.index.share_label_sets(share);
        self
    }

    /// Drop a series after it is missing from this many consecutive scrapes (min 1).
    /// Default [`DEFAULT_STALE_AFTER`](crate::tracker::DEFAULT_STALE_AFTER).
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.stale_after(1);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("a 1\n", at(1))?;
    /// assert_eq!(t.ingest("b 1\n", at(2))?.dropped_stale, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stale_after(&mut self, scrapes: u32) -> &mut Self {
        self.stale_after = scrapes.max(1);
        self
    }

    /// The EWMA time constant for new counter series (see [`CounterSeries::ewma_rate`](crate::series::CounterSeries::ewma_rate)).
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// t.ewma_time_constant(TimeDelta::seconds(10));
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("a_total 0\n", at(0))?;
    /// t.ingest("a_total 100\n", at(10))?;
    /// t.ingest("a_total 100\n", at(20))?;
    /// // 10/s, then 0/s weighted by 1 - exp(-10 s / 10 s).
    /// let ewma = t.get("a_total", &[]).unwrap().counter().unwrap().ewma_rate().unwrap();
    /// assert!((ewma - 10.0 * (-1.0f64).exp()).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ewma_time_constant(&mut self, tau: TimeDelta) -> &mut Self {
        self.ewma_tau = tau;
        self
    }

    /// New counter series start their EWMA afresh after an interval longer than `gap`
    /// (see [`CounterSeries::ewma_restart_after`](crate::series::CounterSeries::ewma_restart_after)): after an outage the smoothed rate is
    /// the rate since recovery, not a blend with the rate before it.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// t.ewma_restart_after(TimeDelta::seconds(5));
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// for (s, v) in [(0, "0"), (1, "100"), (60, "160"), (61, "210")] {
    ///     t.ingest(&format!("a_total {v}\n"), at(s))?;
    /// }
    /// let ewma = t.get("a_total", &[]).unwrap().counter().unwrap().ewma_rate();
    /// assert_eq!(ewma, Some(50.0), "the rate since the gap, not a blend with 100/s");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ewma_restart_after(&mut self, gap: TimeDelta) -> &mut Self {
        self.ewma_gap = Some(gap);
        self
    }

    /// At most `count` series: a scrape that would take the tracker past it is refused
    /// whole ([`IngestError::SeriesLimit`](crate::IngestError::SeriesLimit)), with no series half-created and nothing
    /// recorded, so memory stays bounded whatever a server sends. No limit by default.
    ///
    /// The page is still read once: when it has fewer lines than the room left, nothing
    /// changes; otherwise its samples are held back (16 bytes each, a buffer kept between
    /// scrapes) and applied once the page is known to fit.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.max_series(2);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("a 1\nb 1\n", at(1))?;
    /// let refused = t.ingest("a 2\nb 2\nc 2\n", at(2));
    /// assert_eq!(refused, Err(promrate::IngestError::SeriesLimit { limit: 2, series: 3 }));
    /// assert_eq!((t.len(), t.scrapes()), (2, 1));
    /// assert_eq!(t.get("a", &[]).unwrap().last_value(), Some(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_series(&mut self, count: usize) -> &mut Self {
        self.max_series = count;
        self
    }

    /// Read families declared `untyped` (or `unknown`) by their names, as PromQL users do:
    /// `x_total` is a counter, and so are `x_bucket` (with an `le` label), `x_count` and
    /// `x_sum` of a family the tracker knows to be a histogram or summary (a `x_bucket`
    /// series with `le`, or a `x` series with `quantile`, on this page or an earlier one).
    /// Off by default: a declared type is taken at its word, and only series with no
    /// `# TYPE` line at all go by name (`_total`).
    ///
    /// Prometheus' and VictoriaMetrics' `/federate` (and VictoriaMetrics'
    /// `/api/v1/export/prometheus`) declare every family `untyped`, so reading through them
    /// needs this. Families are learned as the page is read; an untyped `_count` or `_sum`
    /// read before its family's `_bucket` (VictoriaMetrics' order) becomes a counter when
    /// the page ends.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.infer_counters(true);
    /// let page = "# TYPE lat_bucket untyped\nlat_bucket{le=\"+Inf\"} 4 1000\n\
    ///             # TYPE lat_count untyped\nlat_count 4 1000\n\
    ///             # TYPE tokens_total untyped\ntokens_total 10 1000\n";
    /// t.ingest(page, chrono::DateTime::from_timestamp(2, 0).unwrap())?;
    /// assert!(t.get("lat_count", &[]).unwrap().counter().is_some());
    /// assert!(t.get("tokens_total", &[]).unwrap().counter().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn infer_counters(&mut self, on: bool) -> &mut Self {
        if on != self.known_families.is_some() {
            self.known_families = on.then(KnownFamilies::default);
            self.positions.clear();
        }
        self
    }

    /// The gauge whose value is a target's process start time (Unix seconds): when it
    /// changes, every counter of that target without a created time of its own restarted
    /// ([`ResetCause::ProcessRestarted`](crate::series::ResetCause::ProcessRestarted)), and its
    /// increase counts from zero at the new start, even when its value has already
    /// climbed past the old one (a restart value-only detection misses). A start that goes
    /// backwards makes the target's counters erratic: no window rate or EWMA while it is
    /// in their window ([`NoValue::ErraticCounter`](crate::NoValue::ErraticCounter)).
    /// Default `process_start_time_seconds`, which every official client library
    /// exports; `None` reads no start time. The gauge is tracked
    /// whatever the selectors say. A start time of 0 is unknown, as in Prometheus.
    ///
    /// This is promrate's addition: Prometheus' `rate()` does not read it, and neither do
    /// [`Estimator::Rate`](crate::Estimator::Rate), `Increase` and `Irate` here.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let tokens = Selector::parse("tokens_total")?;
    /// let mut t = Tracker::new([tokens.clone()]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// let page = |start: u32, n: u32| format!("process_start_time_seconds {start}\ntokens_total {n}\n");
    /// t.ingest(&page(100, 5_000), at(200))?;
    /// // Down at 205 s, up again at 210 s, and past 5,000 by the next scrape at 230 s.
    /// t.ingest(&page(210, 6_000), at(230))?;
    /// let increase = Query::new(&tokens, Estimator::WindowIncrease).window(TimeDelta::seconds(30));
    /// assert_eq!(t.evaluate(&increase)?.value()?, 6_000.0); // not 1,000
    /// t.start_time_gauge(None); // value-only, as Prometheus
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_time_gauge(&mut self, name: Option<&str>) -> &mut Self {
        if self.starts.gauge.as_deref() != name {
            self.starts.gauge = name.map(Into::into);
            self.restart_start_registry();
        }
        self
    }

    /// How far the servers' clocks may be from the page times, for a start time to be read
    /// against the page times too. Without it (the default) no clock is compared with
    /// another: a start time is read against start times only, so that a server whose
    /// clock is off is read right, and a second process is told only by a start time that
    /// went backwards or moved forward by less than the old process was seen alive. With
    /// it, a new start time (a target's process start time, or a counter's `_created`)
    /// more than `skew` before the page that last showed the old process is a second
    /// process that was running while the old one answered (replicas behind one URL), not
    /// a restart: [`ResetCause::StartWentBack`](crate::series::ResetCause::StartWentBack),
    /// its count not counted as new and the counter not rated while it is in the window.
    /// Prometheus reads created times so, with no skew (`isStartTimestampReset`).
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{series::ResetCause, Tracker};
    /// let mut t = Tracker::new([]);
    /// t.start_time_skew(Some(TimeDelta::seconds(60)));
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// let page = |start: u32, n: u32| format!("process_start_time_seconds {start}\ntokens_total {n}\n");
    /// t.ingest(&page(1_000, 500), at(5_000))?;
    /// t.ingest(&page(1_000, 600), at(5_010))?;
    /// // Another process answers, up since 3,000 s: while the first answered.
    /// let report = t.ingest(&page(3_000, 90_000), at(5_020))?;
    /// assert_eq!(report.process_restarts[0].cause, ResetCause::StartWentBack);
    /// assert_eq!(t.get("tokens_total", &[]).unwrap().counter().unwrap().total_increase(), 100.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_time_skew(&mut self, skew: Option<TimeDelta>) -> &mut Self {
        self.start_time_skew_ms = skew.map(|s| s.num_milliseconds().max(0));
        self
    }

    /// Whether a sample is recorded at its own timestamp, when it has one (the default), or
    /// at the page's time: Prometheus' `honor_timestamps`. Off for a server whose own
    /// times cannot be trusted (a clock a day off, or OpenMetrics seconds served as the
    /// text format, read as milliseconds of 1970): its figures then come from the times
    /// the pages were read at. [`IngestReport::timestamp_skew`](crate::IngestReport) still
    /// says how far its own times were.
    ///
    /// # Example
    /// ```
    /// use chrono::DateTime;
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let at = |s: i64| DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap();
    /// let mut t = Tracker::new([]);
    /// t.honor_timestamps(false);
    /// // Seconds read as milliseconds: times of January 1970.
    /// let report = t.ingest("tokens_total 0 1700000000\n", at(0))?;
    /// assert!(report.timestamp_skew.unwrap() < chrono::TimeDelta::days(-365));
    /// t.ingest("tokens_total 500 1700000001\n", at(1))?;
    /// let rate = t.evaluate(&Query::new(&Selector::parse("tokens_total")?, Estimator::Ewma))?;
    /// assert_eq!(rate.value()?, 500.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn honor_timestamps(&mut self, honor: bool) -> &mut Self {
        self.honor_timestamps = honor;
        self
    }

    /// The labels that tell a page's targets apart, for [`Tracker::start_time_gauge`]: a
    /// series belongs to the start gauge with the same values of these labels. Default
    /// `job` and `instance` (as
    /// Prometheus labels a target and a federation keeps), so each instance of a
    /// `/federate` page restarts on its own.
    ///
    /// # Example
    /// ```
    /// use chrono::DateTime;
    /// let mut t = promrate::Tracker::new([]);
    /// t.target_labels(["pod"]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// let page = |a: u32, b: u32| format!(
    ///     "process_start_time_seconds{{pod=\"a\"}} {a}\nprocess_start_time_seconds{{pod=\"b\"}} 1\n\
    ///      t_total{{pod=\"a\"}} 50\nt_total{{pod=\"b\"}} {b}\n");
    /// t.ingest(&page(1, 40), at(10))?;
    /// let report = t.ingest(&page(5, 60), at(20))?; // pod a restarted, pod b did not
    /// assert_eq!(report.process_restarts[0].target, [("pod".to_string(), "a".to_string())]);
    /// assert_eq!(report.resets.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn target_labels<'a>(&mut self, labels: impl IntoIterator<Item = &'a str>) -> &mut Self {
        self.starts.target_labels = labels.into_iter().map(Into::into).collect();
        self.restart_start_registry();
        self
    }

    /// Reads the start gauges afresh from the tracked series (another gauge or other
    /// target labels); the cached positions go too, since what is selected changed.
    fn restart_start_registry(&mut self) {
        self.starts.clear();
        self.positions.clear();
        let gauges: Vec<usize> = (0..self.index.slot_count())
            .filter(|&slot| {
                self.index
                    .get(slot)
                    .is_some_and(|s| self.starts.is_gauge(s.name()))
            })
            .collect();
        for slot in gauges {
            if let Some(series) = self.index.get(slot) {
                self.starts.register(slot, series, self.scrapes);
            }
        }
        self.starts.keep_page();
    }
}
