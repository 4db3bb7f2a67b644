//! The three scales an axis can have (linear, logarithmic, percentile),
//! and round ticks with their labels for each.

use super::chart::{self as doc, Axis};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Linear,
    Log,
    Percentile,
}

impl Kind {
    pub(super) fn of(axis: &Axis) -> Kind {
        match axis.scale {
            doc::Scale::Linear => Kind::Linear,
            doc::Scale::Log => Kind::Log,
            doc::Scale::Percentile => Kind::Percentile,
        }
    }

    /// The value in the scale's space, or None where it cannot be drawn.
    /// Percentiles of 100 and above become +inf, placed by [`Scale::cap`].
    pub(super) fn transform(self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        match self {
            Kind::Linear => Some(v),
            Kind::Log => (v > 0.0).then(|| v.log10()),
            Kind::Percentile => {
                if v < 0.0 {
                    None
                } else if v >= 100.0 {
                    Some(f64::INFINITY)
                } else {
                    Some(-(1.0 - v / 100.0).log10())
                }
            }
        }
    }
}

/// A tick: position in scale space, label (None for an unlabelled minor
/// gridline).
pub(super) struct Tick {
    pub(super) t: f64,
    pub(super) label: Option<String>,
}

impl Tick {
    /// Its grid line: darker where the tick is labelled.
    pub(super) fn grid_colour(&self) -> &'static str {
        if self.label.is_some() {
            "#dddddd"
        } else {
            "#f0f0f0"
        }
    }
}

/// One axis' mapping from scale space to pixels.
pub(super) struct Scale {
    pub(super) kind: Kind,
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// Where the percentile 100 is drawn (scale space).
    pub(super) cap: f64,
    pub(super) px0: f64,
    pub(super) px1: f64,
}

impl Scale {
    pub(super) fn t(&self, v: f64) -> Option<f64> {
        self.kind
            .transform(v)
            .map(|t| if t.is_infinite() { self.cap } else { t })
    }

    pub(super) fn px_of_t(&self, t: f64) -> f64 {
        self.px0 + (t - self.lo) / (self.hi - self.lo) * (self.px1 - self.px0)
    }

    pub(super) fn px(&self, v: f64) -> Option<f64> {
        self.t(v).map(|t| self.px_of_t(t))
    }
}

/// A "nice" step (1, 2 or 5 × 10^k) that cuts `range` into about `target`
/// parts.
pub(super) fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    // The nearest of 1, 2, 5, 10 (cut at their geometric means).
    let nice = if f < 1.42 {
        1.0
    } else if f < 3.17 {
        2.0
    } else if f < 7.08 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Decimals needed to tell ticks `step` apart.
pub(super) fn decimals(step: f64) -> usize {
    (-(step.log10() + 1e-9).floor()).clamp(0.0, 9.0) as usize
}

/// A linear tick label: plain up to 9 999, then with k/M/G/T.
pub(super) fn linear_label(v: f64, step: f64, magnitude: f64) -> String {
    if v.abs() < step * 1e-6 {
        return "0".into();
    }
    let (div, suffix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| magnitude >= *d && magnitude >= 1e4)
        .unwrap_or((1.0, ""));
    format!("{:.*}{suffix}", decimals(step / div), v / div)
}

/// The label of 10^k.
pub(super) fn power_label(k: i32) -> String {
    match k {
        0..=3 => format!("{}", 10u64.pow(k as u32)),
        4..=5 => format!("{}k", 10u64.pow(k as u32 - 3)),
        6..=8 => format!("{}M", 10u64.pow(k as u32 - 6)),
        9..=11 => format!("{}G", 10u64.pow(k as u32 - 9)),
        -3..=-1 => format!("{:.*}", (-k) as usize, 10f64.powi(k)),
        _ => format!("1e{k}"),
    }
}

/// A label for m × 10^k on a log axis.
pub(super) fn log_label(m: f64, k: i32) -> String {
    if m == 1.0 {
        return power_label(k);
    }
    let v = m * 10f64.powi(k);
    if k >= 3 {
        linear_label(v, 10f64.powi(k), v)
    } else {
        format!("{:.*}", (-k).max(0) as usize, v)
    }
}

/// A percentile tick label: 0, 50, 90, 99, 99.9, …
pub(super) fn percentile_label(nines: i32) -> String {
    match nines {
        0 => "0".into(),
        1 => "90".into(),
        n => format!("{:.*}", (n - 2) as usize, 100.0 - 10f64.powi(2 - n)),
    }
}

/// Axis range and ticks for the transformed values `ts` (finite, non-empty
/// unless `ts` was empty).
/// `nice_ends`: extend the range to whole ticks (y axes); otherwise the
/// range is the data's, padded by `pad` of its width.
pub(super) fn ticks(kind: Kind, ts: &[f64], nice_ends: bool, pad: f64) -> (f64, f64, Vec<Tick>) {
    let (mut lo, mut hi) = ts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &t| {
            (a.min(t), b.max(t))
        });
    if !lo.is_finite() {
        // No data: an empty frame with a unit range.
        (lo, hi) = match kind {
            Kind::Linear => (0.0, 1.0),
            Kind::Log | Kind::Percentile => (0.0, 2.0),
        };
    }
    if kind == Kind::Linear && nice_ends {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if kind == Kind::Percentile {
        lo = lo.min(0.0);
    }
    if hi - lo <= (hi.abs().max(lo.abs())) * 1e-12 {
        // One value (or all equal): a range around it.
        let w = match kind {
            Kind::Linear if lo == 0.0 => 1.0,
            Kind::Linear => lo.abs() * 0.5,
            _ => 0.5,
        };
        (lo, hi) = match (kind, nice_ends) {
            // Zero stays an end of a linear y axis.
            (Kind::Linear, true) if lo >= 0.0 => (0.0, hi + w),
            (Kind::Linear, true) if hi <= 0.0 => (lo - w, 0.0),
            _ => (lo - w, hi + w),
        };
    }
    match kind {
        Kind::Linear => {
            let step = nice_step(hi - lo, 6.0);
            if nice_ends {
                lo = (lo / step + 1e-9).floor() * step;
                hi = (hi / step - 1e-9).ceil() * step;
            } else {
                let p = (hi - lo) * pad;
                lo -= p;
                hi += p;
            }
            let magnitude = lo.abs().max(hi.abs());
            let first = (lo / step - 1e-9).ceil() as i64;
            let last = (hi / step + 1e-9).floor() as i64;
            let ticks = (first..=last)
                .map(|i| {
                    let v = i as f64 * step;
                    Tick {
                        t: v,
                        label: Some(linear_label(v, step, magnitude)),
                    }
                })
                .collect();
            (lo, hi, ticks)
        }
        Kind::Log => {
            if nice_ends {
                lo = (lo + 1e-9).floor();
                hi = (hi - 1e-9).ceil();
            } else {
                let p = (hi - lo) * pad;
                lo -= p;
                hi += p;
            }
            let decades = hi - lo;
            // Label every decade, or every 2nd/3rd… over a huge range.
            let every = ((decades / 10.0).ceil() as i32).max(1);
            let mut out = Vec::new();
            for k in (lo - 1e-9).floor() as i32..=(hi + 1e-9).ceil() as i32 {
                for m in 1..10 {
                    let t = k as f64 + (m as f64).log10();
                    if t < lo - 1e-9 || t > hi + 1e-9 {
                        continue;
                    }
                    let label = if m == 1 {
                        (k.rem_euclid(every) == 0).then(|| power_label(k))
                    } else if decades < 3.0 && (m == 2 || m == 5) {
                        // Less than three decades: 2 and 5 are labelled too.
                        Some(log_label(m as f64, k))
                    } else {
                        None
                    };
                    if label.is_some() || decades <= 6.0 {
                        out.push(Tick { t, label });
                    }
                }
            }
            if out.iter().filter(|t| t.label.is_some()).count() < 2 {
                // Within one decade: round values, placed logarithmically.
                let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
                let step = nice_step(b - a, 4.0);
                out.clear();
                let mut i = (a / step).ceil();
                while i * step <= b * (1.0 + 1e-9) {
                    let v = i * step;
                    if v > 0.0 {
                        out.push(Tick {
                            t: v.log10(),
                            label: Some(linear_label(v, step, b)),
                        });
                    }
                    i += 1.0;
                }
            }
            (lo, hi, out)
        }
        Kind::Percentile => {
            hi = hi.max(1.0).ceil();
            let mut out = vec![Tick {
                t: 0.0,
                label: Some("0".into()),
            }];
            if hi <= 4.0 {
                out.push(Tick {
                    t: 2f64.log10(),
                    label: Some("50".into()),
                });
            }
            for n in 1..=hi as i32 {
                out.push(Tick {
                    t: n as f64,
                    label: Some(percentile_label(n)),
                });
            }
            (lo, hi, out)
        }
    }
}
