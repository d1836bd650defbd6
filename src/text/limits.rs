//! The limits a caller opts into (see `Parser`), shared by the page iterator and both
//! sample paths.

/// Limits a caller opts into, named after Prometheus' scrape-config limits (`usize::MAX`:
/// none, the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Limits {
    pub line_length: usize,
    pub labels: usize,
    pub label_name_length: usize,
    pub label_value_length: usize,
    pub samples: usize,
    pub body_size: usize,
}

impl Limits {
    /// No limit at all.
    pub const NONE: Limits = Limits {
        line_length: usize::MAX,
        labels: usize::MAX,
        label_name_length: usize::MAX,
        label_value_length: usize::MAX,
        samples: usize::MAX,
        body_size: usize::MAX,
    };
}
