//! PromQL's `sum` and `avg` across series, added as Prometheus adds them, so that a group's
//! figure is Prometheus' to the last bit: from 2.54 on (all of 3.x) with Kahan–Neumaier
//! compensation (`util/kahansum.Inc`), the compensation added once at the end; before, in
//! plain order. A sum of rates differs between the two in the last bits about half the
//! time, and by more when magnitudes cancel (`2 + 8 + 1e100 - 1e100` is 10 compensated, 0
//! plain: upstream's `aggregators.test`).

use super::Semantics;

/// A running PromQL aggregation of one group's series: each added in order, then read.
pub(crate) trait Aggregate {
    fn add(&mut self, value: f64);
    fn value(&self) -> f64;
}

/// A running `sum`, series by series in the order PromQL adds them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sum {
    value: f64,
    /// The compensation: the low-order parts the running value lost.
    lost: f64,
    compensated: bool,
    /// No series added yet: the first one's value starts the sum, as in Prometheus.
    empty: bool,
}

impl Sum {
    /// A sum of no series yet, to be added under `semantics`.
    pub(crate) fn new(semantics: Semantics) -> Sum {
        Sum {
            value: 0.0,
            lost: 0.0,
            compensated: semantics == Semantics::Prometheus3,
            empty: true,
        }
    }

    /// The sum of one series' `value`, to add the others to, under `semantics`.
    pub(crate) fn first(value: f64, semantics: Semantics) -> Sum {
        let mut sum = Sum::new(semantics);
        sum.add(value);
        sum
    }
}

impl Aggregate for Sum {
    fn add(&mut self, value: f64) {
        if self.empty {
            (self.value, self.empty) = (value, false);
        } else if self.compensated {
            (self.value, self.lost) = compensated_add(value, self.value, self.lost);
        } else {
            self.value += value;
        }
    }

    /// The sum (0 of no series): the running value with what it lost added back.
    fn value(&self) -> f64 {
        if self.compensated {
            self.value + self.lost
        } else {
            self.value
        }
    }
}

/// A running `avg` as Prometheus 3 computes it: the compensated sum divided by the count,
/// and, from the series whose addition would overflow the sum on, an incremental mean
/// (each value weighted by `1/n`, the mean so far by `(n-1)/n`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mean {
    sum: f64,
    lost: f64,
    count: f64,
    /// The incremental mean, once the sum would have overflowed.
    mean: Option<f64>,
}

impl Mean {
    pub(crate) fn first(value: f64) -> Mean {
        Mean {
            sum: value,
            lost: 0.0,
            count: 1.0,
            mean: None,
        }
    }
}

impl Aggregate for Mean {
    fn add(&mut self, value: f64) {
        self.count += 1.0;
        let before = self.count - 1.0;
        let mean = match self.mean {
            Some(mean) => mean,
            None => {
                let (sum, lost) = compensated_add(value, self.sum, self.lost);
                if !sum.is_infinite() {
                    (self.sum, self.lost) = (sum, lost);
                    return;
                }
                self.lost /= before;
                self.sum / before
            }
        };
        let kept = before / self.count;
        let (mean, lost) = compensated_add(value / self.count, kept * mean, kept * self.lost);
        (self.mean, self.lost) = (Some(mean), lost);
    }

    fn value(&self) -> f64 {
        match self.mean {
            Some(mean) => mean + self.lost,
            None => self.sum / self.count + self.lost / self.count,
        }
    }
}

/// `sum + add` and the compensation `lost` after it (Neumaier's variant of Kahan's: the
/// larger of the two keeps its low-order part); an infinite sum forgets the compensation.
fn compensated_add(add: f64, sum: f64, lost: f64) -> (f64, f64) {
    let total = sum + add;
    let lost = if total.is_infinite() {
        0.0
    } else if sum.abs() >= add.abs() {
        lost + ((sum - total) + add)
    } else {
        lost + ((add - total) + sum)
    };
    (total, lost)
}

#[cfg(test)]
mod tests;
