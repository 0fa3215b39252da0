//! `utter transcribe` end to end: the real binary, the real default models,
//! real speech converted by sox/ffmpeg into every supported format, and
//! every kind of bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use utter_core::text::{normalize_words, word_edit_distance};

const CLIP: &str =
    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav";
const CLIP2: &str =
    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0920.wav";

fn utter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(args)
        .output()
        .expect("utter runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ffmpeg(args: &[&str]) {
    run(Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y"])
        .args(args));
}

/// Fixtures generated once per test run from the real speech clip.
fn fixtures() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("utter-cli-fixtures-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
        run(Command::new("sox").args([CLIP, &p("speech.flac")]));
        run(Command::new("sox").args([CLIP, &p("speech.mp3")]));
        run(Command::new("sox").args([CLIP, &p("speech.ogg")]));
        run(Command::new("sox").args([
            CLIP,
            "-r",
            "44100",
            "-c",
            "2",
            &p("speech-44k1-stereo.wav"),
        ]));
        ffmpeg(&["-i", CLIP, "-c:a", "libopus", &p("speech.opus")]);
        ffmpeg(&["-i", CLIP, "-c:a", "aac", &p("speech.m4a")]);
        let video = ["-f", "lavfi", "-i", "color=c=black:s=64x64:r=10"];
        for (name, codecs) in [
            ("speech.mp4", ["-c:v", "mpeg4", "-c:a", "aac"]),
            ("speech.mkv", ["-c:v", "mpeg4", "-c:a", "libopus"]),
            ("speech.webm", ["-c:v", "libvpx", "-c:a", "libvorbis"]),
        ] {
            let mut args: Vec<&str> = video.to_vec();
            let out = p(name);
            args.extend(["-i", CLIP, "-shortest"]);
            args.extend(codecs);
            args.push(&out);
            ffmpeg(&args);
        }
        // Bad inputs.
        std::fs::write(dir.join("empty.wav"), b"").unwrap();
        std::fs::write(dir.join("notes.wav"), b"this is a text file, not audio\n").unwrap();
        let wav = std::fs::read(CLIP).unwrap();
        std::fs::write(dir.join("truncated.wav"), &wav[..wav.len() * 45 / 100]).unwrap();
        let mut garbage = wav[..44].to_vec(); // a WAV header, then noise bytes
        garbage.extend((0..50_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
        std::fs::write(dir.join("random.mp3"), &garbage[44..]).unwrap();
        ffmpeg(&["-i", CLIP, "-c:a", "ac3", &p("ac3-audio.mp4")]);
        // A WebM cut off just before its Cues, which its SeekHead still
        // points to: symphonia's MKV demuxer panics on it (symphonia-format-mkv
        // 0.5.5, "EBML header must be read before calling this function").
        let webm = std::fs::read(dir.join("speech.webm")).unwrap();
        let cues = webm
            .windows(4)
            .rposition(|w| w == [0x1C, 0x53, 0xBB, 0x6B])
            .expect("the WebM has Cues");
        std::fs::write(dir.join("cues-cut.webm"), &webm[..cues]).unwrap();
        run(Command::new("sox").args([
            "-n",
            "-r",
            "16000",
            "-c",
            "1",
            &p("silence.wav"),
            "trim",
            "0",
            "6",
        ]));
        dir
    })
}

fn fixture(name: &str) -> String {
    fixtures().join(name).to_string_lossy().into_owned()
}

fn transcript_of(path: &str) -> String {
    let out = utter(&["transcribe", path]);
    assert!(out.status.success(), "{path}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn every_supported_format_matches_the_wav_transcript_within_one_word() {
    let reference = normalize_words(&transcript_of(CLIP));
    assert!(reference.len() > 15, "{reference:?}");
    for name in [
        "speech.flac",
        "speech.mp3",
        "speech.ogg",
        "speech.opus",
        "speech.m4a",
        "speech.mp4",
        "speech.mkv",
        "speech.webm",
        "speech-44k1-stereo.wav",
    ] {
        let got = normalize_words(&transcript_of(&fixture(name)));
        let distance = word_edit_distance(&reference, &got);
        assert!(
            distance <= 1,
            "{name}: {distance} word errors: {got:?} vs {reference:?}"
        );
    }
}

#[test]
fn each_bad_input_gets_a_one_line_error_and_the_good_file_is_still_transcribed() {
    let cases = [
        (fixture("missing.wav"), "file not found"),
        (fixture("empty.wav"), "file is empty"),
        (fixture("notes.wav"), "not a recognised audio or video file"),
        (
            fixture("random.mp3"),
            "not a recognised audio or video file",
        ),
        (fixture("ac3-audio.mp4"), "unsupported codec"),
        (fixture("cues-cut.webm"), "the decoder gave up on it"),
        // A folder is called a folder (issue 64), a device is not read.
        (
            fixtures().to_string_lossy().into_owned(),
            "is a folder, not a file",
        ),
        ("/dev/zero".to_string(), "is not a regular file"),
    ];
    for (path, message) in &cases {
        let out = utter(&["transcribe", path, CLIP2]);
        assert_eq!(out.status.code(), Some(1), "{path}");
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{path}: {err}");
        assert!(!err.contains("panicked"), "{path}: {err}");
        assert!(lines[0].contains(path.as_str()), "names the file: {err}");
        assert!(
            lines[0].contains(message),
            "{path}: expected `{message}` in {err}"
        );
        assert!(
            stdout(&out).contains("respectable"),
            "the good file is transcribed: {}",
            stdout(&out)
        );
    }
}

#[test]
fn a_truncated_file_is_an_error_but_its_decoded_part_is_kept() {
    let out = utter(&["transcribe", &fixture("truncated.wav")]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("truncated.wav: file is truncated: only 3.2 s of its 7.1 s"),
        "{err}"
    );
    assert!(
        stdout(&out).contains("Dashwood"),
        "partial transcript: {}",
        stdout(&out)
    );
}

#[test]
fn silence_gives_an_empty_transcript_not_an_error() {
    let out = utter(&["transcribe", &fixture("silence.wav")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "");
    let out = utter(&["transcribe", "--format", "json", &fixture("silence.wav")]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["segments"].as_array().unwrap().len(), 0);
    assert_eq!(v["duration_ms"], 6000);
}

/// Issue 16: `--compute` picks where the model runs; the JSON says where it
/// ran, and a device this machine does not have is an error naming those it has.
#[test]
fn compute_names_the_device_and_an_unknown_one_lists_the_devices_there_are() {
    let out = utter(&["transcribe", "--compute", "cpu", "--format", "json", CLIP]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["backend"], "cpu");
    let device = json["device"].as_str().unwrap_or_default();
    assert!(device.starts_with("CPU: "), "{device}");

    let out = utter(&["transcribe", "--compute", "NoSuchGpu7", CLIP]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("no compute device `NoSuchGpu7`") && err.contains("CPU"),
        "{err}"
    );
    assert!(
        stdout(&out).is_empty(),
        "no transcript from a device that is not there"
    );
}

#[test]
fn a_missing_model_says_how_to_install_one() {
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["transcribe", CLIP])
        .env("UTTER_MODELS_DIR", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains("no speech model installed") && err.contains("utter models install-default"),
        "{err}"
    );
    let out = utter(&["transcribe", "--model", "whisper-huge", CLIP]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains("model `whisper-huge` is not installed")
            && err.contains("`utter models list --available` shows the models there are"),
        "{err}"
    );
    // A catalog model: the hint is the command that downloads that model.
    let out = utter(&["transcribe", "--model", "parakeet-tdt-0.6b-v3", CLIP]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains("hint: install it with `utter models download parakeet-tdt-0.6b-v3`"),
        "{err}"
    );
}

/// Parses SRT or VTT cues into (index, start ms, end ms, text).
fn parse_cues(text: &str, vtt: bool) -> Vec<(usize, i64, i64, String)> {
    let body = if vtt {
        text.strip_prefix("WEBVTT\n\n").expect("WEBVTT header")
    } else {
        text
    };
    let ms = |t: &str| -> i64 {
        let t = t.replace(',', ".");
        let (hms, milli) = t.split_once('.').expect("millis");
        let parts: Vec<i64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
        ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 + milli.parse::<i64>().unwrap()
    };
    body.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .enumerate()
        .map(|(i, block)| {
            let mut lines = block.lines();
            let index = if vtt {
                i + 1
            } else {
                lines.next().unwrap().parse().unwrap()
            };
            let (a, b) = lines
                .next()
                .unwrap()
                .split_once(" --> ")
                .expect("timing line");
            (index, ms(a), ms(b), lines.collect::<Vec<_>>().join(" "))
        })
        .collect()
}

#[test]
fn srt_and_vtt_files_parse_back_monotonic_and_non_overlapping() {
    let dir = tempfile::tempdir().unwrap();
    // Two clips with a long pause between them, so there are several cues.
    let joined = dir.path().join("joined.wav");
    run(Command::new("sh").arg("-c").arg(format!(
        "sox {CLIP} -p pad 0 4 | sox - {CLIP2} {}",
        joined.display()
    )));
    let out_dir = dir.path().join("out");
    // A trailing `/`: a folder, though one input alone would write a file.
    let out_arg = format!("{}/", out_dir.display());
    for format in ["srt", "vtt"] {
        let out = utter(&[
            "transcribe",
            "--format",
            format,
            "--output",
            &out_arg,
            joined.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = std::fs::read_to_string(out_dir.join(format!("joined.{format}"))).unwrap();
        let cues = parse_cues(&text, format == "vtt");
        assert!(cues.len() >= 2, "{text}");
        for (i, cue) in cues.iter().enumerate() {
            assert_eq!(cue.0, i + 1, "indices count from 1");
            assert!(cue.1 < cue.2, "cue {i} has positive length: {text}");
            if i > 0 {
                assert!(cue.1 >= cues[i - 1].2, "no overlap: {text}");
            }
        }
        // The second clip starts after 7.1 s of speech + 4 s of silence.
        let respectable = cues
            .iter()
            .find(|c| c.3.contains("respectable"))
            .expect("second clip");
        assert!(
            respectable.1 >= 10_500 && respectable.2 <= 18_500,
            "{respectable:?}"
        );
    }
}

/// Two inputs of one name write two files (issue 64: the second
/// overwrote the first), and names that would still clash are refused
/// before anything is transcribed.
#[test]
fn two_inputs_of_one_name_write_two_outputs() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = utter(&[
        "transcribe",
        &fixture("speech.m4a"),
        &fixture("speech.webm"),
        "-f",
        "srt",
        "-o",
        out_dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    for name in ["speech.m4a.srt", "speech.webm.srt"] {
        let srt = std::fs::read_to_string(out_dir.path().join(name)).unwrap();
        assert!(srt.contains(" --> "), "{name}: {srt}");
    }
    let wav = CLIP;
    let twice = utter(&[
        "transcribe",
        wav,
        wav,
        "-o",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(twice.status.code(), Some(2), "{}", stderr(&twice));
    assert!(
        stderr(&twice).contains("would both be written to"),
        "{}",
        stderr(&twice)
    );

    // One input, `-o FILE`: that file (its folder made), as `utter meeting -o` does.
    let file = out_dir.path().join("new/talk.srt");
    let out = utter(&["transcribe", wav, "-f", "srt", "-o", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&file).unwrap().contains(" --> "));
    // Several inputs and `-o` an existing file: refused before any work, the file untouched.
    let before = std::fs::read(&file).unwrap();
    let out = utter(&["transcribe", wav, CLIP2, "-o", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is a file, and 2 inputs need a folder"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn json_carries_segments_times_and_the_model() {
    let out = utter(&["transcribe", "-f", "json", CLIP2]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["model"], "whisper-tiny.en");
    let segs = v["segments"].as_array().unwrap();
    assert!(!segs.is_empty());
    assert!(segs[0]["start_ms"].as_i64().unwrap() >= 0);
    assert!(segs.last().unwrap()["end_ms"].as_i64().unwrap() <= v["duration_ms"].as_i64().unwrap());
    assert!(v["text"].as_str().unwrap().contains("respectable"));
}

#[test]
fn no_vad_fixed_windows_give_the_same_words() {
    let with_vad = normalize_words(&transcript_of(CLIP2));
    let out = utter(&["transcribe", "--no-vad", CLIP2]);
    assert!(out.status.success());
    let without = normalize_words(&stdout(&out));
    assert!(
        word_edit_distance(&with_vad, &without) <= 1,
        "{with_vad:?} vs {without:?}"
    );
}

#[test]
fn languages_and_translation_are_checked_against_the_model() {
    let out = utter(&["transcribe", "--language", "de", CLIP2]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("does not support language `de` (it supports: en)"),
        "{}",
        stderr(&out)
    );
    let out = utter(&["transcribe", "--translate", CLIP2]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot translate"),
        "{}",
        stderr(&out)
    );
    let out = utter(&["transcribe", "--language", "en", CLIP2]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A model without timestamps (Moonshine) still gets subtitles: one cue per
/// run, timed by the speech spans the VAD found, each span its own run.
#[test]
fn a_model_without_timestamps_gets_cues_from_the_speech_spans() {
    let dir = tempfile::tempdir().unwrap();
    let joined = dir.path().join("joined.wav");
    run(Command::new("sh").arg("-c").arg(format!(
        "sox {CLIP} -p pad 0 4 | sox - {CLIP2} {}",
        joined.display()
    )));
    // Every timestamp-less model installed here (moonshine-base-en is the
    // dictation default on 2–4 cores).
    for model in ["moonshine-tiny-en", "moonshine-base-en"] {
        let out = utter(&[
            "transcribe",
            "--model",
            model,
            "--format",
            "srt",
            joined.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{model}: {}", stderr(&out));
        let text = stdout(&out);
        // Subtitle lines: at most two of at most 42 characters per cue.
        for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
            let lines: Vec<&str> = block.lines().skip(2).collect();
            assert!(
                (1..=2).contains(&lines.len()) && lines.iter().all(|l| l.chars().count() <= 42),
                "{model}: {block}"
            );
        }
        let cues = parse_cues(&text, false);
        assert!(cues.len() >= 2, "one cue per speech span: {text}");
        for (i, cue) in cues.iter().enumerate() {
            assert!(cue.1 < cue.2, "cue {i} has positive length: {text}");
            if i > 0 {
                assert!(cue.1 >= cues[i - 1].2, "no overlap: {text}");
            }
            // Moonshine gives no times (one segment at 0–0): each cue must still
            // last as long as its words take to say (issue 64: cues were 1 ms),
            // and no longer than a subtitle may.
            let words = cue.3.split_whitespace().count() as i64;
            assert!(
                cue.2 - cue.1 >= words * 150,
                "cue {i} too short for {words} words: {text}"
            );
            assert!(cue.2 - cue.1 <= 7_000, "cue {i} longer than 7 s: {text}");
            // Inside the speech: the first clip (0–7.1 s) or the second (from 11.1 s).
            let in_speech = |t: i64| t <= 7_400 || t >= 10_800;
            assert!(
                in_speech(cue.1) && in_speech(cue.2),
                "cue {i} outside the speech: {text}"
            );
            assert!(
                cue.1 > 7_400 || cue.2 < 10_800,
                "cue {i} spans the pause: {text}"
            );
        }
        // The first clip is 7.1 s long; the second starts 4 s after it.
        assert!(cues[0].2 <= 8_000, "{:?}", cues[0]);
        let respectable = cues
            .iter()
            .find(|c| c.3.contains("respectable"))
            .expect("second clip");
        assert!(respectable.1 >= 10_500, "{respectable:?}");
    }
}

#[test]
fn moonshine_refuses_another_language_and_translation() {
    let out = utter(&[
        "transcribe",
        "--model",
        "moonshine-tiny-en",
        "--language",
        "fr",
        CLIP2,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("does not support language `fr` (it supports: en)"),
        "{}",
        stderr(&out)
    );
    let out = utter(&[
        "transcribe",
        "--model",
        "moonshine-tiny-en",
        "--translate",
        CLIP2,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot translate"),
        "{}",
        stderr(&out)
    );
}

/// Issue 14 on the command line: a vocabulary word the model mishears
/// without it, a replacement, and a vocabulary file with a comment.
#[test]
fn vocabulary_and_replacements_shape_the_transcript() {
    let clip =
        "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav";
    let plain = utter(&["transcribe", clip]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(
        !stdout(&plain).contains("ill-disposed"),
        "{}",
        stdout(&plain)
    );

    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("words.txt");
    std::fs::write(&words, "# my words\nill-disposed\n\nDashwood\n").unwrap();
    let out = utter(&[
        "transcribe",
        clip,
        "--vocab-file",
        words.to_str().unwrap(),
        "--replace",
        "young man=young fellow",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "He was not an ill-disposed young fellow."
    );

    let dictation_only = utter(&["transcribe", clip, "--spoken-punctuation"]);
    assert_eq!(dictation_only.status.code(), Some(2));
    assert!(
        stderr(&dictation_only).contains("--spoken-punctuation only apply to dictation"),
        "{}",
        stderr(&dictation_only)
    );
    let bad = utter(&["transcribe", clip, "--replace", "no equals sign"]);
    assert_eq!(bad.status.code(), Some(2), "a usage error, as documented");
    assert!(
        stderr(&bad).contains("expected HEARD=WRITTEN"),
        "{}",
        stderr(&bad)
    );
    let missing = utter(&["transcribe", clip, "--vocab-file", "/nonexistent/words.txt"]);
    assert!(
        stderr(&missing).contains("cannot read the vocabulary file"),
        "{}",
        stderr(&missing)
    );
}
