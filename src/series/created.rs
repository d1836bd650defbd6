//! The created (start) times of a counter's points, kept as runs: a counter's created time
//! changes only when the process restarts, so storing it per point would double the
//! memory a push writes for nothing.

/// Runs of `(first point number, created time)`, each lasting until the next run; points
/// are numbered by push order. The runs before the oldest retained point are trimmed.
/// The newest point's created time is kept apart until the next point arrives: pages that
/// print `x_created` after `x_total` set it right after the push, and in steady state the
/// runs are then never touched.
#[derive(Debug, Clone, Default)]
pub(super) struct CreatedRuns {
    runs: Vec<(u64, Option<i64>)>,
    /// `(number, created)` of the newest point, not yet in `runs`.
    newest: Option<(u64, Option<i64>)>,
}

impl CreatedRuns {
    /// The created time of point `number` (`None` before any run).
    pub fn at(&self, number: u64) -> Option<i64> {
        match self.newest {
            Some((newest, created)) if newest == number => created,
            _ => self.committed_at(number),
        }
    }

    fn committed_at(&self, number: u64) -> Option<i64> {
        let after = self.runs.partition_point(|&(first, _)| first <= number);
        after.checked_sub(1).and_then(|i| self.runs[i].1)
    }

    /// Records that point `number` has `created`: a new newest point, or the newest again
    /// (its created time read after it).
    #[inline]
    pub fn set(&mut self, number: u64, created: Option<i64>) {
        match self.newest {
            Some((newest, _)) if newest == number => {}
            Some((newest, previous)) => self.commit(newest, previous),
            None => {}
        }
        self.newest = Some((number, created));
    }

    /// Appends the run of point `number` unless it continues the last one.
    fn commit(&mut self, number: u64, created: Option<i64>) {
        let current = self.runs.last().and_then(|&(_, created)| created);
        if current != created {
            self.runs.push((number, created));
        }
    }

    /// Forgets the runs that end before point `first` (the oldest retained).
    pub fn trim(&mut self, first: u64) {
        let obsolete = self
            .runs
            .partition_point(|&(start, _)| start <= first)
            .saturating_sub(1);
        if obsolete > 0 {
            self.runs.drain(..obsolete);
        }
    }

    /// Whether any of the points from `first` on has a known created time.
    pub fn any_from(&self, first: u64) -> bool {
        let after = self.runs.partition_point(|&(start, _)| start <= first);
        self.runs[after.saturating_sub(1)..]
            .iter()
            .any(|&(_, created)| created.is_some())
            || self.newest.is_some_and(|(_, created)| created.is_some())
    }

    /// How many runs are kept (for trimming decisions).
    pub fn len(&self) -> usize {
        self.runs.len()
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
