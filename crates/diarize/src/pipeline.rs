//! The diarization pipeline, in order: sliding windows → local speakers per window
//! (segmentation) → one embedding per local speaker → clustering across the recording →
//! per-frame global speakers → turns.
//!
//! Memory: a window's audio is read from the caller's slice and dropped after use; what
//! is kept per window is its 589 activity bytes and up to three 192-d embeddings, and per
//! 16.9 ms frame one score per speaker — about 30 MB for two hours.

use crate::campplus::DIM;
use crate::cluster;
use crate::fbank::{Fbank, FRAME, HOP, MEL_BINS};
use crate::segmentation::{FRAMES, FRAME_CENTER0, FRAME_STEP, LOCAL_SPEAKERS, WINDOW_SAMPLES};
use crate::{DiarizeError, DiarizeOptions, SpeakerModels, SpeakerTurn};

const SAMPLE_RATE: f64 = 16_000.0;
/// Filterbank frames an embedding needs at least (0.2 s).
const MIN_EMBED_FRAMES: usize = 20;
/// Clean (non-overlapped) frames preferred for an embedding (0.5 s).
const MIN_CLEAN_FRAMES: usize = 50;
/// At most this many embeddings enter the O(n²) clustering; the rest join the nearest
/// centroid (bounds memory for long recordings: 3000² distances = 36 MB).
const MAX_CLUSTERED: usize = 3000;

/// One local speaker of one window.
struct Local {
    window: usize,
    speaker: usize,
    embedding: Vec<f32>,
    /// Filterbank frames the embedding was computed from.
    frames: usize,
}

struct Window {
    start: usize,
    activity: Vec<u8>,
}

pub(crate) fn run(
    models: &SpeakerModels,
    pcm: &[f32],
    opts: &DiarizeOptions,
    progress: &mut dyn FnMut(f32) -> bool,
) -> Result<Vec<SpeakerTurn>, DiarizeError> {
    opts.validate()?;
    if pcm.is_empty() {
        return Ok(Vec::new());
    }
    let step = ((opts.step_s as f64 * SAMPLE_RATE) as usize).max(FRAME_STEP);
    let mut starts = vec![0usize];
    while starts.last().unwrap() + WINDOW_SAMPLES < pcm.len() {
        starts.push(starts.last().unwrap() + step);
    }
    let threads = opts.threads.max(1).min(starts.len());
    let mut windows = Vec::with_capacity(starts.len());
    let mut locals = Vec::new();
    for (batch_no, batch) in starts.chunks(threads).enumerate() {
        let results: Vec<(Vec<u8>, Vec<(usize, Vec<f32>, usize)>)> = std::thread::scope(|s| {
            let handles: Vec<_> = batch
                .iter()
                .map(|&start| s.spawn(move || analyse_window(models, pcm, start)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("window analysis panicked"))
                .collect()
        });
        for (i, (activity, speakers)) in results.into_iter().enumerate() {
            let w = batch_no * threads + i;
            for (speaker, embedding, frames) in speakers {
                locals.push(Local {
                    window: w,
                    speaker,
                    embedding,
                    frames,
                });
            }
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
        embeddings = locals.len(),
        "windows analysed"
    );
    let assignment = assign(&locals, &windows, opts);
    Ok(turns(&windows, &locals, &assignment, pcm.len(), opts))
}

/// Segmentation and embeddings of the window starting at `start`: its activity bytes and
/// (local speaker, normalised embedding, frames used) for each speaker with enough speech.
fn analyse_window(
    models: &SpeakerModels,
    pcm: &[f32],
    start: usize,
) -> (Vec<u8>, Vec<(usize, Vec<f32>, usize)>) {
    let end = (start + WINDOW_SAMPLES).min(pcm.len());
    let mut audio = pcm[start..end].to_vec();
    audio.resize(WINDOW_SAMPLES, 0.0);
    let activity = models.segmentation.run(&audio);
    // Frames past the end of the recording are padding: nobody speaks there.
    let real_frames = frames_within(end - start);
    let mut activity = activity;
    activity[real_frames..].iter_mut().for_each(|a| *a = 0);

    let feats = Fbank::new().compute(&audio[..end - start]);
    let n = feats.len() / MEL_BINS;
    // The segmentation frame each filterbank frame falls in.
    let seg_frame: Vec<u8> = (0..n)
        .map(|f| {
            let center = (f * HOP + FRAME / 2) as f64;
            let i = ((center - FRAME_CENTER0 as f64) / FRAME_STEP as f64).round();
            activity[(i.max(0.0) as usize).min(FRAMES - 1)]
        })
        .collect();
    let mut speakers = Vec::new();
    for k in 0..LOCAL_SPEAKERS {
        let bit = 1u8 << k;
        let clean: Vec<usize> = (0..n).filter(|&f| seg_frame[f] == bit).collect();
        let chosen = if clean.len() >= MIN_CLEAN_FRAMES {
            clean
        } else {
            (0..n).filter(|&f| seg_frame[f] & bit != 0).collect()
        };
        if chosen.len() < MIN_EMBED_FRAMES {
            continue;
        }
        let mut x = Vec::with_capacity(chosen.len() * MEL_BINS);
        for &f in &chosen {
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
        speakers.push((k, cluster::normalized(&e), chosen.len()));
    }
    (activity, speakers)
}

/// Segmentation frames whose centre lies within `samples` samples.
fn frames_within(samples: usize) -> usize {
    if samples <= FRAME_CENTER0 {
        0
    } else {
        ((samples - FRAME_CENTER0 - 1) / FRAME_STEP + 1).min(FRAMES)
    }
}

/// A global speaker for each local speaker (same order as `locals`).
fn assign(locals: &[Local], windows: &[Window], opts: &DiarizeOptions) -> Vec<usize> {
    if locals.is_empty() {
        return Vec::new();
    }
    // Long, clean embeddings decide the clusters; short ones only join them.
    let mut reliable: Vec<usize> = (0..locals.len())
        .filter(|&i| locals[i].frames >= opts.min_cluster_frames)
        .collect();
    if reliable.len() < 2 {
        reliable = (0..locals.len()).collect();
    }
    if reliable.len() > MAX_CLUSTERED {
        let stride = reliable.len() as f64 / MAX_CLUSTERED as f64;
        reliable = (0..MAX_CLUSTERED)
            .map(|i| reliable[(i as f64 * stride) as usize])
            .collect();
    }
    let items: Vec<Vec<f32>> = reliable
        .iter()
        .map(|&i| locals[i].embedding.clone())
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

    // Per window, the local speakers take distinct clusters that best match them.
    let mut result = vec![0usize; locals.len()];
    let mut i = 0;
    while i < locals.len() {
        let w = locals[i].window;
        let mut j = i;
        while j < locals.len() && locals[j].window == w {
            j += 1;
        }
        let sims: Vec<Vec<f32>> = locals[i..j]
            .iter()
            .map(|l| {
                centroids
                    .iter()
                    .map(|c| cluster::cosine(&l.embedding, c))
                    .collect()
            })
            .collect();
        for (slot, c) in best_distinct(&sims).into_iter().enumerate() {
            result[i + slot] = c;
        }
        i = j;
    }
    let _ = windows;
    result
}

/// For up to three rows of similarities, the distinct columns with the highest total
/// (exhaustive: at most k³ choices); columns repeat only when rows outnumber them.
fn best_distinct(sims: &[Vec<f32>]) -> Vec<usize> {
    let k = sims.first().map_or(0, Vec::len);
    let greedy = || -> Vec<usize> {
        sims.iter()
            .map(|row| {
                (0..k)
                    .max_by(|&a, &b| row[a].total_cmp(&row[b]))
                    .unwrap_or(0)
            })
            .collect()
    };
    if sims.len() > k {
        return greedy();
    }
    let mut best = (f32::NEG_INFINITY, greedy());
    let mut choice = vec![0usize; sims.len()];
    fn search(
        sims: &[Vec<f32>],
        k: usize,
        row: usize,
        choice: &mut Vec<usize>,
        total: f32,
        best: &mut (f32, Vec<usize>),
    ) {
        if row == sims.len() {
            if total > best.0 {
                *best = (total, choice.clone());
            }
            return;
        }
        for c in 0..k {
            if choice[..row].contains(&c) {
                continue;
            }
            choice[row] = c;
            search(sims, k, row + 1, choice, total + sims[row][c], best);
        }
    }
    search(sims, k, 0, &mut choice, 0.0, &mut best);
    best.1
}

/// Global per-frame activity from the windows' local activity and the assignment, then
/// turns: each frame keeps as many speakers as the windows over it counted on average.
fn turns(
    windows: &[Window],
    locals: &[Local],
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
    let mut local_to_global: Vec<[Option<usize>; LOCAL_SPEAKERS]> =
        vec![[None; LOCAL_SPEAKERS]; windows.len()];
    for (l, &g) in locals.iter().zip(assignment) {
        local_to_global[l.window][l.speaker] = Some(g);
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
            let mut seen = [false; 64];
            for (s, g) in local_to_global[w].iter().enumerate() {
                if let Some(g) = g {
                    if a & (1 << s) != 0 && !seen[*g % 64] {
                        seen[*g % 64] = true;
                        score[j * k + g] += 1.0;
                    }
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
