//! The diarization pipeline, in order: sliding windows → local speakers per window
//! (segmentation) → one embedding per local speaker → clustering across the recording →
//! per-frame global speakers → turns.
//!
//! Memory: a window's audio is read from the caller's [`AudioSource`] (a slice, or a file
//! read where asked) and dropped after use; what is kept per window is its 589 activity
//! bytes and up to three 192-d embeddings, and per 16.9 ms frame one score per speaker —
//! about 30 MB for two hours, whatever the recording's length.

use crate::campplus::DIM;
use crate::cluster;
use crate::fbank::{Fbank, FRAME, HOP, MEL_BINS};
use crate::segmentation::{FRAMES, FRAME_CENTER0, FRAME_STEP, LOCAL_SPEAKERS, WINDOW_SAMPLES};
use crate::{AudioSource, DiarizeError, DiarizeOptions, SpeakerModels, SpeakerTurn};

const SAMPLE_RATE: f64 = 16_000.0;
/// Filterbank frames an embedding needs at least (0.2 s).
const MIN_EMBED_FRAMES: usize = 20;
/// Clean (non-overlapped) frames preferred for an embedding (0.5 s).
const MIN_CLEAN_FRAMES: usize = 50;
/// At most this many embeddings enter the O(n²) clustering; the rest join the nearest
/// centroid (bounds memory for long recordings: 3000² distances = 36 MB).
const MAX_CLUSTERED: usize = 3000;

/// One stretch of one local speaker in one window: the speaker's active frames from
/// `first` to `last` (gaps shorter than `SPLIT_GAP` bridged). The segmentation model can
/// give two similar voices taking turns the same local label; embedding each stretch on
/// its own lets the clustering separate them again.
struct Run {
    window: usize,
    speaker: usize,
    first: usize,
    last: usize,
    /// Normalised embedding, when the run is long enough for one.
    embedding: Option<Vec<f32>>,
    /// Filterbank frames the embedding was computed from.
    frames: usize,
}

/// A pause (in segmentation frames, 0.3 s) that splits a local speaker into runs.
const SPLIT_GAP: usize = 18;

struct Window {
    start: usize,
    activity: Vec<u8>,
}

pub(crate) fn run(
    models: &SpeakerModels,
    audio: &mut dyn AudioSource,
    opts: &DiarizeOptions,
    progress: &mut dyn FnMut(f32) -> bool,
) -> Result<Vec<SpeakerTurn>, DiarizeError> {
    opts.validate()?;
    if audio.is_empty() {
        return Ok(Vec::new());
    }
    let len = audio.len();
    let step = ((opts.step_s as f64 * SAMPLE_RATE) as usize).max(FRAME_STEP);
    let mut starts = vec![0usize];
    while starts.last().unwrap() + WINDOW_SAMPLES < len {
        starts.push(starts.last().unwrap() + step);
    }
    let threads = opts.threads.max(1).min(starts.len());
    let mut windows = Vec::with_capacity(starts.len());
    let mut runs = Vec::new();
    for (batch_no, batch) in starts.chunks(threads).enumerate() {
        // The batch's windows are read here, one after the other (a file is read in
        // order), and analysed in parallel.
        let clips: Vec<(Vec<f32>, usize)> = batch
            .iter()
            .map(|&start| {
                let real = WINDOW_SAMPLES.min(len - start);
                let mut clip = audio.read(start, real);
                clip.resize(WINDOW_SAMPLES, 0.0);
                (clip, real)
            })
            .collect();
        let results: Vec<(Vec<u8>, Vec<Run>)> = std::thread::scope(|s| {
            let handles: Vec<_> = clips
                .into_iter()
                .map(|(clip, real)| s.spawn(move || analyse_window(models, clip, real)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("window analysis panicked"))
                .collect()
        });
        for (i, (activity, window_runs)) in results.into_iter().enumerate() {
            let w = batch_no * threads + i;
            runs.extend(window_runs.into_iter().map(|r| Run { window: w, ..r }));
            windows.push(Window {
                start: starts[w],
                activity,
            });
        }
        if !progress(windows.len() as f32 / starts.len() as f32) {
            return Err(DiarizeError::Cancelled);
        }
    }
    tracing::debug!(
        windows = windows.len(),
        runs = runs.len(),
        "windows analysed"
    );
    let assignment = assign(&runs, opts);
    Ok(turns(&windows, &runs, &assignment, len, opts))
}

/// Segmentation and embeddings of one window (`audio`, a whole window of which the first
/// `real` samples are the recording's, the rest padding): its activity bytes and its runs
/// (window index left 0 for the caller to fill).
fn analyse_window(models: &SpeakerModels, audio: Vec<f32>, real: usize) -> (Vec<u8>, Vec<Run>) {
    let mut activity = models.segmentation.run(&audio);
    // Frames past the end of the recording are padding: nobody speaks there.
    let real_frames = frames_within(real);
    activity[real_frames..].iter_mut().for_each(|a| *a = 0);

    let feats = Fbank::new().compute(&audio[..real]);
    let n = feats.len() / MEL_BINS;
    // The segmentation frame each filterbank frame falls in.
    let seg_of: Vec<usize> = (0..n)
        .map(|f| {
            let center = (f * HOP + FRAME / 2) as f64;
            let i = ((center - FRAME_CENTER0 as f64) / FRAME_STEP as f64).round();
            (i.max(0.0) as usize).min(FRAMES - 1)
        })
        .collect();
    let mut runs = Vec::new();
    for k in 0..LOCAL_SPEAKERS {
        let bit = 1u8 << k;
        for (first, last) in stretches(&activity, bit) {
            let inside = |f: &usize| (first..=last).contains(&seg_of[*f]);
            let clean: Vec<usize> = (0..n)
                .filter(|f| inside(f) && activity[seg_of[*f]] == bit)
                .collect();
            let chosen = if clean.len() >= MIN_CLEAN_FRAMES {
                clean
            } else {
                (0..n)
                    .filter(|f| inside(f) && activity[seg_of[*f]] & bit != 0)
                    .collect()
            };
            let embedding =
                (chosen.len() >= MIN_EMBED_FRAMES).then(|| embed(models, &feats, &chosen));
            runs.push(Run {
                window: 0,
                speaker: k,
                first,
                last,
                embedding,
                frames: chosen.len(),
            });
        }
    }
    (activity, runs)
}

/// The (first, last) frames of each stretch where `bit` is set, short gaps bridged.
fn stretches(activity: &[u8], bit: u8) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, a) in activity.iter().enumerate() {
        if a & bit == 0 {
            continue;
        }
        match out.last_mut() {
            Some((_, last)) if i - *last <= SPLIT_GAP => *last = i,
            _ => out.push((i, i)),
        }
    }
    out
}

/// The normalised CAM++ embedding of the chosen filterbank frames.
fn embed(models: &SpeakerModels, feats: &[f32], chosen: &[usize]) -> Vec<f32> {
    let mut x = Vec::with_capacity(chosen.len() * MEL_BINS);
    for &f in chosen {
        x.extend_from_slice(&feats[f * MEL_BINS..(f + 1) * MEL_BINS]);
    }
    // Mean normalisation over the frames used (as CAM++ was trained).
    let mut mean = [0.0f32; MEL_BINS];
    for row in x.chunks(MEL_BINS) {
        mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
    }
    mean.iter_mut().for_each(|m| *m /= chosen.len() as f32);
    for row in x.chunks_mut(MEL_BINS) {
        row.iter_mut().zip(&mean).for_each(|(v, m)| *v -= m);
    }
    let e = models.embedding.embed(&x, chosen.len());
    debug_assert_eq!(e.len(), DIM);
    cluster::normalized(&e)
}

/// Segmentation frames whose centre lies within `samples` samples.
fn frames_within(samples: usize) -> usize {
    if samples <= FRAME_CENTER0 {
        0
    } else {
        ((samples - FRAME_CENTER0 - 1) / FRAME_STEP + 1).min(FRAMES)
    }
}

/// A global speaker for each run (same order as `runs`).
fn assign(runs: &[Run], opts: &DiarizeOptions) -> Vec<usize> {
    let embedded: Vec<usize> = (0..runs.len())
        .filter(|&i| runs[i].embedding.is_some())
        .collect();
    if embedded.is_empty() {
        return vec![0; runs.len()];
    }
    // Long, clean embeddings decide the clusters; short ones only join them.
    let mut reliable: Vec<usize> = embedded
        .iter()
        .copied()
        .filter(|&i| runs[i].frames >= opts.min_cluster_frames)
        .collect();
    if reliable.len() < 2 {
        reliable = embedded.clone();
    }
    if reliable.len() > MAX_CLUSTERED {
        let stride = reliable.len() as f64 / MAX_CLUSTERED as f64;
        reliable = (0..MAX_CLUSTERED)
            .map(|i| reliable[(i as f64 * stride) as usize])
            .collect();
    }
    let items: Vec<Vec<f32>> = reliable
        .iter()
        .map(|&i| runs[i].embedding.clone().unwrap_or_default())
        .collect();
    let labels = cluster::agglomerate(
        &items,
        opts.threshold,
        opts.min_speakers.unwrap_or(1),
        opts.max_speakers.unwrap_or(usize::MAX),
    );
    let k = labels.iter().max().map_or(0, |m| m + 1);
    let mut centroids = vec![vec![0.0f32; DIM]; k];
    for (item, &l) in items.iter().zip(&labels) {
        centroids[l].iter_mut().zip(item).for_each(|(c, v)| *c += v);
    }
    let centroids: Vec<Vec<f32>> = centroids.iter().map(|c| cluster::normalized(c)).collect();
    tracing::debug!(clusters = k, clustered = items.len(), "clustering done");

    let mut result: Vec<Option<usize>> = vec![None; runs.len()];
    let mut i = 0;
    while i < runs.len() {
        let w = runs[i].window;
        let mut j = i;
        while j < runs.len() && runs[j].window == w {
            j += 1;
        }
        assign_window(&runs[i..j], &centroids, &mut result[i..j]);
        i = j;
    }
    result.into_iter().map(|r| r.unwrap_or(0)).collect()
}

/// Assigns one window's runs: longest first, each to its most similar centroid that no
/// overlapping run of another local speaker took (two voices at once are two people);
/// runs too short for an embedding follow the nearest embedded run of their speaker.
fn assign_window(runs: &[Run], centroids: &[Vec<f32>], out: &mut [Option<usize>]) {
    let mut order: Vec<usize> = (0..runs.len())
        .filter(|&r| runs[r].embedding.is_some())
        .collect();
    order.sort_by_key(|&r| std::cmp::Reverse(runs[r].frames));
    for &r in &order {
        let e = runs[r].embedding.as_deref().unwrap_or_default();
        let taken: Vec<usize> = (0..runs.len())
            .filter(|&o| {
                runs[o].speaker != runs[r].speaker
                    && runs[o].first <= runs[r].last
                    && runs[r].first <= runs[o].last
            })
            .filter_map(|o| out[o])
            .collect();
        let best = (0..centroids.len())
            .filter(|c| !taken.contains(c) || taken.len() >= centroids.len())
            .max_by(|&a, &b| {
                cluster::cosine(e, &centroids[a]).total_cmp(&cluster::cosine(e, &centroids[b]))
            });
        out[r] = best;
    }
    for r in 0..runs.len() {
        if out[r].is_some() {
            continue;
        }
        let gap = |o: usize| {
            runs[o]
                .first
                .abs_diff(runs[r].first)
                .min(runs[o].last.abs_diff(runs[r].last))
        };
        out[r] = (0..runs.len())
            .filter(|&o| runs[o].speaker == runs[r].speaker && runs[o].embedding.is_some())
            .min_by_key(|&o| gap(o))
            .and_then(|o| out[o]);
    }
}

/// Global per-frame activity from the windows' local activity and the assignment, then
/// turns: each frame keeps as many speakers as the windows over it counted on average.
fn turns(
    windows: &[Window],
    runs: &[Run],
    assignment: &[usize],
    samples: usize,
    opts: &DiarizeOptions,
) -> Vec<SpeakerTurn> {
    let k = assignment.iter().max().map_or(0, |m| m + 1);
    if k == 0 {
        return Vec::new();
    }
    let total = frames_within(samples).max(1) + samples / FRAME_STEP;
    let mut score = vec![0.0f32; total * k];
    let mut cover = vec![0u16; total];
    let mut count = vec![0.0f32; total];
    // Per window, (local speaker, first frame, last frame, global speaker) of its runs.
    let mut by_window: Vec<Vec<(usize, usize, usize, usize)>> = vec![Vec::new(); windows.len()];
    for (r, &g) in runs.iter().zip(assignment) {
        by_window[r.window].push((r.speaker, r.first, r.last, g));
    }
    let mut last = 0;
    for (w, win) in windows.iter().enumerate() {
        let base = (win.start as f64 / FRAME_STEP as f64).round() as usize;
        let real = frames_within(samples - win.start.min(samples));
        for (i, &a) in win.activity.iter().enumerate().take(real) {
            let j = base + i;
            if j >= total {
                break;
            }
            last = last.max(j);
            cover[j] += 1;
            count[j] += a.count_ones() as f32;
            let mut seen: [Option<usize>; LOCAL_SPEAKERS] = [None; LOCAL_SPEAKERS];
            for &(s, first, end, g) in &by_window[w] {
                if a & (1 << s) != 0 && (first..=end).contains(&i) && !seen.contains(&Some(g)) {
                    seen[s] = Some(g);
                    score[j * k + g] += 1.0;
                }
            }
        }
    }
    // Binary activity per global speaker and frame.
    let frames = last + 1;
    let mut active = vec![false; frames * k];
    let mut order: Vec<usize> = (0..k).collect();
    for j in 0..frames {
        if cover[j] == 0 {
            continue;
        }
        let n = (count[j] / cover[j] as f32).round() as usize;
        let row = &score[j * k..(j + 1) * k];
        order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
        for &g in order.iter().take(n) {
            if row[g] > 0.0 {
                active[j * k + g] = true;
            }
        }
    }
    let frame_s = FRAME_STEP as f64 / SAMPLE_RATE;
    let center = |j: usize| (FRAME_CENTER0 + j * FRAME_STEP) as f64 / SAMPLE_RATE;
    let duration = samples as f64 / SAMPLE_RATE;
    let mut turns = Vec::new();
    for g in 0..k {
        let mut j = 0;
        let mut current: Option<(f64, f64)> = None;
        while j < frames {
            if active[j * k + g] {
                let s = (center(j) - frame_s / 2.0).max(0.0);
                let mut e = j;
                while e + 1 < frames && active[(e + 1) * k + g] {
                    e += 1;
                }
                let end = (center(e) + frame_s / 2.0).min(duration);
                current = match current {
                    Some((cs, ce)) if s - ce < opts.min_gap_s as f64 => Some((cs, end)),
                    Some(done) => {
                        turns.push((done, g));
                        Some((s, end))
                    }
                    None => Some((s, end)),
                };
                j = e + 1;
            } else {
                j += 1;
            }
        }
        if let Some(done) = current {
            turns.push((done, g));
        }
    }
    turns.retain(|((s, e), _)| e - s >= opts.min_turn_s as f64);
    // Speakers numbered by first appearance.
    turns.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0));
    let mut names = vec![usize::MAX; k];
    let mut next = 0;
    turns
        .into_iter()
        .map(|((start_s, end_s), g)| {
            if names[g] == usize::MAX {
                names[g] = next;
                next += 1;
            }
            SpeakerTurn {
                start_s,
                end_s,
                speaker: names[g],
            }
        })
        .collect()
}
