//! The created (start) times of a counter's points, kept as runs: a counter's created time
//! changes only when the process restarts, so storing it per point would double the
//! memory a push writes for nothing.

use smallvec::SmallVec;

/// One run: a point number and the created time from that point on. The created time's
/// presence is the number's top bit (point numbers stay far below 2^63), so a run is 16
/// bytes where `(u64, Option<i64>)` takes 24.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Run {
    tagged: u64,
    created_ms: i64,
}

impl Run {
    const KNOWN: u64 = 1 << 63;
    /// No point: the newest run before any point (a number no point reaches).
    const NONE: Run = Run {
        tagged: !Self::KNOWN,
        created_ms: 0,
    };

    fn new(number: u64, created: Option<i64>) -> Self {
        match created {
            Some(created_ms) => Run {
                tagged: number | Self::KNOWN,
                created_ms,
            },
            None => Run {
                tagged: number & !Self::KNOWN,
                created_ms: 0,
            },
        }
    }

    fn number(self) -> u64 {
        self.tagged & !Self::KNOWN
    }

    fn created(self) -> Option<i64> {
        (self.tagged & Self::KNOWN != 0).then_some(self.created_ms)
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {:?})", self.number(), self.created())
    }
}

/// Runs of `(first point number, created time)`, each lasting until the next run; points
/// are numbered by push order. The runs before the oldest retained point are trimmed.
/// The newest point's created time is kept apart until the next point arrives: pages that
/// print `x_created` after `x_total` set it right after the push, and in steady state the
/// runs are then never touched.
///
/// 40 bytes, and no allocation while the created time has not changed (one run, held
/// inline): every bucket of a vLLM histogram has one, so at fleet scale this is millions
/// of series (a `Vec` of runs cost 190 bytes a series with its allocations).
#[derive(Debug, Clone)]
pub(super) struct CreatedRuns {
    runs: SmallVec<[Run; 1]>,
    /// The newest point's run, not yet in `runs` ([`Run::NONE`] before any point).
    newest: Run,
}

impl Default for CreatedRuns {
    fn default() -> Self {
        CreatedRuns {
            runs: SmallVec::new(),
            newest: Run::NONE,
        }
    }
}

impl CreatedRuns {
    /// The created time of point `number` (`None` before any run).
    pub fn at(&self, number: u64) -> Option<i64> {
        if self.newest.number() == number {
            self.newest.created()
        } else {
            self.committed_at(number)
        }
    }

    fn committed_at(&self, number: u64) -> Option<i64> {
        let after = self.runs.partition_point(|r| r.number() <= number);
        after.checked_sub(1).and_then(|i| self.runs[i].created())
    }

    /// Records that point `number` has `created`: a new newest point, or the newest again
    /// (its created time read after it).
    #[inline]
    pub fn set(&mut self, number: u64, created: Option<i64>) {
        if self.newest.number() != number && self.newest != Run::NONE {
            self.commit(self.newest);
        }
        self.newest = Run::new(number, created);
    }

    /// Appends `run` unless it continues the last one.
    fn commit(&mut self, run: Run) {
        let current = self.runs.last().and_then(|r| r.created());
        if current != run.created() {
            self.runs.push(run);
        }
    }

    /// Forgets the runs that end before point `first` (the oldest retained).
    pub fn trim(&mut self, first: u64) {
        let obsolete = self
            .runs
            .partition_point(|r| r.number() <= first)
            .saturating_sub(1);
        if obsolete > 0 {
            self.runs.drain(..obsolete);
        }
    }

    /// Whether any of the points from `first` on has a known created time.
    pub fn any_from(&self, first: u64) -> bool {
        let after = self.runs.partition_point(|r| r.number() <= first);
        self.runs[after.saturating_sub(1)..]
            .iter()
            .any(|r| r.created().is_some())
            || self.newest.created().is_some()
    }

    /// Whether a point before `before` had the created time `created` (a kept run's).
    pub fn seen_before(&self, created: i64, before: u64) -> bool {
        let newest = self.newest.number() < before && self.newest.created() == Some(created);
        newest
            || self
                .runs
                .iter()
                .take_while(|r| r.number() < before)
                .any(|r| r.created() == Some(created))
    }

    /// How many runs are kept (for trimming decisions).
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Whether the runs moved to the heap (a created time changed).
    #[cfg(test)]
    pub fn runs_spilled(&self) -> bool {
        self.runs.spilled()
    }
}

/// The created times of a counter whose points have all had one created time, the
/// newest's perhaps not read yet: what [`CreatedRuns`] holds as one run, in 16 bytes and
/// no allocation. Points are numbered as in [`CreatedRuns`]; `newest` is the newest
/// point's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Steady {
    created_ms: i64,
    /// Whether the newest point has the created time (a page that prints `_created` after
    /// the counter sets it after the push; until then it is unknown).
    newest_known: bool,
}

impl Steady {
    /// A counter whose points so far (up to `newest`) have no created time, setting point
    /// `number`'s to `created`: steady when that point is the first.
    pub fn begin(number: u64, newest: Option<u64>, created: Option<i64>) -> Option<Steady> {
        let first = number == 0 && newest.is_none_or(|n| n == 0);
        let created_ms = created.filter(|_| first)?;
        Some(Steady {
            created_ms,
            newest_known: true,
        })
    }

    /// Whether a point with `created` (or none) keeps the one created time of every
    /// point so far: no restart in it.
    pub fn keeps(self, created: Option<i64>) -> bool {
        created.is_none_or(|c| c == self.created_ms)
    }

    /// The created time of point `number`.
    pub fn at(self, number: u64, newest: u64) -> Option<i64> {
        (number < newest || (number == newest && self.newest_known)).then_some(self.created_ms)
    }

    /// Point `number` (the newest again, or a new newest) gets `created`: the new state,
    /// or `None` when it is no longer one run (runs are needed).
    pub fn set(self, number: u64, newest: u64, created: Option<i64>) -> Option<Steady> {
        let amends = number == newest;
        let follows = number == newest + 1 && self.newest_known;
        if !(amends || follows) || created.is_some_and(|c| c != self.created_ms) {
            return None;
        }
        Some(Steady {
            newest_known: created.is_some(),
            ..self
        })
    }

    /// Whether any point from `first` on has a created time.
    pub fn any_from(self, first: u64, newest: u64) -> bool {
        first < newest || (first == newest && self.newest_known)
    }

    /// The same created times as runs.
    pub fn runs(self, newest: u64) -> CreatedRuns {
        let mut runs = CreatedRuns::default();
        if newest > 0 {
            runs.set(0, Some(self.created_ms));
        }
        runs.set(newest, self.at(newest, newest));
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_answer_like_a_column() {
        let mut runs = CreatedRuns::default();
        let mut column: Vec<Option<i64>> = Vec::new();
        // (value pushed, then maybe amended), as pages print _created before or after.
        let script = [
            (None, None),
            (None, Some(5)),
            (None, Some(5)),
            (Some(5), None),
            (Some(9), None),
            (None, Some(9)),
            (None, None),
            (Some(9), Some(12)),
        ];
        for (number, (pushed, amended)) in script.into_iter().enumerate() {
            runs.set(number as u64, pushed);
            column.push(pushed);
            if let Some(amended) = amended {
                runs.set(number as u64, Some(amended));
                column[number] = Some(amended);
            }
            for (i, want) in column.iter().enumerate() {
                assert_eq!(runs.at(i as u64), *want, "point {i} after {number}");
            }
        }
        assert!(runs.len() <= 5, "{runs:?}");
        runs.trim(5);
        assert_eq!((5..8).map(|i| runs.at(i)).collect::<Vec<_>>(), column[5..]);
        assert!(runs.any_from(6));
        assert_eq!(runs.at(7), Some(12));
    }
}
