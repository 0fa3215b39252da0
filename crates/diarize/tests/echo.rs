//! The loudspeaker heard by the microphone, with real voices: the call of pyannote's sample
//! as the system audio, the LibriVox reader as the user, the echo 10 dB under the user's
//! voice, 75 ms late and with a few room reflections.

mod common;

use std::path::Path;

use utter_diarize::echo::{loudspeaker_spans, EchoOptions};

const RATE: usize = 16000;

fn rms(x: &[f32]) -> f32 {
    (x.iter().map(|v| v * v).sum::<f32>() / x.len().max(1) as f32).sqrt()
}

fn scaled(x: &[f32], target_rms: f32) -> Vec<f32> {
    let r = rms(x).max(1e-9);
    x.iter().map(|v| v * target_rms / r).collect()
}

#[test]
fn the_loudspeaker_is_found_and_the_user_is_not() {
    let (call, reference) = common::sample();
    // System audio: the call from 6.5 s (where its speech starts), 23.5 s of it.
    let offset = 6.5;
    let system_speech = scaled(&call[(offset * RATE as f64) as usize..], 0.05);
    let total = 40 * RATE;
    let mut system = vec![0.0f32; total];
    system[..system_speech.len()].copy_from_slice(&system_speech);

    // The user: one LibriVox clip over the call (double talk), two more after it.
    let clip = |n: &str| {
        let wav = Path::new(common::LIBRIVOX)
            .join(format!("sense_and_sensibility_01_austen_64kb-{n}.wav"));
        scaled(common::trim(&common::load_wav(&wav)), 0.05)
    };
    let mut user = vec![0.0f32; total];
    let mut user_spans = Vec::new();
    for (at, name) in [(10.0, "0870"), (25.0, "0880"), (31.0, "0890")] {
        let c = clip(name);
        let s = (at * RATE as f64) as usize;
        user[s..s + c.len()].copy_from_slice(&c);
        user_spans.push((at, at + c.len() as f64 / RATE as f64));
    }

    // Microphone: the user plus the loudspeaker through a small room, 10 dB down.
    let delay = 1200; // 75 ms
    let reflections = [(0usize, 1.0f32), (48, 0.35), (112, 0.2), (208, 0.1)];
    let gain = 10f32.powf(-10.0 / 20.0);
    let mut echo = vec![0.0f32; total];
    for (t, e) in echo.iter_mut().enumerate() {
        for &(d, g) in &reflections {
            if let Some(s) = t.checked_sub(delay + d) {
                *e += g * system[s];
            }
        }
    }
    let echo = {
        let speech_rms = rms(&echo[delay..delay + system_speech.len()]);
        let k = gain * 0.05 / speech_rms;
        echo.iter().map(|v| v * k).collect::<Vec<_>>()
    };
    let mut noise_state = 7u32;
    let mic: Vec<f32> = (0..total)
        .map(|t| {
            noise_state = noise_state
                .wrapping_mul(1_664_525)
                .wrapping_add(1_013_904_223);
            let n = ((noise_state >> 8) as f32 / (1u32 << 24) as f32 - 0.5) * 2e-4;
            user[t] + echo[t] + n
        })
        .collect();

    let spans = loudspeaker_spans(&mic, &system, &EchoOptions::default());
    let flagged = |t: f64| spans.iter().any(|&(s, e)| s <= t && t < e);
    let in_user = |t: f64| user_spans.iter().any(|&(s, e)| s <= t && t < e);
    let echo_delay = delay as f64 / RATE as f64;
    let in_call = |t: f64| {
        let c = t - echo_delay + offset;
        reference.iter().any(|r| r.start <= c && c < r.end)
    };
    // 10 ms steps: the loudspeaker alone (and audible), and the user (alone or over it).
    let (mut call_only, mut call_found, mut user_total, mut user_flagged) = (0, 0, 0, 0);
    for i in 0..total / 160 {
        let t = i as f64 * 0.01;
        let audible = rms(&echo[i * 160..(i + 1) * 160]) > 10f32.powf(-50.0 / 20.0);
        // The user voicing (not the pauses between words inside a clip, where the
        // loudspeaker can be alone).
        let voicing = in_user(t) && rms(&user[i * 160..(i + 1) * 160]) > 0.01;
        if voicing {
            user_total += 1;
            user_flagged += flagged(t) as usize;
        } else if !in_user(t) && in_call(t) && audible {
            call_only += 1;
            call_found += flagged(t) as usize;
        }
    }
    let recall = call_found as f64 / call_only as f64;
    let wrong = user_flagged as f64 / user_total as f64;
    println!(
        "loudspeaker-only speech found: {:.1} % of {:.1} s; user speech taken for the loudspeaker: {:.1} % of {:.1} s",
        recall * 100.0,
        call_only as f64 / 100.0,
        wrong * 100.0,
        user_total as f64 / 100.0
    );
    assert!(
        recall >= 0.85,
        "only {:.1} % of the loudspeaker-only speech found: {spans:?}",
        recall * 100.0
    );
    assert!(
        wrong <= 0.05,
        "{:.1} % of the user's speech flagged: {spans:?}",
        wrong * 100.0
    );
}

#[test]
fn without_system_sound_nothing_is_flagged() {
    let (call, _) = common::sample();
    let silence = vec![0.0f32; call.len()];
    assert!(loudspeaker_spans(&call, &silence, &EchoOptions::default()).is_empty());
}
