//! A two-sided call made of real voices, for the meeting tests: Asterisk's
//! Allison is "the others" (played on the system output), the LibriVox reader
//! is "you" (played into the virtual microphone), taking turns. The others
//! speak at 0.5, 7.5 and 17.2 s, you at 4.0 and 13.7 s; nobody talks over
//! anybody. Needs ffmpeg, `asterisk-core-sounds-en-g722` and
//! `pocketsphinx-testdata` (npm test installs them).

use std::path::{Path, PathBuf};
use std::process::Command;

const RATE: usize = 16_000;
const ASTERISK_SOUNDS: &str = "/usr/share/asterisk/sounds";
const ALLISON: &str = "en_US_f_Allison";
const LIBRIVOX: &str = "/usr/share/pocketsphinx/test/data/librivox";

/// The two tracks (16 kHz mono WAVs of one length) and what each side says.
pub struct Call {
    pub others: PathBuf,
    pub mic: PathBuf,
    pub others_words: Vec<String>,
    pub your_words: Vec<String>,
    pub seconds: f64,
}

/// The words of `text`, lower case, without punctuation.
pub fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Writes the call's two tracks into `dir`. `echo_db`: the microphone also
/// hears the loudspeaker this much quieter (30 ms late), as without headphones.
pub fn two_sided_call(dir: &Path, echo_db: Option<f32>) -> Call {
    let at = |s: f64| (s * RATE as f64) as usize;
    let total = at(21.5);
    let mut others = vec![0i16; total];
    let mut mic = vec![0i16; total];
    let place = |track: &mut Vec<i16>, start: f64, pcm: &[i16]| {
        track[at(start)..at(start) + pcm.len()].copy_from_slice(pcm);
    };
    place(&mut others, 0.5, &prompt(dir, "vm-nobodyavail"));
    place(&mut others, 7.5, &prompt(dir, "vm-intro"));
    place(&mut others, 17.2, &prompt(dir, "conf-onlyperson"));
    let librivox = |n: &str| {
        read_wav(&Path::new(LIBRIVOX).join(format!("sense_and_sensibility_01_austen_64kb-{n}.wav")))
    };
    place(&mut mic, 4.0, &librivox("0880"));
    place(&mut mic, 13.7, &librivox("0930"));
    if let Some(db) = echo_db {
        let gain = 10f32.powf(db / 20.0);
        let delay = at(0.03);
        for i in delay..total {
            let mixed = f32::from(mic[i]) + f32::from(others[i - delay]) * gain;
            mic[i] = mixed.clamp(-32768.0, 32767.0) as i16;
        }
    }
    let (others_path, mic_path) = (dir.join("call-others.wav"), dir.join("call-mic.wav"));
    write_wav(&others_path, &others);
    write_wav(&mic_path, &mic);
    Call {
        others: others_path,
        mic: mic_path,
        others_words: words(
            "Nobody is available to take your call at the moment. Please leave your message after the tone, when done hang up or press the pound key. You are currently the only person in this conference.",
        ),
        your_words: words(
            "He was not an ill disposed young man. He might even have been made amiable himself.",
        ),
        seconds: total as f64 / RATE as f64,
    }
}

/// Allison's prompt `name`, decoded.
fn prompt(dir: &Path, name: &str) -> Vec<i16> {
    let wav = dir.join(format!("{name}.wav"));
    asterisk_prompt(&format!("{ALLISON}/{name}.g722"), &wav);
    read_wav(&wav)
}

/// Decodes one of Debian's Asterisk voice prompts (`source` under
/// /usr/share/asterisk/sounds, e.g. `en_US_f_Allison/vm-intro.g722`, G.722)
/// into `wav`, 16 kHz mono, with ffmpeg.
pub fn asterisk_prompt(source: &str, wav: &Path) {
    let src = Path::new(ASTERISK_SOUNDS).join(source);
    assert!(
        src.is_file(),
        "{} is missing: apt install asterisk-core-sounds-en-g722 asterisk-core-sounds-es-g722 \
         asterisk-core-sounds-fr-g722 (npm test does)",
        src.display()
    );
    let ok = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "g722", "-i"])
        .arg(&src)
        .args(["-ar", "16000", "-ac", "1"])
        .arg(wav)
        .status()
        .expect("ffmpeg is installed")
        .success();
    assert!(ok, "ffmpeg decodes {}", src.display());
}

/// The samples of a 16 kHz mono 16-bit PCM WAV.
fn read_wav(path: &Path) -> Vec<i16> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WAVE",
        "{}: not a WAV",
        path.display()
    );
    let mut at = 12;
    let (mut format_ok, mut data) = (false, None);
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        let body = &bytes[at + 8..(at + 8 + len).min(bytes.len())];
        if id == b"fmt " {
            let channels = u16::from_le_bytes([body[2], body[3]]);
            let rate = u32::from_le_bytes(body[4..8].try_into().unwrap());
            let bits = u16::from_le_bytes([body[14], body[15]]);
            format_ok = channels == 1 && rate as usize == RATE && bits == 16;
        } else if id == b"data" {
            data = Some(body);
        }
        at += 8 + len + len % 2;
    }
    assert!(format_ok, "{}: not 16 kHz mono 16-bit", path.display());
    data.expect("a data chunk")
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

fn write_wav(path: &Path, pcm: &[i16]) {
    let data_len = (pcm.len() * 2) as u32;
    let mut out = Vec::with_capacity(44 + pcm.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&(RATE as u32).to_le_bytes());
    out.extend_from_slice(&(RATE as u32 * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for s in pcm {
        out.extend_from_slice(&s.to_le_bytes());
    }
    std::fs::write(path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
