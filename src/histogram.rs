//! Classic-histogram quantiles with PromQL `histogram_quantile` semantics.
//!
//! Feed it the per-bucket figures you want the quantile of: usually the windowed increases
//! (or rates) of each `_bucket` series, as in
//! `histogram_quantile(0.95, sum by (le) (rate(x_bucket[5m])))`.

/// One cumulative bucket: its upper bound (`le`) and its count (or increase, or rate).
///
/// # Example
/// ```
/// let b = promrate::histogram::Bucket { upper_bound: 0.5, count: 3.0 };
/// assert_eq!(b.upper_bound, 0.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    /// The bucket's `le` bound; `f64::INFINITY` for `+Inf`.
    pub upper_bound: f64,
    /// Cumulative count of observations `<= upper_bound`.
    pub count: f64,
}

impl Bucket {
    /// A bucket of `count` observations at or below `upper_bound`.
    ///
    /// # Example
    /// ```
    /// use promrate::histogram::{quantile, Bucket};
    /// let buckets = [Bucket::new(0.1, 10.0), Bucket::new(1.0, 30.0), Bucket::new(f64::INFINITY, 40.0)];
    /// assert!((quantile(0.5, &buckets).unwrap() - 0.55).abs() < 1e-12);
    /// ```
    pub fn new(upper_bound: f64, count: f64) -> Self {
        Bucket { upper_bound, count }
    }
}

/// The `q`-quantile of a classic histogram, exactly as PromQL's `histogram_quantile`
/// computes it (Prometheus 2.49 and later, `BucketQuantile`): buckets are sorted by bound,
/// equal bounds merged, counts made monotonic (a count within a relative 1e-12 of the one
/// before is float noise and takes its value, either way; a lower one takes it too); the
/// answer is linearly interpolated inside the bucket holding rank `q * total`, the lowest
/// bucket starting at 0 (or at its bound if that is <= 0), and a rank in the `+Inf` bucket
/// answers the highest finite bound (so does a NaN total, as in PromQL).
///
/// `q < 0` gives `-Inf` and `q > 1` `+Inf`, as in PromQL. Where PromQL answers NaN
/// because there is no quantile to give, this gives `None`: a NaN `q`, fewer than two
/// buckets, no `+Inf` bucket, or no observations. The tests compare it bit for bit with a
/// real Prometheus on 1,000 random histograms (`tests/data/oracle/histogram-quantile.json`).
///
/// # Example
/// ```
/// use promrate::histogram::{quantile, Bucket};
/// let buckets = [
///     Bucket { upper_bound: 0.1, count: 10.0 },
///     Bucket { upper_bound: 0.5, count: 30.0 },
///     Bucket { upper_bound: f64::INFINITY, count: 40.0 },
/// ];
/// let p50 = quantile(0.5, &buckets).unwrap(); // rank 20 of 40: halfway through (0.1, 0.5]
/// assert!((p50 - 0.3).abs() < 1e-12);
/// assert_eq!(quantile(0.99, &buckets), Some(0.5)); // in +Inf: highest finite bound
/// assert_eq!(quantile(0.5, &buckets[..2]), None); // no +Inf bucket
/// ```
pub fn quantile(q: f64, buckets: &[Bucket]) -> Option<f64> {
    if q.is_nan() {
        return None;
    }
    if q < 0.0 {
        return Some(f64::NEG_INFINITY);
    }
    if q > 1.0 {
        return Some(f64::INFINITY);
    }
    // Sorting and merging need a copy; histograms have tens of buckets.
    let mut buckets = buckets.to_vec();
    buckets.sort_by(|a, b| a.upper_bound.total_cmp(&b.upper_bound));
    let n = coalesce(&mut buckets);
    let buckets = &mut buckets[..n];
    if buckets.len() < 2 || buckets[buckets.len() - 1].upper_bound != f64::INFINITY {
        return None;
    }
    ensure_monotonic(buckets);
    let observations = buckets[buckets.len() - 1].count;
    if observations == 0.0 {
        return None;
    }
    let mut rank = q * observations;
    // The first of all but the `+Inf` bucket whose count reaches the rank (none: the
    // `+Inf` one). A NaN rank reaches none, as in PromQL.
    let reaches = |bucket: &Bucket| {
        matches!(
            bucket.count.partial_cmp(&rank),
            Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
        )
    };
    let last = buckets.len() - 1;
    let b = buckets[..last].partition_point(|bucket| !reaches(bucket));
    if b == buckets.len() - 1 {
        return Some(buckets[buckets.len() - 2].upper_bound);
    }
    if b == 0 && buckets[0].upper_bound <= 0.0 {
        return Some(buckets[0].upper_bound);
    }
    let mut start = 0.0;
    let end = buckets[b].upper_bound;
    let mut count = buckets[b].count;
    if b > 0 {
        start = buckets[b - 1].upper_bound;
        count -= buckets[b - 1].count;
        rank -= buckets[b - 1].count;
    }
    Some(start + (end - start) * (rank / count))
}

/// Merges buckets with equal bounds (summing counts) in place; returns the new length.
fn coalesce(buckets: &mut [Bucket]) -> usize {
    let mut len = 0;
    for i in 0..buckets.len() {
        if len > 0 && buckets[len - 1].upper_bound == buckets[i].upper_bound {
            buckets[len - 1].count += buckets[i].count;
        } else {
            buckets[len] = buckets[i];
            len += 1;
        }
    }
    len
}

/// How far apart two bucket counts may be, relative to their size, and still be one count
/// that float arithmetic (a rate of each bucket, their sum) wrote two ways: PromQL's
/// `smallDeltaTolerance`.
const SMALL_DELTA_TOLERANCE: f64 = 1e-12;

/// Makes counts non-decreasing as PromQL does (`ensureMonotonicAndIgnoreSmallDeltas`): a
/// count within [`SMALL_DELTA_TOLERANCE`] of the last one kept takes its value, up or down;
/// a lower one takes it too (rate/increase jitter across buckets); a higher one is kept
/// and compared with next.
fn ensure_monotonic(buckets: &mut [Bucket]) {
    let Some((first, rest)) = buckets.split_first_mut() else {
        return;
    };
    let mut kept = first.count;
    for bucket in rest {
        let count = bucket.count;
        if count == kept {
            continue;
        }
        if almost_equal(kept, count, SMALL_DELTA_TOLERANCE) || count < kept {
            bucket.count = kept;
            continue;
        }
        kept = count;
    }
}

/// Whether `a` and `b` are equal within the relative `epsilon` (Prometheus'
/// `util/almost.Equal`, without its staleness marker, which no bucket count is): both NaN,
/// equal, or their difference small against their size (against the smallest normal float
/// when one is 0 or both are tiny).
fn almost_equal(a: f64, b: f64, epsilon: f64) -> bool {
    if a.is_nan() && b.is_nan() || a == b {
        return true;
    }
    let (sum, difference) = (a.abs() + b.abs(), (a - b).abs());
    if a == 0.0 || b == 0.0 || sum < f64::MIN_POSITIVE {
        return difference < epsilon * f64::MIN_POSITIVE;
    }
    difference / sum.min(f64::MAX) < epsilon
}

/// The mean observation from the `_sum` and `_count` figures (e.g. their rates):
/// `sum / count`, `None` when `count` is 0.
///
/// # Example
/// ```
/// assert_eq!(promrate::histogram::mean(6.0, 3.0), Some(2.0));
/// assert_eq!(promrate::histogram::mean(0.0, 0.0), None);
/// ```
pub fn mean(sum: f64, count: f64) -> Option<f64> {
    (count != 0.0).then(|| sum / count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(upper_bound: f64, count: f64) -> Bucket {
        Bucket { upper_bound, count }
    }

    #[test]
    fn promql_cases() {
        let inf = f64::INFINITY;
        // PromQL's bucketQuantile behaviours: interpolation within a bucket, q at 0 and 1,
        // a negative lowest bound, unsorted buckets, duplicate bounds, non-monotonic counts
        // (repaired), and q outside [0, 1].
        let cases: Vec<(f64, Vec<Bucket>, f64)> = vec![
            (0.5, vec![b(1.0, 1.0), b(2.0, 3.0), b(inf, 4.0)], 1.5),
            (0.0, vec![b(1.0, 1.0), b(2.0, 3.0), b(inf, 4.0)], 0.0),
            (1.0, vec![b(1.0, 1.0), b(2.0, 3.0), b(inf, 4.0)], 2.0),
            (0.25, vec![b(-1.0, 1.0), b(2.0, 3.0), b(inf, 4.0)], -1.0),
            (0.5, vec![b(inf, 4.0), b(2.0, 3.0), b(1.0, 1.0)], 1.5),
            (0.5, vec![b(1.0, 1.0), b(1.0, 1.0), b(inf, 4.0)], 1.0),
            (0.5, vec![b(1.0, 3.0), b(2.0, 1.0), b(inf, 4.0)], 2.0 / 3.0),
            (-0.1, vec![b(1.0, 1.0), b(inf, 2.0)], f64::NEG_INFINITY),
            (1.1, vec![b(1.0, 1.0), b(inf, 2.0)], inf),
        ];
        for (q, buckets, want) in cases {
            let got = quantile(q, &buckets).expect("a quantile");
            assert_eq!(got.to_bits(), want.to_bits(), "q={q}: got {got}, want {want}");
        }
        for nan_case in [
            vec![b(inf, 4.0)],
            vec![b(1.0, 1.0), b(2.0, 2.0)],
            vec![b(1.0, 0.0), b(inf, 0.0)],
        ] {
            assert_eq!(quantile(0.5, &nan_case), None, "{nan_case:?}");
        }
        assert_eq!(quantile(f64::NAN, &[b(1.0, 1.0), b(inf, 2.0)]), None);
        // A NaN total reaches no bucket: the highest finite bound, as PromQL answers.
        assert_eq!(quantile(0.5, &[b(1.0, f64::NAN), b(inf, f64::NAN)]), Some(1.0));
        assert_eq!(
            quantile(0.5, &[b(1.0, 2.0), b(3.0, f64::NAN), b(inf, 4.0)]),
            Some(3.0)
        );
    }

    /// Prometheus' `TestBucketQuantile_ForcedMonotonicity` (promql/quantile_test.go,
    /// commit d15adb9a): a count one part in 10^12 above its neighbours is float noise,
    /// not an observation between 15 and 20.
    #[test]
    fn float_noise_between_buckets_is_no_observation() {
        let inf = f64::INFINITY;
        let noisy = [
            b(10.0, 10.0),
            b(15.0, 15.0),
            b(20.0, 15.00000000001),
            b(30.0, 15.0),
            b(inf, 15.0),
        ];
        let exact = [
            b(10.0, 10.0),
            b(15.0, 15.0),
            b(20.0, 15.0),
            b(30.0, 15.0),
            b(inf, 15.0),
        ];
        for (q, want) in [(1.0, 15.0), (0.99, 14.85), (0.9, 13.5), (0.5, 7.5)] {
            for buckets in [&noisy, &exact] {
                let got = quantile(q, buckets).unwrap();
                assert!(
                    (got - want).abs() < 1e-12,
                    "q={q}: {got}, want {want} ({buckets:?})"
                );
            }
        }
        // Noise below the one before is repaired the same way; a real drop as before.
        let below = [
            b(10.0, 10.0),
            b(15.0, 15.0),
            b(20.0, 14.99999999999),
            b(inf, 15.0),
        ];
        assert_eq!(quantile(1.0, &below), Some(15.0));
        assert!(almost_equal(15.0, 15.00000000001, SMALL_DELTA_TOLERANCE));
        assert!(!almost_equal(15.0, 15.0001, SMALL_DELTA_TOLERANCE));
        // Against 0, the bound is the tolerance of the smallest normal float (about
        // 2.2e-320), as Prometheus' `almost.Equal` has it.
        assert!(almost_equal(0.0, 1e-320, SMALL_DELTA_TOLERANCE));
        assert!(!almost_equal(0.0, 1e-300, SMALL_DELTA_TOLERANCE));
        assert!(!almost_equal(0.0, f64::NAN, SMALL_DELTA_TOLERANCE));
        assert!(almost_equal(f64::NAN, f64::NAN, SMALL_DELTA_TOLERANCE));
    }
}
