//! `--from` and `--to`: a moment as RFC 3339, or relative to now.

use chrono::{DateTime, TimeDelta, Utc};

/// A time as `--from` and `--to` take it: a moment, or how long before now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    At(DateTime<Utc>),
    Ago(TimeDelta),
}

impl When {
    /// The moment meant, `now` being now.
    pub fn resolve(self, now: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            When::At(at) => at,
            When::Ago(ago) => now - ago,
        }
    }
}

/// `2026-12-01T22:00:00Z` (any RFC 3339 offset), `now`, `-2h`, `now-30m`.
pub fn parse_time(text: &str) -> Result<When, String> {
    let typed = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(typed) {
        return Ok(When::At(at.with_timezone(&Utc)));
    }
    let relative = typed.strip_prefix("now").unwrap_or(typed);
    if relative.is_empty() {
        return Ok(When::Ago(TimeDelta::zero()));
    }
    let not_a_time = || {
        format!(
            "{text:?} is not a time: give RFC 3339 (2026-12-01T22:00:00Z) or a time before now (-2h, -30m, now)"
        )
    };
    let ago = relative.strip_prefix('-').ok_or_else(not_a_time)?;
    let ago = humantime::parse_duration(ago.trim()).map_err(|_| not_a_time())?;
    TimeDelta::from_std(ago).map(When::Ago).map_err(|_| not_a_time())
}
