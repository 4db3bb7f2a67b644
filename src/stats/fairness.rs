//! sysbench's "Threads fairness": how evenly the work was spread over the
//! clients.
//!
//! Computed as sysbench 1.0.20 does (`report_cumulative` in
//! `src/sysbench.c`): the mean and the **population** standard deviation
//! (divisor n, not n − 1) of the events each client ran and of the time
//! each client spent executing them, so dbsweep's figures compare directly
//! with sysbench's.

pub use crate::record::Fairness;

/// Fairness over `clients`: per client (events, busy seconds), where busy
/// seconds is the sum of that client's event durations (sysbench's
/// per-thread timer sum), not its wall-clock time.
///
/// With no clients there is nothing to average: every field is NaN (which
/// serde_json writes as `null`).
pub fn fairness(clients: &[(u64, f64)]) -> Fairness {
    let events: Vec<f64> = clients.iter().map(|&(n, _)| n as f64).collect();
    let times: Vec<f64> = clients.iter().map(|&(_, s)| s).collect();
    let (events_avg, events_stddev) = mean_and_population_stddev(&events);
    let (time_avg_s, time_stddev_s) = mean_and_population_stddev(&times);
    Fairness {
        events_avg,
        events_stddev,
        time_avg_s,
        time_stddev_s,
    }
}

/// Mean and population standard deviation (divisor n), as sysbench reports
/// them; NaN for an empty slice.
fn mean_and_population_stddev(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let squares: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, (squares / n).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uneven_events_even_time() {
        // Deviations -10, 0, 10: squares sum to 200, over n = 3.
        let f = fairness(&[(10, 1.0), (20, 1.0), (30, 1.0)]);
        assert_eq!(f.events_avg, 20.0);
        assert!((f.events_stddev - 8.164_965_809_277_26).abs() < 1e-12);
        assert_eq!(f.time_avg_s, 1.0);
        assert_eq!(f.time_stddev_s, 0.0);
    }

    #[test]
    fn two_clients_use_the_population_formula() {
        // Sample stddev would be sqrt(2) for both; population gives 1.
        let f = fairness(&[(5, 2.0), (7, 4.0)]);
        assert_eq!(
            f,
            Fairness {
                events_avg: 6.0,
                events_stddev: 1.0,
                time_avg_s: 3.0,
                time_stddev_s: 1.0,
            }
        );
    }

    #[test]
    fn one_client_has_no_spread() {
        let f = fairness(&[(1234, 9.5)]);
        assert_eq!((f.events_avg, f.events_stddev), (1234.0, 0.0));
        assert_eq!((f.time_avg_s, f.time_stddev_s), (9.5, 0.0));
    }

    #[test]
    fn no_clients_is_nan() {
        let f = fairness(&[]);
        assert!(f.events_avg.is_nan() && f.events_stddev.is_nan());
        assert!(f.time_avg_s.is_nan() && f.time_stddev_s.is_nan());
    }
}
