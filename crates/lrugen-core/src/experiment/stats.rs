// SPDX-License-Identifier: GPL-2.0-only
//! Statistics over repetitions: mean, standard deviation and Student-t confidence intervals, and
//! the difference between two policies by Welch's t-test, as kernel benchmark reports state it
//! ("+3.2% ± 1.1%").
//!
//! The Student t distribution is computed here, without a statistics crate:
//!
//! * its CDF from the regularized incomplete beta function,
//!   `F(t; ν) = 1 − ½·I_{ν/(ν+t²)}(ν/2, ½)` for `t ≥ 0` (Abramowitz & Stegun 26.7.1 and 26.5.27),
//!   with `I_x(a, b)` evaluated by its continued fraction with the modified Lentz method
//!   (Numerical Recipes §6.4, using the symmetry `I_x(a,b) = 1 − I_{1−x}(b,a)` where the fraction
//!   converges slowly) and `ln Γ` by the Lanczos approximation (g = 7, 9 terms);
//! * its quantile by bisection on that CDF (monotone, so bisection cannot fail), after doubling an
//!   upper bracket; 200 halvings reach the resolution of an `f64`;
//! * for `ν = ∞` (or `ν > 10⁷`), the normal quantile, by the same bisection on
//!   `Φ(x) = ½·erfc(−x/√2)`, with `erfc` from the regularized incomplete gamma function
//!   `Q(½, x²)` (series and continued fraction, Numerical Recipes §6.2).

use serde::Serialize;

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, n = 9; relative error below 1e-15).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-16;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function `I_x(a, b)`, for `a, b > 0` and `0 ≤ x ≤ 1`.
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The regularized upper incomplete gamma function `Q(a, x)`, `a > 0`, `x ≥ 0`.
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let gln = ln_gamma(a);
    if x < a + 1.0 {
        // Series for P(a, x).
        let (mut ap, mut sum) = (a, 1.0 / a);
        let mut del = sum;
        for _ in 0..10_000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-17 {
                break;
            }
        }
        1.0 - sum * (-x + a * x.ln() - gln).exp()
    } else {
        // Continued fraction for Q(a, x) (modified Lentz).
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (-x + a * x.ln() - gln).exp() * h
    }
}

/// The complementary error function.
pub fn erfc(x: f64) -> f64 {
    if x >= 0.0 {
        gamma_q(0.5, x * x)
    } else {
        2.0 - gamma_q(0.5, x * x)
    }
}

/// The standard normal CDF `Φ(x)`.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Degrees of freedom above which the t distribution is taken as normal.
const NORMAL_DF: f64 = 1e7;

/// The CDF of Student's t distribution with `df` degrees of freedom (`df = ∞` allowed).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df > NORMAL_DF {
        return normal_cdf(t);
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The quantile of Student's t distribution: the `t` with `P(T ≤ t) = p`, for `0 < p < 1` and
/// `df > 0` (`df = ∞` gives the normal quantile). NaN outside that domain.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    // Bracket: double the upper end until the CDF passes p.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_cdf(hi, df) < p {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Mean, standard deviation and 95% confidence interval of one metric over repetitions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); `None` for fewer than 2 values.
    pub sd: Option<f64>,
    /// Half-width of the 95% confidence interval of the mean, `t(0.975, n−1)·sd/√n`; `None` for
    /// fewer than 2 values.
    pub ci95: Option<f64>,
}

/// Summarize `xs` (which must not be empty: `None` if it is).
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Some(Summary {
            n,
            mean,
            sd: None,
            ci95: None,
        });
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    let ci = t_quantile(0.975, (n - 1) as f64) * sd / (n as f64).sqrt();
    Some(Summary {
        n,
        mean,
        sd: Some(sd),
        ci95: Some(ci),
    })
}

/// The difference of a policy from the baseline on one metric, by Welch's t-test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    /// `mean(policy) − mean(baseline)`.
    pub diff: f64,
    /// Half-width of its 95% confidence interval, `t(0.975, ν)·√(s₁²/n₁ + s₂²/n₂)`; `None` unless
    /// both sides have at least 2 values.
    pub ci95: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom `ν` (`n₁ + n₂ − 2` when both variances are 0).
    pub df: Option<f64>,
    /// Two-sided p-value of "no difference".
    pub p: Option<f64>,
    /// The difference relative to the baseline's mean, in percent (`None` if that mean is 0).
    pub rel_pct: Option<f64>,
    /// The confidence half-width relative to the baseline's mean, in percent (the baseline mean
    /// taken as exact, as benchmark reports do).
    pub rel_ci95_pct: Option<f64>,
}

impl Diff {
    /// "+3.2% ± 1.1%" (relative), "+3.2%" without a confidence interval, or the absolute
    /// difference when the baseline mean is 0.
    pub fn format_relative(&self) -> String {
        match (self.rel_pct, self.rel_ci95_pct) {
            (Some(r), Some(c)) => format!("{r:+.1}% ± {c:.1}%"),
            (Some(r), None) => format!("{r:+.1}%"),
            _ => match self.ci95 {
                Some(c) => format!("{:+.4} ± {c:.4}", self.diff),
                None => format!("{:+.4}", self.diff),
            },
        }
    }
}

/// Welch's t-test of `a` (a policy) against `b` (the baseline): the difference of means with its
/// 95% confidence interval. `None` unless both have at least 2 values.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Diff> {
    let (sa, sb) = (summarize(a)?, summarize(b)?);
    let (va, vb) = (sa.sd? * sa.sd?, sb.sd? * sb.sd?);
    let (na, nb) = (sa.n as f64, sb.n as f64);
    let diff = sa.mean - sb.mean;
    let (qa, qb) = (va / na, vb / nb);
    let se2 = qa + qb;
    let (ci95, df, p) = if se2 > 0.0 {
        let df = se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
        let se = se2.sqrt();
        let t = diff / se;
        let p = 2.0 * (1.0 - t_cdf(t.abs(), df));
        (t_quantile(0.975, df) * se, df, p.clamp(0.0, 1.0))
    } else {
        // Both samples constant: the difference is exact.
        (0.0, na + nb - 2.0, if diff == 0.0 { 1.0 } else { 0.0 })
    };
    let base = sb.mean;
    let (rel_pct, rel_ci95_pct) = if base != 0.0 {
        (Some(diff / base.abs() * 100.0), Some(ci95 / base.abs() * 100.0))
    } else {
        (None, None)
    };
    Some(Diff {
        diff,
        ci95: Some(ci95),
        df: Some(df),
        p: Some(p),
        rel_pct,
        rel_ci95_pct,
    })
}

/// The difference of `a` from `b`: by [`welch`] when both have at least 2 values, else the plain
/// difference of the means with no interval. `None` if either is empty.
pub fn difference(a: &[f64], b: &[f64]) -> Option<Diff> {
    if let Some(d) = welch(a, b) {
        return Some(d);
    }
    let (sa, sb) = (summarize(a)?, summarize(b)?);
    let diff = sa.mean - sb.mean;
    Some(Diff {
        diff,
        ci95: None,
        df: None,
        p: None,
        rel_pct: (sb.mean != 0.0).then(|| diff / sb.mean.abs() * 100.0),
        rel_ci95_pct: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantile_table() {
        // Two-sided 95% critical values, as tabulated (e.g. NIST/SEMATECH e-Handbook, 1.3.6.7.2).
        for (df, want) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (3.0, 3.182),
            (5.0, 2.571),
            (10.0, 2.228),
            (20.0, 2.086),
            (30.0, 2.042),
            (100.0, 1.984),
        ] {
            let got = t_quantile(0.975, df);
            assert!(close(got, want, 5e-4), "t(0.975, {df}) = {got}, want {want}");
        }
        assert!(close(t_quantile(0.975, f64::INFINITY), 1.959_964, 1e-6));
        assert!(close(t_quantile(0.975, 1e9), 1.959_964, 1e-6));
        // Exact for one degree of freedom: tan(π(p − ½)).
        assert!(close(
            t_quantile(0.975, 1.0),
            (std::f64::consts::PI * 0.475).tan(),
            1e-9
        ));
        // Symmetry, the median, other levels.
        assert!(close(t_quantile(0.025, 5.0), -2.570_582, 1e-6));
        assert_eq!(t_quantile(0.5, 7.0), 0.0);
        assert!(close(t_quantile(0.995, 10.0), 3.169, 5e-4));
        // Fractional degrees of freedom (Welch's ν): between its integer neighbours.
        let (a, b, c) = (t_quantile(0.975, 3.0), t_quantile(0.975, 3.5), t_quantile(0.975, 4.0));
        assert!(a > b && b > c, "{a} {b} {c}");
        assert!(t_quantile(1.0, 3.0).is_nan() && t_quantile(0.9, 0.0).is_nan());
    }

    #[test]
    fn cdf_and_special_functions() {
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12));
        assert!(close(inc_beta(2.0, 3.0, 0.4), 0.5248, 1e-10));
        assert!(close(erfc(1.0), 0.157_299_207_050_285_1, 1e-14));
        assert!(close(normal_cdf(1.959_963_984_540_054), 0.975, 1e-12));
        assert!(close(t_cdf(2.228_138_851_986_273_5, 10.0), 0.975, 1e-12));
        assert!(close(t_cdf(-12.706_204_736, 1.0), 0.025, 1e-9));
    }

    #[test]
    fn summary_by_hand() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(s.n, 4);
        assert!(close(s.mean, 2.5, 1e-15));
        let sd = (5.0f64 / 3.0).sqrt();
        assert!(close(s.sd.unwrap(), sd, 1e-12));
        assert!(close(s.ci95.unwrap(), 3.182_446_305 * sd / 2.0, 1e-8));
        let one = summarize(&[7.0]).unwrap();
        assert_eq!((one.mean, one.sd, one.ci95), (7.0, None, None));
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn welch_by_hand() {
        // a = {1,2,3,4,5}: mean 3, s² = 2.5; b = {2,4,6}: mean 4, s² = 4.
        // s²/n: 0.5 and 4/3; se² = 11/6; ν = (11/6)² / (0.25/4 + (16/9)/2) = 3.361111 / 0.951389.
        let d = welch(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 6.0]).unwrap();
        let se2 = 0.5 + 4.0 / 3.0;
        let df = se2 * se2 / (0.25 / 4.0 + (16.0 / 9.0) / 2.0);
        assert!(close(d.diff, -1.0, 1e-15));
        assert!(close(d.df.unwrap(), df, 1e-12));
        assert!(close(d.df.unwrap(), 3.532_847, 1e-6));
        let ci = d.ci95.unwrap();
        assert!(close(ci, t_quantile(0.975, df) * se2.sqrt(), 1e-12));
        // t(0.975, 3.532847) = 2.927405 (by Simpson integration of the t density, independently
        // of this module), so the CI is ±2.927405·√(11/6) = ±3.963726.
        assert!(close(ci, 3.963_726, 1e-5), "{ci}");
        assert!(close(d.rel_pct.unwrap(), -25.0, 1e-12));
        let p = d.p.unwrap();
        // Two-sided p of t = −1/√(11/6) on 3.53 degrees of freedom (same integration): 0.50621.
        assert!(close(p, 0.506_21, 1e-4), "{p}");
        assert_eq!(d.format_relative(), "-25.0% ± 99.1%");
        // Constant samples: an exact difference.
        let e = welch(&[2.0, 2.0], &[1.0, 1.0, 1.0]).unwrap();
        assert_eq!((e.diff, e.ci95, e.p), (1.0, Some(0.0), Some(0.0)));
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
        // One repetition: the plain difference, no interval.
        let f = difference(&[3.0], &[2.0]).unwrap();
        assert_eq!((f.diff, f.ci95, f.rel_pct), (1.0, None, Some(50.0)));
        assert_eq!(f.format_relative(), "+50.0%");
    }
}
