//! Diarization of real recordings with the real weights (scripts/speaker-models.sh), and
//! the errors a damaged or wrong checkpoint gives.

mod common;

use std::io::{Read, Write};
use std::path::Path;

use utter_diarize::der::{der, Segment};
use utter_diarize::{
    diarize, diarize_source, diarize_with_progress, AudioSource, DiarizeError, DiarizeOptions,
    SpeakerModels, SpeakerTurn,
};

/// Speakers in the turns.
fn speakers(turns: &[SpeakerTurn]) -> usize {
    turns.iter().map(|t| t.speaker + 1).max().unwrap_or(0)
}

/// The stretches where two reference speakers talk at once, at least `min_s` long.
fn overlaps(reference: &[Segment], min_s: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for (i, a) in reference.iter().enumerate() {
        for b in &reference[i + 1..] {
            let (s, e) = (a.start.max(b.start), a.end.min(b.end));
            if a.speaker != b.speaker && e - s >= min_s {
                out.push((s, e));
            }
        }
    }
    out
}

/// Seconds of `[start, end)` where two different hypothesis speakers are both active.
fn found_overlap(turns: &[SpeakerTurn], (start, end): (f64, f64)) -> f64 {
    let mut total = 0.0;
    let step = 0.01;
    let mut t = start;
    while t < end {
        let mut who: Vec<usize> = turns
            .iter()
            .filter(|x| x.start_s <= t && t < x.end_s)
            .map(|x| x.speaker)
            .collect();
        who.sort();
        who.dedup();
        if who.len() >= 2 {
            total += step;
        }
        t += step;
    }
    total
}

/// A recording read a stretch at a time, as a meeting's channel on disk is: it notes
/// the longest stretch asked for and whether reads went forward.
struct Reads<'a> {
    pcm: &'a [f32],
    longest: usize,
    last_start: usize,
    backwards: bool,
}

impl AudioSource for Reads<'_> {
    fn len(&self) -> usize {
        self.pcm.len()
    }

    fn read(&mut self, start: usize, n: usize) -> Vec<f32> {
        self.longest = self.longest.max(n);
        self.backwards |= start < self.last_start;
        self.last_start = start;
        self.pcm[start..start + n].to_vec()
    }
}

#[test]
fn a_recording_read_a_window_at_a_time_gives_the_same_turns() {
    let (pcm, _) = common::sample();
    let whole = diarize(common::models(), &pcm, &DiarizeOptions::default()).unwrap();
    let mut reads = Reads {
        pcm: &pcm,
        longest: 0,
        last_start: 0,
        backwards: false,
    };
    let streamed =
        diarize_source(common::models(), &mut reads, &DiarizeOptions::default()).unwrap();
    assert_eq!(streamed, whole);
    assert!(
        reads.longest <= 10 * 16_000,
        "at most one 10 s window at a time, not the {} samples",
        pcm.len()
    );
    assert!(!reads.backwards, "read in order, as a file is");
}

#[test]
fn the_sample_call_has_two_speakers_with_their_overlaps() {
    let (pcm, reference) = common::sample();
    let turns = diarize(common::models(), &pcm, &DiarizeOptions::default()).unwrap();
    let hyp = common::hypothesis(&turns);
    let d = der(&reference, &hyp, 0.0);
    let collared = der(&reference, &hyp, 0.25);
    println!(
        "sample.wav: DER {:.1} % without collar (missed {:.2} s, false alarm {:.2} s, confusion {:.2} s), \
         {:.1} % with a 0.25 s collar",
        d.der * 100.0,
        d.missed,
        d.false_alarm,
        d.confusion,
        collared.der * 100.0
    );
    assert_eq!(speakers(&turns), 2, "{turns:?}");
    assert!(
        d.der <= 0.10,
        "DER {:.3} over 10 % (measured 4.2 %): {turns:?}",
        d.der
    );
    // Every overlap of 0.4 s or more (three in sample.rttm) is mostly found.
    let wanted = overlaps(&reference, 0.4);
    assert_eq!(wanted.len(), 3, "{wanted:?}");
    for o in wanted {
        let found = found_overlap(&turns, o);
        assert!(
            found >= 0.5 * (o.1 - o.0),
            "overlap {o:?}: only {found:.2} s found: {turns:?}"
        );
    }
}

#[test]
fn a_five_voice_conversation_has_five_speakers() {
    let (pcm, reference) = common::conversation();
    let secs = pcm.len() as f64 / 16000.0;
    assert!(secs >= 120.0, "the conversation is {secs:.1} s");
    let turns = diarize(common::models(), &pcm, &DiarizeOptions::default()).unwrap();
    let hyp = common::hypothesis(&turns);
    let d = der(&reference, &hyp, 0.0);
    println!(
        "conversation ({secs:.1} s, {} turns of 5 voices): DER {:.1} % without collar \
         (missed {:.2} s, false alarm {:.2} s, confusion {:.2} s), {:.1} % with a 0.25 s collar",
        reference.len(),
        d.der * 100.0,
        d.missed,
        d.false_alarm,
        d.confusion,
        der(&reference, &hyp, 0.25).der * 100.0
    );
    assert_eq!(speakers(&turns), 5, "{turns:?}");
    assert!(
        d.der <= 0.15,
        "DER {:.3} over 15 % (measured 10.3 %)",
        d.der
    );
}

#[test]
fn a_known_speaker_count_is_obeyed() {
    let (pcm, _) = common::sample();
    let opts = DiarizeOptions {
        max_speakers: Some(1),
        ..DiarizeOptions::default()
    };
    assert_eq!(
        speakers(&diarize(common::models(), &pcm, &opts).unwrap()),
        1
    );
}

#[test]
fn silence_has_no_speakers() {
    let turns = diarize(
        common::models(),
        &vec![0.0; 16000 * 12],
        &DiarizeOptions::default(),
    )
    .unwrap();
    assert!(turns.is_empty(), "{turns:?}");
    assert!(diarize(common::models(), &[], &DiarizeOptions::default())
        .unwrap()
        .is_empty());
}

#[test]
fn progress_reaches_one_and_can_cancel() {
    let (pcm, _) = common::sample();
    let mut seen = Vec::new();
    diarize_with_progress(
        common::models(),
        &pcm,
        &DiarizeOptions::default(),
        &mut |p| {
            seen.push(p);
            true
        },
    )
    .unwrap();
    assert_eq!(seen.last(), Some(&1.0));
    let cancelled = diarize_with_progress(
        common::models(),
        &pcm,
        &DiarizeOptions::default(),
        &mut |_| false,
    );
    assert!(matches!(cancelled, Err(DiarizeError::Cancelled)));
}

#[test]
fn bad_options_are_refused() {
    let opts = DiarizeOptions {
        min_speakers: Some(3),
        max_speakers: Some(2),
        ..DiarizeOptions::default()
    };
    let err = diarize(common::models(), &[0.0; 16000], &opts).unwrap_err();
    assert!(matches!(err, DiarizeError::InvalidOptions(_)), "{err}");
}

/// Copies the zip at `from` to `to`, passing each entry's bytes through `edit`.
fn rewrite_zip(from: &Path, to: &Path, edit: impl Fn(&str, Vec<u8>) -> Vec<u8>) {
    let mut src = zip::ZipArchive::new(std::fs::File::open(from).unwrap()).unwrap();
    let mut dst = zip::ZipWriter::new(std::fs::File::create(to).unwrap());
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..src.len() {
        let mut entry = src.by_index(i).unwrap();
        let name = entry.name().to_string();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        dst.start_file(name.as_str(), stored).unwrap();
        dst.write_all(&edit(&name, bytes)).unwrap();
    }
    dst.finish().unwrap();
}

#[test]
fn a_truncated_checkpoint_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("segmentation.bin");
    let bytes = std::fs::read(common::segmentation_path()).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let err = SpeakerModels::load(&bad, &common::embedding_path())
        .err()
        .expect("an error");
    assert!(
        matches!(err, DiarizeError::NotACheckpoint { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("segmentation.bin"), "{err}");

    let missing = dir.path().join("absent.bin");
    let err = SpeakerModels::load(&missing, &common::embedding_path())
        .err()
        .expect("an error");
    assert!(matches!(err, DiarizeError::Io { .. }), "{err:?}");
}

#[test]
fn a_wrong_tensor_shape_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("segmentation.bin");
    // sincnet.conv1d.1.weight is (60, 80, 5): pickled as BININT1 60, 80, 5 then TUPLE3.
    rewrite_zip(&common::segmentation_path(), &bad, |name, bytes| {
        if !name.ends_with("data.pkl") {
            return bytes;
        }
        let shape = [b'K', 60, b'K', 80, b'K', 5, 0x87];
        let at = bytes
            .windows(shape.len())
            .position(|w| w == shape)
            .expect("the shape's bytes");
        let mut bytes = bytes;
        bytes[at + 3] = 79;
        bytes
    });
    let err = SpeakerModels::load(&bad, &common::embedding_path())
        .err()
        .expect("an error");
    match &err {
        DiarizeError::WrongShape {
            name,
            expected,
            found,
            ..
        } => {
            assert_eq!(name, "sincnet.conv1d.1.weight");
            assert_eq!(
                (expected.as_slice(), found.as_slice()),
                (&[60, 80, 5][..], &[60, 79, 5][..])
            );
        }
        other => panic!("expected WrongShape, got {other:?}"),
    }
    println!("{err}");
}

#[test]
fn a_truncated_tensor_or_the_wrong_model_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("segmentation.bin");
    rewrite_zip(&common::segmentation_path(), &bad, |name, bytes| {
        if name.ends_with("data/16") {
            bytes[..bytes.len() / 2].to_vec() // the LSTM's storage
        } else {
            bytes
        }
    });
    let err = SpeakerModels::load(&bad, &common::embedding_path())
        .err()
        .expect("an error");
    assert!(matches!(err, DiarizeError::Corrupt { .. }), "{err:?}");

    // The two files swapped: the segmentation loader finds none of its tensors.
    let err = SpeakerModels::load(&common::embedding_path(), &common::segmentation_path())
        .err()
        .expect("an error");
    assert!(matches!(err, DiarizeError::MissingTensor { .. }), "{err:?}");
    assert!(err.to_string().contains("right model file"), "{err}");
}
