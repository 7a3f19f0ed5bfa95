//! Percentiles over recorded latencies.
//!
//! The `hdrhistogram` crate is not a workspace dependency, so every sample is
//! kept (8 bytes each: a few million samples is a few tens of MB) and sorted
//! once at the end. That is exact, where a histogram would round each value
//! to its bucket.

use serde::Serialize;

/// A quantile in parts per million: 500_000 is the median, 999_000 is p99.9.
/// Integer so that `p99.9 of 1000 samples` is exactly the 999th, with no
/// floating-point rounding across a rank boundary.
pub(crate) type PartsPerMillion = u64;

/// The quantiles every summary reports, with their labels.
pub(crate) const QUANTILES: [(&str, PartsPerMillion); 4] = [
    ("p50", 500_000),
    ("p90", 900_000),
    ("p99", 990_000),
    ("p99.9", 999_000),
];

/// The nearest-rank quantile `q` of `sorted` (ascending): the smallest value
/// such that at least `q` of the samples are less than or equal to it.
/// `None` when there are no samples.
pub(crate) fn quantile(sorted: &[u64], q: PartsPerMillion) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len() as u128;
    let q = u128::from(q.min(1_000_000));
    // rank = ceil(q · n), at least 1.
    let rank = (q * n).div_ceil(1_000_000).max(1);
    Some(sorted[usize::try_from(rank).expect("rank fits") - 1])
}

/// Count, mean, min, the [`QUANTILES`] and max of a set of samples, in the
/// samples' own unit.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Summary {
    /// How many samples.
    pub count: u64,
    /// The smallest sample.
    pub min: u64,
    /// The arithmetic mean, rounded down.
    pub mean: u64,
    /// The median.
    pub p50: u64,
    /// The 90th percentile.
    pub p90: u64,
    /// The 99th percentile.
    pub p99: u64,
    /// The 99.9th percentile.
    #[serde(rename = "p99_9")]
    pub p999: u64,
    /// The largest sample.
    pub max: u64,
}

impl Summary {
    /// Sorts `samples` and summarizes them; all zero when there are none.
    pub(crate) fn of(mut samples: Vec<u64>) -> Self {
        if samples.is_empty() {
            return Self::default();
        }
        samples.sort_unstable();
        let at = |q| quantile(&samples, q).expect("not empty");
        let sum: u128 = samples.iter().map(|&v| u128::from(v)).sum();
        Self {
            count: samples.len() as u64,
            min: samples[0],
            mean: u64::try_from(sum / samples.len() as u128).unwrap_or(u64::MAX),
            p50: at(QUANTILES[0].1),
            p90: at(QUANTILES[1].1),
            p99: at(QUANTILES[2].1),
            p999: at(QUANTILES[3].1),
            max: *samples.last().expect("not empty"),
        }
    }

    /// The same summary with every value divided by `by` (nanoseconds to
    /// microseconds: 1000), rounding to nearest.
    pub(crate) fn scaled(&self, by: u64) -> Self {
        let s = |v: u64| (v + by / 2) / by;
        Self {
            count: self.count,
            min: s(self.min),
            mean: s(self.mean),
            p50: s(self.p50),
            p90: s(self.p90),
            p99: s(self.p99),
            p999: s(self.p999),
            max: s(self.max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_one_to_a_hundred() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0), Some(1));
        assert_eq!(quantile(&v, 10_000), Some(1));
        assert_eq!(quantile(&v, 500_000), Some(50));
        assert_eq!(quantile(&v, 500_001), Some(51));
        assert_eq!(quantile(&v, 900_000), Some(90));
        assert_eq!(quantile(&v, 990_000), Some(99));
        assert_eq!(quantile(&v, 999_000), Some(100));
        assert_eq!(quantile(&v, 1_000_000), Some(100));
    }

    #[test]
    fn p99_9_of_a_thousand_is_the_999th_exactly() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(quantile(&v, 999_000), Some(999));
        let v: Vec<u64> = (1..=10_000).collect();
        assert_eq!(quantile(&v, 999_000), Some(9990));
        assert_eq!(quantile(&v, 990_000), Some(9900));
    }

    #[test]
    fn tiny_and_empty_sets() {
        assert_eq!(quantile(&[], 500_000), None);
        assert_eq!(quantile(&[7], 0), Some(7));
        assert_eq!(quantile(&[7], 999_000), Some(7));
        assert_eq!(quantile(&[1, 2], 500_000), Some(1));
        assert_eq!(quantile(&[1, 2], 500_001), Some(2));
        assert_eq!(Summary::of(Vec::new()), Summary::default());
    }

    #[test]
    fn a_summary_sorts_and_reads_every_figure() {
        // 1..=1000 shuffled, plus one outlier: 1001 samples.
        let mut v: Vec<u64> = (1..=1000).map(|i| (i * 7919) % 1000 + 1).collect();
        v.push(1_000_000);
        let s = Summary::of(v);
        assert_eq!(s.count, 1001);
        assert_eq!(s.min, 1);
        assert_eq!(s.max, 1_000_000);
        assert_eq!(s.p50, 501); // ceil(0.5 · 1001) = 501st
        assert_eq!(s.p90, 901); // ceil(900.9) = 901st
        assert_eq!(s.p99, 991); // ceil(990.99) = 991st
        assert_eq!(s.p999, 1000); // ceil(999.999) = 1000th
        assert_eq!(s.mean, (500_500 + 1_000_000) / 1001);
    }

    #[test]
    fn scaling_rounds_to_nearest() {
        let s = Summary::of(vec![1_499, 1_500, 2_000_000]).scaled(1000);
        assert_eq!((s.min, s.p50, s.max), (1, 2, 2000));
        assert_eq!(s.count, 3);
    }
}
