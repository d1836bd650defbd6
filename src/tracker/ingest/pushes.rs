//! Points pushed in batches. A series' newest point lives at the end of its own column, so
//! at fleet scale each push begins with a cache miss, and the processor waits for each in
//! turn (perf, a million series: half of a steady ingest was that one load). Reading what a
//! batch's pushes read first (the ends of each column, the counter's state), in a loop that
//! nothing waits on, lets those misses overlap; each push then finds its lines in cache.

use super::super::{IngestReport, Tracker};

/// Samples gathered before they are pushed: enough to keep the processor's loads in
/// flight, few enough to stay in cache.
pub(in crate::tracker) const BATCH: usize = 64;

/// A sample for a series, gathered until its batch is pushed.
#[derive(Debug, Clone, Copy)]
pub(in crate::tracker) struct Pending {
    pub slot: usize,
    pub at_ms: i64,
    pub value: f64,
    /// Where its text starts in the page (a refusal names its line).
    pub offset: usize,
}

impl Tracker {
    /// Gathers a sample for the series in `slot`; a full batch is pushed.
    #[inline]
    pub(super) fn push_later(&mut self, pending: Pending, report: &mut IngestReport) {
        self.pending.push(pending);
        if self.pending.len() == BATCH {
            self.push_pending(report);
        }
    }

    /// Pushes what was gathered, in the page's order (anything that is not a plain push
    /// calls this first, so the page is applied as it reads).
    pub(super) fn push_pending(&mut self, report: &mut IngestReport) {
        if self.pending.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut self.pending);
        self.load_push_lines(pending.iter().map(|p| p.slot));
        for p in pending.drain(..) {
            self.push(p.slot, p.at_ms, p.value, p.offset, report);
        }
        self.pending = pending;
    }

    /// Loads what a push to each series in `slots` reads (both ends of its column, which
    /// the slide of a full column reads too, and its counter's state), so that their cache
    /// misses are in flight together (the sum is only there so that the loads are made).
    pub(super) fn load_push_lines(&self, slots: impl Iterator<Item = usize>) {
        let mut lines = 0;
        for slot in slots {
            if let Some(series) = self.index.get(slot) {
                lines ^= series.push_lines();
            }
        }
        std::hint::black_box(lines);
    }
}
