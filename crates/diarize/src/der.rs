//! Diarization error rate, for tests and benchmarks: (missed + false alarm + confused
//! speaker time) / reference speaker time, on 10 ms frames, after the one-to-one mapping
//! of hypothesis to reference speakers that maximises their overlap. Overlapped speech
//! counts once per speaker. An optional collar excludes the time around each reference
//! turn boundary (NIST's convention: ±collar).

use std::collections::BTreeMap;

/// A labelled stretch of speech.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub start: f64,
    pub end: f64,
    pub speaker: String,
}

/// The parts of the error, in seconds, and the rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DerReport {
    pub der: f64,
    pub missed: f64,
    pub false_alarm: f64,
    pub confusion: f64,
    /// Scored reference speaker time.
    pub reference: f64,
}

/// The `SPEAKER` lines of an RTTM file.
pub fn parse_rttm(text: &str) -> Vec<Segment> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.first() != Some(&"SPEAKER") || f.len() < 8 {
                return None;
            }
            let start: f64 = f[3].parse().ok()?;
            let dur: f64 = f[4].parse().ok()?;
            Some(Segment {
                start,
                end: start + dur,
                speaker: f[7].to_string(),
            })
        })
        .collect()
}

const FRAME: f64 = 0.01;

/// Scores `hypothesis` against `reference`.
pub fn der(reference: &[Segment], hypothesis: &[Segment], collar_s: f64) -> DerReport {
    let end = reference
        .iter()
        .chain(hypothesis)
        .map(|s| s.end)
        .fold(0.0, f64::max);
    let n = (end / FRAME).ceil() as usize + 1;
    let frame = |t: f64| ((t / FRAME).round() as usize).min(n);
    let (ref_ids, ref_rows) = rows(reference, n, &frame);
    let (hyp_ids, hyp_rows) = rows(hypothesis, n, &frame);
    let mut scored = vec![true; n];
    if collar_s > 0.0 {
        for s in reference {
            for t in [s.start, s.end] {
                scored[frame(t - collar_s)..frame(t + collar_s)]
                    .iter_mut()
                    .for_each(|v| *v = false);
            }
        }
    }
    // Overlap in frames of each reference speaker with each hypothesis speaker.
    let mut overlap = vec![vec![0usize; hyp_ids.len()]; ref_ids.len()];
    for (r, rrow) in ref_rows.iter().enumerate() {
        for (h, hrow) in hyp_rows.iter().enumerate() {
            overlap[r][h] = (0..n).filter(|&t| scored[t] && rrow[t] && hrow[t]).count();
        }
    }
    let mapping = best_mapping(&overlap, hyp_ids.len());
    let (mut missed, mut fa, mut conf, mut total) = (0usize, 0usize, 0usize, 0usize);
    for t in (0..n).filter(|&t| scored[t]) {
        let nr = ref_rows.iter().filter(|r| r[t]).count();
        let nh = hyp_rows.iter().filter(|h| h[t]).count();
        let correct = (0..ref_ids.len())
            .filter(|&r| ref_rows[r][t] && mapping[r].is_some_and(|h| hyp_rows[h][t]))
            .count();
        total += nr;
        missed += nr.saturating_sub(nh);
        fa += nh.saturating_sub(nr);
        conf += nr.min(nh) - correct;
    }
    let secs = |f: usize| f as f64 * FRAME;
    DerReport {
        der: (missed + fa + conf) as f64 / total.max(1) as f64,
        missed: secs(missed),
        false_alarm: secs(fa),
        confusion: secs(conf),
        reference: secs(total),
    }
}

type Rows = (Vec<String>, Vec<Vec<bool>>);

fn rows(segments: &[Segment], n: usize, frame: &dyn Fn(f64) -> usize) -> Rows {
    let mut by: BTreeMap<&str, Vec<bool>> = BTreeMap::new();
    for s in segments {
        let row = by.entry(&s.speaker).or_insert_with(|| vec![false; n]);
        row[frame(s.start)..frame(s.end)]
            .iter_mut()
            .for_each(|v| *v = true);
    }
    let ids = by.keys().map(|s| s.to_string()).collect();
    (ids, by.into_values().collect())
}

/// The one-to-one mapping (reference → hypothesis or none) with the most overlap:
/// dynamic programming over the set of hypothesis speakers already taken.
fn best_mapping(overlap: &[Vec<usize>], hyps: usize) -> Vec<Option<usize>> {
    let hyps = hyps.min(16);
    let states = 1usize << hyps;
    // best[r][mask]: the most overlap for references r.. given hypotheses `mask` taken.
    let mut best = vec![vec![0usize; states]; overlap.len() + 1];
    for r in (0..overlap.len()).rev() {
        for mask in 0..states {
            let mut v = best[r + 1][mask];
            for h in 0..hyps {
                if mask & (1 << h) == 0 {
                    v = v.max(overlap[r][h] + best[r + 1][mask | (1 << h)]);
                }
            }
            best[r][mask] = v;
        }
    }
    let mut mapping = Vec::with_capacity(overlap.len());
    let mut mask = 0;
    for r in 0..overlap.len() {
        let mut choice = None;
        if best[r][mask] != best[r + 1][mask] {
            for h in 0..hyps {
                if mask & (1 << h) == 0
                    && overlap[r][h] + best[r + 1][mask | (1 << h)] == best[r][mask]
                {
                    choice = Some(h);
                    break;
                }
            }
        }
        if let Some(h) = choice {
            mask |= 1 << h;
        }
        mapping.push(choice);
    }
    mapping
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(start: f64, end: f64, speaker: &str) -> Segment {
        Segment {
            start,
            end,
            speaker: speaker.into(),
        }
    }

    #[test]
    fn relabelled_hypothesis_scores_zero() {
        let r = [seg(0.0, 2.0, "a"), seg(2.0, 5.0, "b")];
        let h = [seg(0.0, 2.0, "x"), seg(2.0, 5.0, "y")];
        assert!(der(&r, &h, 0.0).der < 1e-9);
    }

    #[test]
    fn each_error_kind_is_counted() {
        let r = [seg(0.0, 4.0, "a"), seg(4.0, 8.0, "b")];
        // 1 s missed (b ends early), 1 s false alarm, 2 s of b given to a.
        let h = [seg(0.0, 6.0, "x"), seg(6.0, 7.0, "y"), seg(8.0, 9.0, "y")];
        let d = der(&r, &h, 0.0);
        assert!((d.missed - 1.0).abs() < 0.02, "{d:?}");
        assert!((d.false_alarm - 1.0).abs() < 0.02, "{d:?}");
        assert!((d.confusion - 2.0).abs() < 0.02, "{d:?}");
        assert!((d.der - 0.5).abs() < 0.01, "{d:?}");
    }

    #[test]
    fn rttm_lines_become_segments() {
        let s = parse_rttm("SPEAKER sample 1 6.690 0.430 <NA> <NA> speaker90 <NA> <NA>\n");
        assert_eq!(s, vec![seg(6.69, 7.12, "speaker90")]);
    }
}
