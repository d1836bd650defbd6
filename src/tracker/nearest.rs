//! The names nearest to one asked: what a selector that matched nothing on a page, or a
//! query that found no series, reports, so that `vllm_x` written where `vllm:x` was asked,
//! or a misspelling, is seen at once; and which selectors matched nothing.

use std::collections::{HashMap, HashSet};

use super::aggregate::Pick;
use super::{Tracker, Unmatched};
use crate::select::Selector;
use crate::text::names::names_equal;

/// At most this many names per name asked.
const NEAREST: usize = 3;
/// How alike two names must be (Jaro-Winkler, ':' and '_' alike) to be offered.
const ALIKE: f64 = 0.8;

/// Up to [`NEAREST`] of `names` most like `asked`, most alike first; whether one differs
/// from it only in ':' and '_'.
fn nearest<'n>(asked: &str, names: impl IntoIterator<Item = &'n str>) -> (Vec<&'n str>, bool) {
    let plain = |name: &str| name.replace(':', "_");
    let asked_plain = plain(asked);
    let mut scored: Vec<(f64, &str)> = names
        .into_iter()
        .filter(|name| *name != asked)
        .map(|name| (strsim::jaro_winkler(&asked_plain, &plain(name)), name))
        .filter(|(score, _)| *score >= ALIKE)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let separators = scored.iter().any(|(_, name)| names_equal(name, &[asked], true));
    (
        scored.into_iter().take(NEAREST).map(|(_, name)| name).collect(),
        separators,
    )
}

/// The tracked metric names nearest to the one `selector` names (none for a selector
/// without a fixed name).
pub(super) fn nearest_tracked(tracker: &Tracker, selector: &Selector) -> Vec<String> {
    let Some(asked) = selector.metric_name() else {
        return Vec::new();
    };
    let names = tracker
        .index
        .names()
        .iter()
        .filter(|entry| !entry.slots.is_empty())
        .map(|entry| &**entry.name);
    nearest(asked, names).0.into_iter().map(str::to_string).collect()
}

/// What a page reports when some of the tracker's selectors (`which`, by index) matched
/// none of its samples: the page's metric names nearest to theirs. The page is read again,
/// names only, when the set of such selectors changes (the tracker keeps the last answer).
pub(super) fn unmatched(tracker: &Tracker, page: Option<&str>, which: &[usize]) -> Unmatched {
    let on_page: HashSet<&str> = match page {
        Some(page) => tracker
            .parser
            .parse(page)
            .filter_map(|entry| Some(entry.ok()?.into_sample()?.name()))
            .collect(),
        // Read in chunks: the names were gathered as it was read.
        None => tracker.page_names.on_page(tracker.scrapes).collect(),
    };
    let mut on_page: Vec<&str> = on_page.into_iter().collect();
    on_page.sort_unstable();
    let mut found = Vec::new();
    let mut differs_in_separators = false;
    let selectors = which.iter().filter_map(|&i| tracker.selectors.get(i));
    for asked in selectors.clone().filter_map(Selector::metric_name) {
        let (names, separators) = nearest(asked, on_page.iter().copied());
        differs_in_separators |= separators;
        for name in names {
            if !found.iter().any(|f: &String| f == name) {
                found.push(name.to_string());
            }
        }
    }
    Unmatched {
        selectors: selectors.map(ToString::to_string).collect(),
        nearest: found,
        differs_in_separators,
    }
}

/// The metric names of the pages read in chunks (`chunks.rs`), each with the last scrape
/// that had it: the unmatched report's names, gathered as the page passes (a name is
/// looked up when it differs from the line before's, and allocated once).
#[derive(Debug, Clone, Default)]
pub(super) struct PageNames {
    names: HashMap<Box<str>, u64>,
}

impl PageNames {
    /// `name` is on the page of scrape `scrape`.
    #[inline]
    pub fn saw(&mut self, name: &str, scrape: u64) {
        match self.names.get_mut(name) {
            Some(last) => *last = scrape,
            None => {
                self.names.insert(name.into(), scrape);
            }
        }
    }

    /// The names on the page of scrape `scrape`.
    pub fn on_page(&self, scrape: u64) -> impl Iterator<Item = &str> + '_ {
        self.names
            .iter()
            .filter(move |(_, &last)| last == scrape)
            .map(|(name, _)| &**name)
    }

    /// Forgets the names of scrape `scrape`'s page, which was refused (the next page has
    /// its number): a name it had is gathered again from any later page that has it.
    pub fn forget_scrape(&mut self, scrape: u64) {
        if self.names.values().any(|&last| last == scrape) {
            self.names.retain(|_, last| *last != scrape);
        }
    }

    /// Forgets the names no page had since scrape `horizon`.
    pub fn forget_before(&mut self, horizon: u64) {
        if self.names.values().any(|&last| last < horizon) {
            self.names.retain(|_, last| *last >= horizon);
        }
    }
}

impl Tracker {
    /// The selectors that matched none of the page's samples, with the page's names nearest
    /// to theirs (kept while the same selectors stay unmatched: an absent metric costs one
    /// more read of the page, not one per scrape).
    /// `page` is the page, or `None` when it was read in chunks (its names were gathered).
    pub(super) fn unmatched(&mut self, page: Option<&str>) -> Option<Unmatched> {
        // Empty (and not allocated) on a page every selector matched.
        let which: Vec<usize> = (0..self.selectors.len())
            .filter(|&i| !self.selector_matched(i))
            .collect();
        if which.is_empty() {
            self.unmatched_before = None;
            return None;
        }
        match &self.unmatched_before {
            Some((before, unmatched)) if *before == which => Some(unmatched.clone()),
            _ => {
                let unmatched = unmatched(self, page, &which);
                self.unmatched_before = Some((which, unmatched.clone()));
                Some(unmatched)
            }
        }
    }

    /// Whether selector `i` picked a series on this page: first its witness, a series it
    /// picked on an earlier page (no search, nothing allocated, on a steady page), else a
    /// search of the series of the names it picks, which finds the next witness.
    fn selector_matched(&mut self, i: usize) -> bool {
        let scrape = self.scrapes;
        let selector = &self.selectors[i];
        let witnessed = self.witnesses.get(i).copied().flatten().is_some_and(|slot| {
            self.picks_slot(selector, slot)
                .is_some_and(|s| s.last_seen == scrape)
        });
        if witnessed {
            return true;
        }
        let found = self
            .picked_slots(selector, Pick::Family)
            .find(|(_, s)| s.last_seen == scrape)
            .map(|(slot, _)| slot);
        if self.witnesses.len() < self.selectors.len() {
            self.witnesses.resize(self.selectors.len(), None);
        }
        self.witnesses[i] = found;
        found.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_put_a_separator_change_first() {
        let names = [
            "vllm_generation_tokens_total",
            "vllm_prompt_tokens_total",
            "up",
            "vllm:generation_tokens",
        ];
        let (found, separators) = nearest("vllm:generation_tokens_total", names);
        assert_eq!(found[0], "vllm_generation_tokens_total");
        assert!(separators);
        assert!(!found.contains(&"up"));
        let (found, separators) = nearest("vllm:generaton_tokens_total", names);
        assert_eq!(found[0], "vllm_generation_tokens_total");
        assert!(!separators);
    }
}
