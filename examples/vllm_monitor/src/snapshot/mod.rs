//! The figures of one interval, computed once and handed to every renderer, with the
//! groups a screen shows (`top.rs`); the history the dashboard and the plot draw
//! (`history.rs`); and the run so far as the outputs read it (`run.rs`).

pub mod history;
mod run;

use chrono::{DateTime, TimeDelta, Utc};

use promrate::WindowRule;

use crate::figures::slo::Objective;
use crate::figures::{self, Figures, Source, Verdict};
use crate::gpus::GpuSettings;
use crate::target::{ServerRow, Target};
use crate::top::{self, OnScreen, Others};

pub use history::History;
pub use run::Run;

/// Progress of a run of known size, with two ETAs.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub target: u64,
    pub finished: f64,
    /// Remaining requests ÷ finished-request rate.
    pub eta_requests_s: Option<f64>,
    /// Remaining requests × mean generated tokens per request (over the window, else since
    /// monitoring began) ÷ generation tokens/s: the ETA that holds while a run ramps up
    /// and few requests have finished yet.
    pub eta_tokens_s: Option<f64>,
}

impl Progress {
    pub fn new(target: u64, f: &Figures) -> Self {
        let finished = f.since_start.finished.unwrap_or(0.0);
        let remaining = (target as f64 - finished).max(0.0);
        let eta_requests_s = f
            .requests
            .finished
            .filter(|r| *r > 0.0)
            .map(|rate| remaining / rate);
        let per_request = f.requests.tokens_per_request.or(f.since_start.tokens_per_request);
        let eta_tokens_s = match (per_request, f.generation.window) {
            (Some(per_request), Some(rate)) if rate > 0.0 => Some(remaining * per_request / rate),
            _ => None,
        };
        Progress {
            target,
            finished,
            eta_requests_s,
            eta_tokens_s,
        }
    }

    pub fn fraction(&self) -> f64 {
        if self.target == 0 {
            1.0
        } else {
            (self.finished / self.target as f64).clamp(0.0, 1.0)
        }
    }
}

/// What an interval's window asked for and what its figures rest on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowState {
    /// The window asked (`--window`, a whole number of intervals).
    pub asked: TimeDelta,
    /// When the interval was computed, and how old the newest page was then.
    pub computed_at: DateTime<Utc>,
    pub newest_age_s: Option<f64>,
    /// Pages read since the previous interval: none means the figures are the previous
    /// interval's, waiting for a slow scrape, and nothing is judged on them.
    pub fresh_pages: usize,
}

/// Everything one interval shows.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Seconds since monitoring began.
    pub elapsed: f64,
    /// The time of the newest page among the figures' sources.
    pub at: DateTime<Utc>,
    pub window: WindowState,
    pub figures: Figures,
    /// The signals' verdict on the figures (stall, imbalance): set once, by
    /// [`Snapshot::judged`], after the figures are computed.
    pub verdict: Verdict,
    /// Each URL as it stood at this interval.
    pub servers: Vec<ServerRow>,
    /// With `--by`: the label and a row per value, in name order (every group: JSON's).
    pub groups: Option<(String, Vec<(String, Figures)>)>,
    /// The groups a screen shows (`--max-groups`); `None`: every group.
    pub on_screen: Option<OnScreen>,
    pub progress: Option<Progress>,
}

/// What an interval's computation is given besides the targets.
#[derive(Debug, Clone, Copy)]
pub struct Moment<'a> {
    pub windowing: WindowRule,
    /// When the interval is computed, and the seconds into the run it is called.
    pub at: DateTime<Utc>,
    pub elapsed: f64,
    /// URLs whose newest page is older than this are left out.
    pub fresh: DateTime<Utc>,
    pub fresh_pages: usize,
    pub by: Option<&'a str>,
    /// Groups a screen shows (`--max-groups`), the rest summed.
    pub max_groups: usize,
    pub target_requests: Option<u64>,
    /// The `--slo` objectives.
    pub slo: &'a [Objective],
    /// What the user said of the GPUs, for the per-token figures.
    pub gpu: &'a GpuSettings,
}

impl Snapshot {
    /// Figures over the URLs whose newest page is fresh (not older than `m.fresh`), of
    /// the `targets` at hand (a URL whose page is being read is not), with every URL's
    /// row in `servers`.
    pub fn compute(targets: &[&Target], servers: &[ServerRow], m: &Moment<'_>) -> Snapshot {
        let (fresh, by) = (m.fresh, m.by);
        // Every URL read so far, as of its newest page; those whose page is fresh make the
        // interval's figures. One left out (its newest page failed, or is late) generated
        // what it did before: the run's totals (the summary's tokens, the progress) count
        // it, from its newest page.
        let (mut sources, mut left_out) = (Vec::new(), Vec::new());
        for t in targets {
            let Some(at) = t.last_ok else {
                continue;
            };
            let source = Source {
                tracker: &t.tracker,
                at,
                url: &t.url,
                retired: Some(&t.retired),
            };
            if t.is_fresh(fresh) {
                sources.push(source);
            } else {
                left_out.push(source);
            }
        }
        let (mut f, groups) = figures::compute_for(&sources, m.windowing, by, m.slo, m.gpu);
        if !left_out.is_empty() {
            let (earlier, _) = figures::compute_for(&left_out, m.windowing, None, &[], m.gpu);
            let add = crate::top::add;
            f.since_start.generated = add(f.since_start.generated, earlier.since_start.generated);
            f.since_start.finished = add(f.since_start.finished, earlier.since_start.finished);
        }
        let w = m.windowing;
        let newest = sources.iter().map(|s| s.at).max();
        let on_screen = by.map(|_| top::on_screen(&groups, m.max_groups));
        let groups = by.map(|label| (label.to_string(), groups));
        Snapshot {
            on_screen,
            elapsed: m.elapsed,
            at: newest.unwrap_or(m.at),
            window: WindowState {
                asked: w.window,
                computed_at: m.at,
                newest_age_s: newest.map(|n| (m.at - n).as_seconds_f64()),
                fresh_pages: m.fresh_pages,
            },
            progress: m.target_requests.map(|n| Progress::new(n, &f)),
            figures: f,
            verdict: Verdict::default(),
            servers: servers.to_vec(),
            groups,
        }
    }
}

/// The group rows a screen shows: the `--by` label, the rows (name order) and the others'
/// row, summed.
pub struct ScreenGroups<'s> {
    pub label: &'s str,
    pub rows: Vec<&'s (String, Figures)>,
    pub others: Option<&'s Others>,
}

impl Snapshot {
    /// The groups a screen shows ([`top::on_screen`]); every group when no cut was made.
    pub fn screen_groups(&self) -> Option<ScreenGroups<'_>> {
        let (label, groups) = self.groups.as_ref()?;
        let (rows, others) = match &self.on_screen {
            Some(shown) => (
                shown.rows.iter().filter_map(|&i| groups.get(i)).collect(),
                shown.others.as_ref(),
            ),
            None => (groups.iter().collect(), None),
        };
        Some(ScreenGroups { label, rows, others })
    }
}

impl Snapshot {
    /// The figures of `targets` at `at` over `window` (scrapes a second apart, every URL
    /// fresh): what the unit tests ask.
    #[cfg(test)]
    pub fn at(
        targets: &[Target],
        window: TimeDelta,
        at: DateTime<Utc>,
        by: Option<&str>,
        target_requests: Option<u64>,
        elapsed: f64,
    ) -> Snapshot {
        Snapshot::at_with(
            targets,
            window,
            at,
            by,
            target_requests,
            elapsed,
            &GpuSettings::default(),
        )
    }

    /// [`Snapshot::at`] with GPU settings.
    #[cfg(test)]
    pub fn at_with(
        targets: &[Target],
        window: TimeDelta,
        at: DateTime<Utc>,
        by: Option<&str>,
        target_requests: Option<u64>,
        elapsed: f64,
        gpu: &GpuSettings,
    ) -> Snapshot {
        let moment = Moment {
            windowing: WindowRule::new(window)
                .slack(TimeDelta::seconds(1))
                .gap(TimeDelta::seconds(3)),
            at,
            elapsed,
            fresh: at - TimeDelta::seconds(3),
            fresh_pages: 1,
            by,
            max_groups: top::DEFAULT_MAX_GROUPS,
            target_requests,
            slo: &[],
            gpu,
        };
        let servers: Vec<ServerRow> = targets.iter().map(ServerRow::of).collect();
        Snapshot::compute(&targets.iter().collect::<Vec<_>>(), &servers, &moment)
    }

    /// The snapshot with the signals' verdict on its figures (`signals.rs`).
    pub fn judged(self, verdict: Verdict) -> Snapshot {
        Snapshot { verdict, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Page;

    /// A URL whose newest scrape failed is left out of the interval's rates, but not out
    /// of the run's totals: the tokens it generated before still count (the summary said
    /// half the tokens of two servers, one of which failed at the end).
    #[test]
    fn a_url_that_stopped_answering_still_counts_in_the_totals() {
        let at = |s: i64| DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap();
        let page = |tokens: i64, finished: i64| {
            Page {
            body: format!(
                "vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {tokens}\n\
                 vllm:request_success_total{{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"}} {finished}\n"
            ),
            format: promrate::Format::PrometheusText,
            content_type: None,
        }
        };
        let mut steady = Target::new("http://a/metrics".into(), TimeDelta::minutes(5));
        let mut failing = Target::new("http://b/metrics".into(), TimeDelta::minutes(5));
        for s in 0..=10 {
            steady.ingest(at(s), Ok(page(1000 * s, 2 * s)));
            let answer = if s <= 5 {
                Ok(page(1000 * s, 2 * s))
            } else {
                Err("HTTP 500".into())
            };
            failing.ingest(at(s), answer);
        }
        let snapshot = Snapshot::at(
            &[steady, failing],
            TimeDelta::seconds(3),
            at(10),
            None,
            Some(100),
            10.0,
        );
        assert_eq!(
            snapshot.figures.generation.window,
            Some(1000.0),
            "the rate is the fresh URL's"
        );
        assert_eq!(snapshot.figures.since_start.generated, Some(15_000.0));
        assert_eq!(snapshot.figures.since_start.finished, Some(30.0));
        assert_eq!(
            snapshot.progress.map(|p| p.finished),
            Some(30.0),
            "progress counts them too"
        );
    }
}
