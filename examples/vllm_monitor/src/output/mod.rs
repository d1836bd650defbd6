//! The three ways a run is shown, behind one [`Output`]: a terminal dashboard, plain lines
//! and JSON; and the plot written at the end. The words and numbers they share are
//! `text/`'s.

pub mod csv;
pub mod dashboard;
pub mod json;
pub mod labels;
pub mod operator;
pub mod plain;
#[cfg(test)]
mod plain_tests;
pub mod plot;

use crate::events::Event;
pub use crate::snapshot::Run;
use crate::snapshot::Snapshot;
use crate::summary::Summary;

/// Where a run goes: the monitor's loop calls these and never asks which output it has.
pub trait Output {
    /// Before the first scrape: what is monitored and how, and the run's warnings.
    fn start(&mut self, run: &Run<'_>, notes: &[String]);
    /// An event, as it is announced.
    fn event(&mut self, run: &Run<'_>, elapsed: f64, event: &Event);
    /// One interval's figures.
    fn interval(&mut self, run: &Run<'_>, snapshot: &Snapshot);
    /// A remark in passing (pages skipped, the plot written).
    fn note(&mut self, text: &str);
    /// Once per turn of the loop, after the calls above: the dashboard redraws what changed.
    fn refresh(&mut self, _run: &Run<'_>) -> Result<(), String> {
        Ok(())
    }
    /// The terminal changed size.
    fn resized(&mut self) {}
    /// The end of the run: the terminal given back, then the summary.
    fn summary(&mut self, run: &Run<'_>, summary: &Summary);
    /// Whether the reader went away (stdout closed, e.g. piped into `head`).
    fn closed(&self) -> bool;
}
