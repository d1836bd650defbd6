//! What the figures on screen cover, in words: the window's span and why it is short, an
//! interval that waits for a slow scrape, and the timing the run was set up with.

use crate::snapshot::Run;
use crate::snapshot::Snapshot;

/// The scrape interval and the EWMA's time constant, as the run was set up.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Timing {
    pub interval_s: Option<f64>,
    /// As the setup line writes it ("10s", "1m 30s").
    pub ewma: Option<String>,
}

impl Timing {
    pub fn of(run: &Run<'_>) -> Timing {
        let tau = run.ewma_tau.to_std().unwrap_or_default();
        Timing {
            interval_s: Some(run.interval.as_seconds_f64()),
            ewma: Some(crate::text::setting(tau)),
        }
    }
}

/// What the newest interval's figures rest on, said by the headline and the Requests panel.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Coverage {
    /// "over 10s", "over 4.0s since scrapes resumed", "one page so far"; `None` before any
    /// window (no page yet, or none during an outage).
    pub span: Option<String>,
    /// The window is shorter than the one asked: shown in a warning colour.
    pub shortened: bool,
    /// No new page this interval while a server answers: the figures repeat the previous
    /// interval's until the slow scrape's page comes (not a stall).
    pub waiting: Option<String>,
    /// What the load label says instead when there is nothing to judge, as plain mode's
    /// load column does.
    pub load: Option<&'static str>,
}

impl Coverage {
    pub fn of(run: &Run<'_>) -> Coverage {
        run.snapshot.map_or_else(Coverage::default, Coverage::of_snapshot)
    }

    fn of_snapshot(s: &Snapshot) -> Coverage {
        let f = &s.figures;
        let span = match (f.window.shortened, f.window.span) {
            (Some(reason), Some(span)) => Some(format!("over {:.1}s {reason}", span.seconds)),
            // A page but no window yet ("one page since scrapes resumed").
            (Some(reason), None) => Some(reason.to_string()),
            (None, Some(_)) => Some(format!("over {}", asked(s))),
            (None, None) => None,
        };
        let answering = s.servers.iter().any(|t| t.status.is_ok());
        // The newest page's age says how long the scrape under way has taken so far (the
        // last finished one may have been quick).
        let waiting = (answering && s.window.fresh_pages == 0).then(|| {
            let slowest = s.servers.iter().filter_map(|t| t.scrape_s).reduce(f64::max);
            match (s.window.newest_age_s, slowest) {
                (Some(age), _) => format!("waiting for a page: the newest is {age:.1} s old"),
                (None, Some(seconds)) => format!("waiting for a page: the last scrape took {seconds:.1} s"),
                (None, None) => "waiting for a page".to_string(),
            }
        });
        let load = if !answering {
            Some("no data")
        } else if waiting.is_some() {
            // Never "stalled" on an old page: the stall is judged on pages that arrived.
            Some("no new page")
        } else {
            None
        };
        Coverage {
            span,
            shortened: f.window.shortened.is_some(),
            waiting,
            load,
        }
    }
}

/// The window asked, as the setup line writes it ("10s", "2m").
fn asked(s: &Snapshot) -> String {
    let asked = s.window.asked.to_std().unwrap_or_default();
    crate::text::setting(asked)
}
