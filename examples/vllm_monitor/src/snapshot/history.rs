//! The run's course for the sparklines, the plot and the summary's picture of it: a value
//! per interval, bounded by thinning, never by forgetting.
//!
//! For the next maintainer: each series keeps at most [`CAPACITY`] points. The newest
//! [`RECENT`] are every interval's (the sparklines draw those); older ones are thinned to
//! one point per `stride` intervals (their mean, at their mean time), the stride doubling
//! when the thinned part fills its room, so a 24-hour run is drawn evenly from its start
//! (a point per minute or so). The run's totals are not here (the summary reads the
//! trackers' since-start counts), so nothing exact is lost. A group's course is kept for
//! the groups a screen shows, at most [`MAX_GROUPS`] over the run. Each push is linear in
//! the groups shown (a hash lookup each); a thinning passes over the points once, at most
//! once per few hundred pushes.

use std::collections::HashMap;

use super::Snapshot;

/// Points kept per series.
pub const CAPACITY: usize = 4096;
/// The newest points, never thinned.
pub const RECENT: usize = 1024;
/// Groups whose course is kept over a run (the plot cannot tell more lines apart).
pub const MAX_GROUPS: usize = 256;

/// Values over the run, one per interval (older ones thinned), for sparklines and the plot.
#[derive(Debug, Default)]
pub struct History {
    pub elapsed: Vec<f64>,
    pub generation: Vec<Option<f64>>,
    pub ewma: Vec<Option<f64>>,
    pub running: Vec<Option<f64>>,
    pub waiting: Vec<Option<f64>>,
    pub finished: Vec<Option<f64>>,
    /// Per group shown (with `--by`): `label=value` and its generation rate per point.
    pub groups: Vec<(String, Vec<Option<f64>>)>,
    /// Seconds since start at which a restart was announced.
    pub restarts: Vec<f64>,
    /// Intervals pushed: as many as the run computed, whatever the thinning.
    pub intervals: u64,
    /// Where each group's values are, by its value (the `--by` label is one per run), and
    /// the others' row.
    index: HashMap<String, usize>,
    others: Option<usize>,
    /// The first `thinned` points are each the mean of `stride` intervals (stride 0: none).
    thinned: usize,
    stride: usize,
}

/// The mean of the values known, if any.
fn mean(values: &[Option<f64>]) -> Option<f64> {
    let known: Vec<f64> = values.iter().flatten().copied().collect();
    (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64)
}

/// The values in `range` merged `size` at a time by `merge`.
fn merge_runs<T: Copy>(
    values: &mut Vec<T>,
    range: std::ops::Range<usize>,
    size: usize,
    merge: impl Fn(&[T]) -> T,
) {
    let merged: Vec<T> = values[range.clone()].chunks(size.max(1)).map(merge).collect();
    values.splice(range, merged);
}

impl History {
    pub fn push(&mut self, s: &Snapshot) {
        if self.elapsed.len() >= CAPACITY {
            self.thin();
        }
        let n = self.elapsed.len();
        self.intervals += 1;
        self.elapsed.push(s.elapsed);
        self.generation.push(s.figures.generation.window);
        self.ewma.push(s.figures.generation.ewma);
        self.running.push(s.figures.in_flight.running);
        self.waiting.push(s.figures.in_flight.waiting);
        self.finished.push(s.figures.requests.finished);
        if let Some(screen) = s.screen_groups() {
            for (value, f) in screen.rows.iter().map(|(v, f)| (v.as_str(), f)) {
                if let Some(values) = self.group(screen.label, Some(value), n) {
                    values.push(f.generation.window);
                }
            }
            if let Some(others) = screen.others {
                if let Some(values) = self.group(screen.label, None, n) {
                    values.push(others.figures.generation.window);
                }
            }
        }
        // Groups absent this interval get a gap.
        for (_, values) in &mut self.groups {
            values.resize(n + 1, None);
        }
    }

    /// The values of a group (`None`: the others' row), made with a gap for the `n`
    /// points before it; none once [`MAX_GROUPS`] are kept.
    fn group(&mut self, label: &str, value: Option<&str>, n: usize) -> Option<&mut Vec<Option<f64>>> {
        let known = match value {
            Some(value) => self.index.get(value).copied(),
            None => self.others,
        };
        let index = match known {
            Some(index) => index,
            None if self.groups.len() < MAX_GROUPS => {
                let index = self.groups.len();
                let name = match value {
                    Some(value) => {
                        self.index.insert(value.to_string(), index);
                        format!("{label}={value}")
                    }
                    None => {
                        self.others = Some(index);
                        format!("{label}: the others")
                    }
                };
                self.groups.push((name, vec![None; n]));
                index
            }
            None => return None,
        };
        Some(&mut self.groups[index].1)
    }

    /// Thins every series alike: the full-resolution points older than the newest
    /// [`RECENT`] join the thinned part (`stride` at a time), whose stride doubles when it
    /// fills half the capacity.
    fn thin(&mut self) {
        let stride = self.stride.max(1);
        let full = self.elapsed.len() - self.thinned;
        let joining = full.saturating_sub(RECENT) / stride * stride;
        let mut steps = vec![(self.thinned..self.thinned + joining, stride)];
        let thinned = self.thinned + joining / stride;
        let (thinned, stride) = if thinned >= CAPACITY / 2 {
            steps.push((0..thinned, 2));
            (thinned.div_ceil(2), stride * 2)
        } else {
            (thinned, stride)
        };
        for (range, size) in steps {
            merge_runs(&mut self.elapsed, range.clone(), size, |t| {
                t.iter().sum::<f64>() / t.len() as f64
            });
            let series = [
                &mut self.generation,
                &mut self.ewma,
                &mut self.running,
                &mut self.waiting,
                &mut self.finished,
            ];
            for values in series.into_iter().chain(self.groups.iter_mut().map(|(_, v)| v)) {
                merge_runs(values, range.clone(), size, mean);
            }
        }
        (self.thinned, self.stride) = (thinned, stride);
    }
}

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    use chrono::{DateTime, TimeDelta};

    use super::*;
    use crate::figures::{Figures, Rate};
    use crate::snapshot::WindowState;

    /// An interval with `groups` groups generating 10 tok/s each.
    fn snapshot(groups: usize) -> Snapshot {
        let at = DateTime::from_timestamp(0, 0).unwrap();
        let busy = |rate: f64| Figures {
            generation: Rate {
                window: Some(rate),
                ewma: Some(rate),
                promql: None,
            },
            in_flight: crate::figures::InFlight {
                running: Some(1.0),
                ..Default::default()
            },
            ..Figures::default()
        };
        Snapshot {
            verdict: crate::figures::Verdict::default(),
            elapsed: 0.0,
            at,
            window: WindowState {
                asked: TimeDelta::seconds(30),
                computed_at: at,
                newest_age_s: None,
                fresh_pages: 1,
            },
            figures: busy(10.0 * groups as f64),
            servers: Vec::new(),
            groups: Some((
                "engine".into(),
                (0..groups)
                    .map(|g| (format!("engine-{g:03}"), busy(10.0)))
                    .collect(),
            )),
            on_screen: None,
            progress: None,
        }
    }

    /// The bytes a history holds in its vectors and names (counted, not measured).
    fn bytes(h: &History) -> usize {
        let values = |v: &Vec<Option<f64>>| v.capacity() * size_of::<Option<f64>>();
        let main = [&h.generation, &h.ewma, &h.running, &h.waiting, &h.finished];
        h.elapsed.capacity() * size_of::<f64>()
            + main.into_iter().map(values).sum::<usize>()
            + h.groups
                .iter()
                .map(|(name, v)| name.capacity() + values(v) + size_of::<(String, Vec<Option<f64>>)>())
                .sum::<usize>()
            + h.index
                .keys()
                .map(|k| k.capacity() + 2 * size_of::<(String, usize)>())
                .sum::<usize>()
            + h.restarts.capacity() * size_of::<f64>()
    }

    /// A 24-hour run at 1 s with 200 groups (86,400 intervals) stays well under 100 MB:
    /// the old points are thinned, the newest kept at full resolution, the run's start
    /// still drawn, and every interval counted. (Unbounded, it held 130 B an interval and
    /// 16 B a group: 58 MB after 4 hours of 200 engines, 350 MB after a day.)
    #[test]
    fn a_day_at_one_second_with_200_groups_stays_under_100_mb() {
        let mut h = History::default();
        let mut s = snapshot(200);
        for second in 0..86_400 {
            s.elapsed = f64::from(second);
            h.push(&s);
        }
        let size = bytes(&h);
        assert!(size < 100_000_000, "{size} bytes");
        assert!(size < 20_000_000, "thinning keeps it near 14 MB: {size} bytes");
        assert_eq!(h.intervals, 86_400);
        assert!(h.elapsed.len() <= CAPACITY);
        assert_eq!(h.groups.len(), 200);
        assert!(h.groups.iter().all(|(_, v)| v.len() == h.elapsed.len()));
        // The newest half at full resolution, the run's first minutes still there.
        let newest = &h.elapsed[h.elapsed.len() - RECENT..];
        assert!(
            newest.windows(2).all(|w| w[1] - w[0] == 1.0),
            "{:?}",
            &newest[..4]
        );
        assert_eq!(h.elapsed.last(), Some(&86_399.0));
        assert!(h.elapsed[0] < 60.0, "{}", h.elapsed[0]);
        assert!(h.elapsed.windows(2).all(|w| w[0] < w[1]));
        // Means of equal rates are those rates: the picture is thinned, not changed.
        assert!(h.generation.iter().all(|v| *v == Some(2000.0)));
    }

    /// Thinned points are means of equal runs of intervals at their mean time: the
    /// course is drawn evenly from the run's start, the newest intervals whole.
    #[test]
    fn thinned_points_are_evenly_spaced_means() {
        let mut h = History::default();
        let mut s = snapshot(2);
        for second in 0..20_000 {
            s.elapsed = f64::from(second);
            s.figures.in_flight.running = Some(f64::from(second % 2));
            h.push(&s);
        }
        let old = &h.elapsed[..h.thinned];
        let step = old[1] - old[0];
        assert_eq!(step, h.stride as f64);
        assert!(old.windows(2).all(|w| w[1] - w[0] == step), "{old:?}");
        // A mean of whole runs of 0, 1, 0, 1, ...
        assert!(h.running[..h.thinned].iter().all(|r| *r == Some(0.5)));
        let recent = &h.running[h.running.len() - RECENT..];
        assert!(recent.windows(2).all(|w| w[0] != w[1]));
    }

    /// Groups beyond what a screen shows, or beyond [`MAX_GROUPS`], have no course: a
    /// run of 200,000 groups keeps a few hundred series, not 200,000.
    #[test]
    fn only_the_groups_shown_are_kept() {
        let mut h = History::default();
        let mut s = snapshot(1_000);
        s.on_screen = Some(crate::top::on_screen(&s.groups.as_ref().unwrap().1, 50));
        h.push(&s);
        assert_eq!(h.groups.len(), 51);
        assert_eq!(h.groups.last().unwrap().0, "engine: the others");
        let mut all = snapshot(1_000);
        all.elapsed = 1.0;
        h.push(&all);
        assert_eq!(h.groups.len(), MAX_GROUPS);
    }
}
