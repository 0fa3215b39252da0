//! The speech played into the microphone: the LibriVox clips and their
//! texts, fixtures made from them, and Debian's Asterisk voice prompts.

use std::path::{Path, PathBuf};

use super::x11::Desktop;
use crate::common::{self, wav_files, LIBRIVOX};

pub fn clip(i: usize) -> PathBuf {
    wav_files(Path::new(LIBRIVOX))[i].clone()
}

pub fn truth(i: usize) -> String {
    common::librivox_clips().swap_remove(i).1
}

pub fn clip_samples(i: usize) -> Vec<i16> {
    hound::WavReader::open(clip(i))
        .unwrap()
        .samples::<i16>()
        .map(Result::unwrap)
        .collect()
}

/// A 16 kHz mono fixture in the desktop's folder.
pub fn write_fixture(d: &Desktop, name: &str, pcm: &[i16]) -> PathBuf {
    let path = d.fixtures.join(name);
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for &s in pcm {
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
    path
}

/// Real speech as a person dictates it: LibriVox sentences with pauses of
/// 0.8 s between them and, in every other sentence, a 0.9 s pause at its
/// quietest point mid-sentence. Returns the file and its reference text.
pub fn speech_with_pauses(d: &Desktop, clips: &[usize]) -> (PathBuf, String) {
    let silence = |seconds: f64| vec![0i16; (seconds * 16_000.0) as usize];
    let mut pcm = silence(0.3);
    for (n, &i) in clips.iter().enumerate() {
        let clip = clip_samples(i);
        if n % 2 == 0 {
            // The quietest 40 ms between 30 % and 70 % of the sentence.
            let frame = 640;
            let cut = (clip.len() * 3 / 10..clip.len() * 7 / 10 - frame)
                .step_by(frame / 2)
                .min_by_key(|&s| {
                    clip[s..s + frame]
                        .iter()
                        .map(|x| x.unsigned_abs() as u64)
                        .sum::<u64>()
                })
                .unwrap()
                + frame / 2;
            pcm.extend_from_slice(&clip[..cut]);
            pcm.extend(silence(0.9));
            pcm.extend_from_slice(&clip[cut..]);
        } else {
            pcm.extend(clip);
        }
        pcm.extend(silence(0.8));
    }
    let name = clips.iter().map(|i| i.to_string()).collect::<String>();
    let path = write_fixture(d, &format!("pauses-{name}.wav"), &pcm);
    let reference: Vec<String> = clips.iter().map(|&i| truth(i)).collect();
    (path, reference.join(" "))
}

/// One of Debian's Asterisk voice prompts (`SOURCE` under
/// /usr/share/asterisk/sounds, G.722), as a 16 kHz mono WAV fixture named `name`.
pub fn asterisk_prompt(d: &Desktop, source: &str, name: &str) -> PathBuf {
    let wav = d.fixtures.join(name);
    utter_test_support::call::asterisk_prompt(source, &wav);
    wav
}

pub use utter_test_support::call::words as plain_words;
