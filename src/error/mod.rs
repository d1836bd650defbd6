//! Error types, one per layer (the most used are also at the crate root), each with a position or a meaning a user can act on: what
//! a parser refuses (`parse.rs`), a selector (`selector.rs`), a series or a whole scrape
//! (`series.rs`), and what a query cannot answer and why (`query.rs`). Times in messages
//! are RFC 3339, durations in seconds.

mod parse;
mod query;
mod selector;
mod series;

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};

pub use parse::{CompositeRule, FamilyRule, ParseError, ParseErrorKind};
pub use query::{NoValue, QueryError};
pub use selector::{SelectorError, SelectorErrorKind};
pub use series::{IngestError, ReadError, Refusal, SeriesError};

/// A time as messages print it: RFC 3339 in UTC, to the millisecond when it has some.
pub(crate) fn rfc3339(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// A duration as messages print it: seconds, without a fraction when there is none
/// (`20 s`, `0.5 s`).
pub(crate) fn seconds(d: &TimeDelta) -> String {
    let ms = d.num_milliseconds();
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_durations_print_as_people_read_them() {
        let at = DateTime::from_timestamp_millis(1_764_000_000_250).unwrap();
        assert_eq!(rfc3339(&at), "2025-11-24T16:00:00.250Z");
        assert_eq!(
            rfc3339(&DateTime::from_timestamp(1_764_000_000, 0).unwrap()),
            "2025-11-24T16:00:00Z"
        );
        assert_eq!(seconds(&TimeDelta::seconds(20)), "20 s");
        assert_eq!(seconds(&TimeDelta::milliseconds(1500)), "1.5 s");
    }
}
