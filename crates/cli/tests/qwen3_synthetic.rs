//! A Qwen3-ASR model made here, in the test: tiny dimensions, small
//! deterministic weights, written with Utter's own GGUF writer, and run
//! through the engine and the real `utter transcribe` in every format.
//!
//! The model is untrained, so its text is noise. Its only hand-set
//! weights (the embedding, which is also the output head) make every run
//! emit one word and then end-of-text, so runs end cleanly instead of
//! running to the output budget. The tests check the plumbing only: exit
//! status, well-formed SRT/VTT/JSON, segment times, and the capabilities the
//! engine reports. What the loader requires is in transcribe.cpp 0.4.1's
//! `arch/qwen3_asr/`; the § numbers below are sections of docs/qwen3-asr-gguf.md, the notes
//! read from it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use utter_convert::ggml::{GgmlTensor, GgmlType};
use utter_convert::gguf::{GgufFile, Value};
use utter_engine::{Engine, EngineConfig, RunCost, RunParams, Timestamps};

const LIBRIVOX: &str = "/usr/share/pocketsphinx/test/data/librivox";
const CLIP: &str =
    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav";
const FORMATS: [&str; 4] = ["txt", "srt", "vtt", "json"];
const VARIANT: &str = "qwen3-asr-synthetic";

// §5's tiny configuration.
const ENC_D: usize = 8; // even and ≥ 4: the sinusoid PE divides by d_model/2 - 1 (§2c)
const ENC_FFN: usize = 16;
const MELS: usize = 16; // num_mel_bins == frontend.num_mels: unchecked, else an over-read (§2c)
const CONV: usize = 4; // downsample_hidden; three stride-2 convs take the 16 mels to 2 (M3, §4)
const DEC_H: usize = 16; // == encoder.output_dim (§2c)
const DEC_FFN: usize = 32;
const HEADS: usize = 2;
const KV_HEADS: usize = 1;
const HEAD_DIM: usize = 8; // mrope sections 2 + 1 + 1 == head_dim / 2 (§2c)
const MAX_POS: u32 = 1024; // max_audio_ms = (1024 - 304) × 80 = 57 600 (§3)

/// xorshift64*: small deterministic weights.
struct Rng(u64);

impl Rng {
    /// Uniform in [-0.02, 0.02): keeps the conv's F16 im2col and every sum finite (§6).
    fn small(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let unit = (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32;
        0.02 * (2.0 * unit - 1.0)
    }
}

/// Tensors in numpy order, all F32 (every dtype allowlist takes it, §4).
struct Tensors {
    list: Vec<GgmlTensor>,
    rng: Rng,
}

impl Tensors {
    fn put(&mut self, name: &str, shape: &[usize], values: &[f32]) {
        let tensor = GgmlTensor::from_f32(name, shape.to_vec(), values, GgmlType::F32);
        self.list.push(tensor);
    }

    fn random(&mut self, name: &str, shape: &[usize]) {
        let n = shape.iter().product::<usize>();
        let values: Vec<f32> = (0..n).map(|_| self.rng.small()).collect();
        self.put(name, shape, &values);
    }

    fn fill(&mut self, name: &str, shape: &[usize], x: f32) {
        self.put(name, shape, &vec![x; shape.iter().product::<usize>()]);
    }
}

/// GPT-2's byte → glyph map (bytes_to_unicode): printable bytes stand for
/// themselves, the other 68 take U+0100.. in byte order (`\n` → `Ċ`, ` ` → `Ġ`).
fn byte_glyphs() -> Vec<String> {
    let shown = |b: u32| matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
    let glyph = |b: u32| {
        if shown(b) {
            b
        } else {
            0x100 + (0..b).filter(|&c| !shown(c)).count() as u32
        }
    };
    (0..256)
        .map(|b| char::from_u32(glyph(b)).unwrap().to_string())
        .collect()
}

/// Sets each of the whitespace-separated `key=value` pairs as `prefix` + key.
fn set_each(f: &mut GgufFile, prefix: &str, pairs: &str, value: fn(&str) -> Value) {
    for pair in pairs.split_whitespace() {
        let (key, v) = pair.split_once('=').unwrap();
        f.set(&format!("{prefix}{key}"), value(v));
    }
}

fn synthetic_qwen3_asr(path: &Path) {
    // §5 option B: the 256 byte glyphs (so any text encodes), the pieces the
    // loader looks up by text (§2b), and one merge (without merges, language
    // hints, vocabulary and prompts fail).
    let mut tokens = byte_glyphs();
    let pieces = "<|endoftext|> <|im_start|> <|im_end|> <|audio_start|> <|audio_end|> \
                  <|audio_pad|> <asr_text> system user assistant Hello Ġw";
    tokens.extend(pieces.split_whitespace().map(String::from));
    let vocab = tokens.len();
    let id = |piece: &str| tokens.iter().position(|t| t == piece).unwrap();
    // Audio ids must be < vocab, else ggml_get_rows aborts the process (§2c).
    let [pad, start, end] = ["<|audio_pad|>", "<|audio_start|>", "<|audio_end|>"].map(id);
    // §5's deterministic head: with attn.o and ffn.down zero each decoder
    // block is the identity, so the next token is argmax_j E_j · rms(E_last).
    // After the prompt's last token (`Ċ`, or `<asr_text>` after a language
    // hint) that is `Hello`; after `Hello` it is the EOS.
    let mut embd = vec![0.0; vocab * DEC_H];
    for (piece, row) in [
        ("Ċ", [1.0f32, 0.0]),
        ("<asr_text>", [1.0, 0.0]),
        ("Hello", [2.0, 2.0]),
        ("<|im_end|>", [0.0, 5.0]),
    ] {
        embd[id(piece) * DEC_H..][..2].copy_from_slice(&row);
    }

    let mut f = GgufFile::default();
    // `gpt2` = byte-level BPE, what the prompt path needs (§2b).
    let texts = format!(
        "general.architecture=qwen3_asr stt.variant={VARIANT} tokenizer.ggml.model=gpt2
         tokenizer.ggml.pre=qwen2 stt.qwen3_asr.encoder.activation=gelu
         stt.qwen3_asr.decoder.hidden_act=silu stt.frontend.type=mel
         stt.frontend.window=hann_periodic stt.frontend.normalize=per_utterance"
    );
    set_each(&mut f, "", &texts, |v| Value::Str(v.into()));
    // Every count is a GGUF UINT32: an INT32 is a load error (§0, §2c).
    // n_window 50: 100-frame encoder chunks (0 fails every run).
    let counts = format!(
        "encoder.n_layers=1 encoder.d_model={ENC_D} encoder.n_heads=2 encoder.ffn_dim={ENC_FFN}
         encoder.num_mel_bins={MELS} encoder.downsample_hidden={CONV} encoder.output_dim={DEC_H}
         encoder.max_source_positions=1500 encoder.n_window=50 encoder.n_window_infer=800
         encoder.conv_chunksize=500 decoder.n_layers=1 decoder.hidden_size={DEC_H}
         decoder.intermediate_size={DEC_FFN} decoder.n_heads={HEADS} decoder.n_kv_heads={KV_HEADS}
         decoder.head_dim={HEAD_DIM} decoder.rope_mrope_section_t=2 decoder.rope_mrope_section_h=1
         decoder.rope_mrope_section_w=1 decoder.max_position_embeddings={MAX_POS}
         decoder.vocab_size={vocab} audio_token_id={pad} audio_start_token_id={start}
         audio_end_token_id={end}"
    );
    let count = |v: &str| Value::U32(v.parse().unwrap());
    set_each(&mut f, "stt.qwen3_asr.", &counts, count);
    let frontend =
        format!("num_mels={MELS} sample_rate=16000 n_fft=400 win_length=400 hop_length=160");
    set_each(&mut f, "stt.frontend.", &frontend, count);
    let eos = id("<|im_end|>"); // u32 or i32 (§2b); decoding stops on it
    f.set("tokenizer.ggml.eos_token_id", eos as u32);
    let floats = "stt.qwen3_asr.decoder.rms_norm_eps=1e-6 stt.qwen3_asr.decoder.rope_theta=1e6
                  stt.frontend.dither=0 stt.frontend.pre_emphasis=0 stt.frontend.f_min=0
                  stt.frontend.f_max=8000";
    set_each(&mut f, "", floats, |v| Value::F32(v.parse().unwrap()));
    // tie_word_embeddings and rope_mrope_interleaved stay absent: both default to true (§2c).
    let languages = vec!["en".into(), "zh".into()];
    f.set("general.languages", Value::ArrStr(languages));
    f.set("tokenizer.ggml.merges", Value::ArrStr(vec!["Ġ w".into()]));
    f.set("tokenizer.ggml.tokens", Value::ArrStr(tokens));

    let mut t = Tensors {
        list: Vec::new(),
        rng: Rng(0x9E37_79B9_7F4A_7C15),
    };
    for (i, channels_in) in [1, CONV, CONV].into_iter().enumerate() {
        t.random(&format!("enc.conv.{i}.weight"), &[CONV, channels_in, 3, 3]);
        t.fill(&format!("enc.conv.{i}.bias"), &[CONV], 0.0);
    }
    t.random("enc.conv_out.weight", &[ENC_D, CONV * 2]); // in: c·M3 + f, M3 = 2; no bias
    for name in ["blocks.0.norm_attn", "blocks.0.norm_ffn", "ln_post"] {
        t.fill(&format!("enc.{name}.weight"), &[ENC_D], 1.0);
        t.fill(&format!("enc.{name}.bias"), &[ENC_D], 0.0);
    }
    for (name, out, inp) in [
        ("blocks.0.attn.q", ENC_D, ENC_D),
        ("blocks.0.attn.k", ENC_D, ENC_D),
        ("blocks.0.attn.v", ENC_D, ENC_D),
        ("blocks.0.attn.out", ENC_D, ENC_D),
        ("blocks.0.ffn.fc1", ENC_FFN, ENC_D),
        ("blocks.0.ffn.fc2", ENC_D, ENC_FFN),
        ("proj1", ENC_D, ENC_D),
        ("proj2", DEC_H, ENC_D),
    ] {
        t.random(&format!("enc.{name}.weight"), &[out, inp]);
        t.fill(&format!("enc.{name}.bias"), &[out], 0.0);
    }
    t.put("dec.token_embd.weight", &[vocab, DEC_H], &embd); // also the (tied) LM head
    let (q, kv) = (HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM);
    // `None`: random; attn.o and ffn.down zero make each block the identity (§5).
    let block: [(&str, &[usize], Option<f32>); 11] = [
        ("norm_attn", &[DEC_H], Some(1.0)),
        ("norm_ffn", &[DEC_H], Some(1.0)),
        ("attn.q", &[q, DEC_H], None),
        ("attn.k", &[kv, DEC_H], None),
        ("attn.v", &[kv, DEC_H], None),
        ("attn.o", &[DEC_H, q], Some(0.0)),
        ("attn.q_norm", &[HEAD_DIM], Some(1.0)),
        ("attn.k_norm", &[HEAD_DIM], Some(1.0)),
        ("ffn.gate", &[DEC_FFN, DEC_H], None), // the same dtype as up
        ("ffn.up", &[DEC_FFN, DEC_H], None),
        ("ffn.down", &[DEC_H, DEC_FFN], Some(0.0)),
    ];
    for (name, shape, value) in block {
        let name = format!("dec.blocks.0.{name}.weight");
        match value {
            Some(x) => t.fill(&name, shape, x),
            None => t.random(&name, shape),
        }
    }
    t.fill("dec.output_norm.weight", &[DEC_H], 1.0);
    f.tensors = t.list;

    let mut out = std::fs::File::create(path).unwrap();
    f.write_to(&mut out).unwrap();
}

/// 16 kHz mono PCM, as the engine takes it.
fn pcm(path: &str) -> Vec<f32> {
    let mut pcm = Vec::new();
    utter_core::audio::decode_file(Path::new(path), |p| pcm.extend_from_slice(p))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    pcm
}

struct Fixtures {
    model: PathBuf,
    clip_ms: i64,
    /// Five clips with 4 s of silence between them: 40.7 s, several speech
    /// spans, and more than the model's 30 s window.
    long: PathBuf,
    long_ms: i64,
}

fn fixtures() -> &'static Fixtures {
    static DIR: OnceLock<Fixtures> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("utter-qwen3-synth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = dir.join("qwen3-asr-tiny.gguf");
        synthetic_qwen3_asr(&model);
        let long = dir.join("long.wav");
        let mut wav = utter_core::audio::wav::WavRecorder::create(&long).unwrap();
        for (i, n) in ["0870", "0890", "0920", "0930", "0880"].iter().enumerate() {
            if i > 0 {
                wav.write(&vec![0.0; 4 * 16_000]).unwrap();
            }
            let clip = format!("{LIBRIVOX}/sense_and_sensibility_01_austen_64kb-{n}.wav");
            wav.write(&pcm(&clip)).unwrap();
        }
        let long_ms = wav.duration_ms() as i64;
        wav.finish().unwrap();
        Fixtures {
            model,
            clip_ms: pcm(CLIP).len() as i64 / 16,
            long,
            long_ms,
        }
    })
}

/// Runs `utter`, which must succeed; its standard output.
fn utter(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(args)
        .output()
        .expect("utter runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (VTT) in ms.
fn clock_ms(t: &str, vtt: bool) -> i64 {
    let (hms, milli) = t.split_once(if vtt { '.' } else { ',' }).expect(t);
    let p: Vec<i64> = hms.split(':').map(|x| x.parse().expect(t)).collect();
    assert!(p.len() == 3 && milli.len() == 3, "time `{t}`");
    ((p[0] * 60 + p[1]) * 60 + p[2]) * 1000 + milli.parse::<i64>().expect(t)
}

/// The (start, end) of each SRT/VTT cue, checking its number, timing line and text.
fn cue_spans(text: &str, vtt: bool) -> Vec<(i64, i64)> {
    let body = if vtt {
        text.strip_prefix("WEBVTT\n\n").expect("a WEBVTT header")
    } else {
        text
    };
    let blocks = body.split("\n\n").filter(|b| !b.trim().is_empty());
    let spans = blocks.enumerate().map(|(i, block)| {
        let mut lines = block.lines();
        let number = (i + 1).to_string();
        if !vtt {
            assert_eq!(lines.next(), Some(number.as_str()), "cue number: {text}");
        }
        let timing = lines.next().and_then(|l| l.split_once(" --> "));
        let (a, b) = timing.unwrap_or_else(|| panic!("a `-->` line: {text}"));
        assert!(lines.next().is_some_and(|l| !l.trim().is_empty()), "{text}");
        (clock_ms(a, vtt), clock_ms(b, vtt))
    });
    spans.collect()
}

/// The (start, end) of each JSON segment, checking the fields around them.
fn json_spans(text: &str, duration_ms: i64) -> Vec<(i64, i64)> {
    let v: serde_json::Value = serde_json::from_str(text).expect("the JSON parses");
    assert_eq!(v["model"], "qwen3-asr-tiny", "the file's name: {text}");
    assert_eq!(v["duration_ms"].as_i64(), Some(duration_ms), "{text}");
    assert!(v["language"].is_null(), "no language detected: {text}");
    assert!(v["text"].is_string() && v["warnings"].is_array(), "{text}");
    let backend = v["backend"].as_str().unwrap_or_default();
    assert!(!backend.is_empty(), "where it ran: {text}");
    let ms = |v: &serde_json::Value| v.as_i64().unwrap();
    let segments = v["segments"].as_array().expect("segments");
    let span = |s: &serde_json::Value| {
        assert!(s["text"].is_string(), "{text}");
        (ms(&s["start_ms"]), ms(&s["end_ms"]))
    };
    segments.iter().map(span).collect()
}

/// Checks `text` is well-formed `format` for a file of `duration_ms` with at
/// least `min` cues or segments: JSON starts increase, cues never overlap.
fn check_output(format: &str, text: &str, duration_ms: i64, min: usize) {
    let json = format == "json";
    let spans = match format {
        "txt" => {
            assert!(
                text.lines().count() == 1 && text.ends_with('\n'),
                "{text:?}"
            );
            return;
        }
        "json" => json_spans(text, duration_ms),
        _ => cue_spans(text, format == "vtt"),
    };
    assert!(spans.len() >= min, "{format}: {text}");
    let (mut prev_start, mut prev_end) = (-1, 0);
    for &(a, b) in &spans {
        let floor = if json { prev_start + 1 } else { prev_end };
        assert!(floor <= a && a < b && b <= duration_ms, "{format}: {text}");
        (prev_start, prev_end) = (a, b);
    }
}

#[test]
fn the_engine_reports_what_the_spec_predicts_and_runs() {
    let engine = Engine::start(EngineConfig::new(fixtures().model.clone())).expect("it loads");
    let info = engine.info();
    assert_eq!(info.arch, "qwen3_asr");
    assert_eq!(info.variant, VARIANT);
    assert!(info.is_speech && !info.is_vad);
    assert_eq!(info.languages, ["en", "zh"], "general.languages");
    assert!(!info.translates && !info.detects_language && !info.streaming);
    assert!(info.takes_vocabulary && info.takes_prompt && !info.takes_prefix);
    assert_eq!(info.timestamps, Timestamps::None);
    assert_eq!(info.max_audio_ms, (i64::from(MAX_POS) - 304) * 80);
    assert_eq!(info.run_cost, RunCost::GrowsWithAudio);
    assert_eq!(info.window_ms(), info.max_audio_ms.min(30_000));
    assert_eq!(info.window_ms(), 30_000);

    // A language hint, a vocabulary and a prompt go through the model's BPE
    // tokenizer (the byte glyphs and the merge of option B).
    let hinted = RunParams {
        language: Some("en".into()),
        vocabulary: vec!["Dashwood".into(), "Norland".into()],
        prompt: Some("The family of Dashwood had long been settled in Sussex.".into()),
        ..Default::default()
    };
    for params in [RunParams::default(), hinted] {
        let result = engine.transcribe(vec![pcm(CLIP)], params.clone());
        let utterances = result.unwrap_or_else(|e| panic!("{params:?}: {e}"));
        assert_eq!(utterances.len(), 1);
        assert!(!utterances[0].truncated, "ends at end-of-text: {params:?}");
    }
}

#[test]
fn every_format_is_well_formed_for_one_clip() {
    let (f, model) = (fixtures(), path(&fixtures().model));
    for format in FORMATS {
        let text = utter(&["transcribe", "-m", model, "-f", format, CLIP]);
        check_output(format, &text, f.clip_ms, 1);
    }
}

#[test]
fn every_format_is_well_formed_for_a_long_file_with_several_spans() {
    let f = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let (model, long) = (path(&f.model), path(&f.long));
    let out = format!("--output={}", path(dir.path()));
    for format in FORMATS {
        utter(&["transcribe", "-m", model, "-f", format, out.as_str(), long]);
        let text = std::fs::read_to_string(dir.path().join(format!("long.{format}"))).unwrap();
        check_output(format, &text, f.long_ms, 2);
    }
    // Without the VAD: fixed windows of the model's 30 s.
    let text = utter(&["transcribe", "--no-vad", "-m", model, "-f", "json", long]);
    check_output("json", &text, f.long_ms, 2);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["segments"][0]["end_ms"], 30_000, "{text}");
}
