//! CTranslate2 (faster-whisper) Whisper model directory → whisper.cpp `.bin`.
//!
//! The mapping: CT2's fused projections are split back into OpenAI's separate
//! query/key/value tensors (the key projections carry no bias), names become
//! OpenAI's, and the type rules of whisper.cpp's own converter apply: 1-D
//! tensors, conv biases (as `[n, 1]`) and positional embeddings in f32, the
//! rest in f16. With a quantisation, the weight matrices (2-D, rows a whole
//! number of blocks) are written in it, as whisper.cpp's `quantize` does; the
//! convolutions stay f16.

use std::io::Write;
use std::path::Path;

use super::ct2::{Ct2Dtype, Ct2Model, Ct2Variable};
use super::ggml::{GgmlTensor, GgmlType, GGML_MAGIC};
use super::quant::{self, Quant};
use super::{mel, vocab, ConvertError};

/// The Whisper dimensions read from a CT2 model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WhisperHparams {
    pub n_vocab: usize,
    pub n_audio_ctx: usize,
    pub n_audio_state: usize,
    pub n_audio_head: usize,
    pub n_audio_layer: usize,
    pub n_text_ctx: usize,
    pub n_text_state: usize,
    pub n_text_head: usize,
    pub n_text_layer: usize,
    pub n_mels: usize,
}

impl WhisperHparams {
    /// The conventional model name, e.g. `whisper-tiny.en`, from the dimensions.
    pub fn variant_name(&self) -> String {
        let size = match (self.n_audio_layer, self.n_text_layer, self.n_mels) {
            (4, _, _) => "tiny",
            (6, _, _) => "base",
            (12, _, _) => "small",
            (24, _, _) => "medium",
            (32, 4, _) => "large-v3-turbo",
            (32, _, 128) => "large-v3",
            (32, _, _) => "large-v2",
            _ => "custom",
        };
        let english_only = self.n_vocab == 51864;
        format!("whisper-{size}{}", if english_only { ".en" } else { "" })
    }
}

/// A converted model kept in memory until written.
pub struct ConvertedWhisper {
    pub hparams: WhisperHparams,
    /// Raw bytes of every token below end-of-text.
    pub vocab: Vec<Vec<u8>>,
    pub tensors: Vec<GgmlTensor>,
    pub quant: Quant,
}

impl ConvertedWhisper {
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let h = &self.hparams;
        out.write_all(&GGML_MAGIC.to_le_bytes())?;
        for v in [
            h.n_vocab,
            h.n_audio_ctx,
            h.n_audio_state,
            h.n_audio_head,
            h.n_audio_layer,
            h.n_text_ctx,
            h.n_text_state,
            h.n_text_head,
            h.n_text_layer,
            h.n_mels,
        ] {
            out.write_all(&(v as i32).to_le_bytes())?;
        }
        out.write_all(&self.quant.file_type().to_le_bytes())?;
        const N_FFT: usize = 400;
        let filters = mel::mel_filterbank(16000, N_FFT, h.n_mels);
        out.write_all(&(h.n_mels as i32).to_le_bytes())?;
        out.write_all(&((N_FFT / 2 + 1) as i32).to_le_bytes())?;
        for v in filters {
            out.write_all(&v.to_le_bytes())?;
        }
        out.write_all(&(self.vocab.len() as i32).to_le_bytes())?;
        for token in &self.vocab {
            out.write_all(&(token.len() as i32).to_le_bytes())?;
            out.write_all(token)?;
        }
        for t in &self.tensors {
            t.write_to(out)?;
        }
        Ok(())
    }
}

/// Converts the CT2 model in `dir` (`model.bin` + `vocabulary.{txt,json}` or `tokenizer.json`).
pub fn convert_dir(dir: &Path, quant: Quant) -> Result<ConvertedWhisper, ConvertError> {
    let model_path = dir.join("model.bin");
    if !model_path.is_file() {
        return Err(ConvertError::Format(format!(
            "{} has no model.bin: not a CTranslate2 model directory",
            dir.display()
        )));
    }
    let model = Ct2Model::open(&model_path)?;
    let pieces = read_vocabulary(dir)?;
    convert(&model, &pieces, quant)
}

/// Converts a parsed CT2 model and its token list (in id order), writing its
/// weight matrices in `quant`.
pub fn convert(
    model: &Ct2Model,
    pieces: &[String],
    quant: Quant,
) -> Result<ConvertedWhisper, ConvertError> {
    if model.spec_name != "WhisperSpec" {
        return Err(ConvertError::Unsupported(format!(
            "CTranslate2 spec `{}` is not a Whisper model; only Whisper (faster-whisper) models can be imported",
            model.spec_name
        )));
    }
    for (name, var) in &model.variables {
        if !matches!(var.dtype, Ct2Dtype::F32 | Ct2Dtype::F16) && var.element_count() > 1 {
            return Err(ConvertError::Unsupported(format!(
                "variable `{name}` is {:?}: quantised CTranslate2 models cannot be converted; \
                 use the float16 or float32 export (ct2-transformers-converter --quantization float16)",
                var.dtype
            )));
        }
    }
    let hparams = read_hparams(model)?;
    let vocab = byte_vocab(pieces, hparams.n_vocab)?;
    let tensors = map_tensors(model, &hparams, quant)?;
    Ok(ConvertedWhisper {
        hparams,
        vocab,
        tensors,
        quant,
    })
}

fn count_layers(model: &Ct2Model, prefix: &str) -> usize {
    (0..)
        .take_while(|i| {
            model
                .variables
                .keys()
                .any(|k| k.starts_with(&format!("{prefix}/layer_{i}/")))
        })
        .count()
}

fn dims(var: &Ct2Variable, rank: usize, name: &str) -> Result<Vec<usize>, ConvertError> {
    if var.shape.len() != rank {
        return Err(ConvertError::Format(format!(
            "`{name}` has shape {:?}, expected rank {rank}",
            var.shape
        )));
    }
    Ok(var.shape.clone())
}

fn read_hparams(model: &Ct2Model) -> Result<WhisperHparams, ConvertError> {
    let embed = dims(
        model.require("decoder/embeddings/weight")?,
        2,
        "decoder/embeddings/weight",
    )?;
    let enc_pos = dims(
        model.require("encoder/position_encodings/encodings")?,
        2,
        "encoder/position_encodings/encodings",
    )?;
    let dec_pos = dims(
        model.require("decoder/position_encodings/encodings")?,
        2,
        "decoder/position_encodings/encodings",
    )?;
    let conv1 = dims(
        model.require("encoder/conv1/weight")?,
        3,
        "encoder/conv1/weight",
    )?;
    // Whisper uses 64-dimensional heads; CT2 usually stores the count too.
    let heads = |prefix: &str, state: usize| {
        model
            .get(&format!("{prefix}/num_heads"))
            .and_then(Ct2Variable::scalar_i64)
            .map(|h| h as usize)
            .unwrap_or(state / 64)
    };
    let h = WhisperHparams {
        n_vocab: embed[0],
        n_audio_ctx: enc_pos[0],
        n_audio_state: enc_pos[1],
        n_audio_head: heads("encoder", enc_pos[1]),
        n_audio_layer: count_layers(model, "encoder"),
        n_text_ctx: dec_pos[0],
        n_text_state: embed[1],
        n_text_head: heads("decoder", embed[1]),
        n_text_layer: count_layers(model, "decoder"),
        n_mels: conv1[1],
    };
    if h.n_audio_layer == 0 || h.n_text_layer == 0 {
        return Err(ConvertError::Format(
            "model has no encoder or decoder layers".into(),
        ));
    }
    Ok(h)
}

/// Token bytes for every id below end-of-text.
fn byte_vocab(pieces: &[String], n_vocab: usize) -> Result<Vec<Vec<u8>>, ConvertError> {
    let eot = pieces
        .iter()
        .position(|p| p == "<|endoftext|>")
        .ok_or_else(|| ConvertError::Format("vocabulary has no <|endoftext|> token".into()))?;
    if eot >= n_vocab {
        return Err(ConvertError::Format(format!(
            "vocabulary end-of-text id {eot} is outside the model's {n_vocab} embeddings"
        )));
    }
    let table = vocab::unicode_to_byte();
    pieces[..eot]
        .iter()
        .enumerate()
        .map(|(id, p)| {
            vocab::decode_piece(p, &table).ok_or_else(|| {
                ConvertError::Format(format!("token {id} `{p}` is not a byte-level BPE piece"))
            })
        })
        .collect()
}

/// Reads the token list: `vocabulary.txt` (one per line), `vocabulary.json`
/// (an array), or a Hugging Face `tokenizer.json`.
pub fn read_vocabulary(dir: &Path) -> Result<Vec<String>, ConvertError> {
    let txt = dir.join("vocabulary.txt");
    if txt.is_file() {
        let text = std::fs::read_to_string(&txt).map_err(|e| ConvertError::io(&txt, e))?;
        return Ok(text.lines().map(str::to_owned).collect());
    }
    let json = dir.join("vocabulary.json");
    if json.is_file() {
        let text = std::fs::read_to_string(&json).map_err(|e| ConvertError::io(&json, e))?;
        return serde_json::from_str(&text)
            .map_err(|e| ConvertError::Format(format!("{}: {e}", json.display())));
    }
    let tok = dir.join("tokenizer.json");
    if tok.is_file() {
        let text = std::fs::read_to_string(&tok).map_err(|e| ConvertError::io(&tok, e))?;
        return vocabulary_from_tokenizer_json(&text)
            .map_err(|e| ConvertError::Format(format!("{}: {e}", tok.display())));
    }
    Err(ConvertError::Format(format!(
        "{} has no vocabulary.txt, vocabulary.json or tokenizer.json",
        dir.display()
    )))
}

/// What is wrong with a tokenizer.json.
#[derive(Debug, thiserror::Error)]
enum TokenizerJsonError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("token `{0}` has a non-integer id")]
    NonIntegerId(String),
    #[error("token ids are not contiguous at {0}")]
    Gap(usize),
}

fn vocabulary_from_tokenizer_json(text: &str) -> Result<Vec<String>, TokenizerJsonError> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    let mut by_id: Vec<(u64, String)> = Vec::new();
    if let Some(map) = v.pointer("/model/vocab").and_then(|m| m.as_object()) {
        for (tok, id) in map {
            let id = id
                .as_u64()
                .ok_or_else(|| TokenizerJsonError::NonIntegerId(tok.clone()))?;
            by_id.push((id, tok.clone()));
        }
    }
    if let Some(added) = v.get("added_tokens").and_then(|a| a.as_array()) {
        for t in added {
            if let (Some(id), Some(content)) = (t["id"].as_u64(), t["content"].as_str()) {
                by_id.push((id, content.to_owned()));
            }
        }
    }
    by_id.sort();
    by_id.dedup_by_key(|(id, _)| *id);
    for (i, (id, _)) in by_id.iter().enumerate() {
        if *id != i as u64 {
            return Err(TokenizerJsonError::Gap(i));
        }
    }
    Ok(by_id.into_iter().map(|(_, t)| t).collect())
}

/// The tensor type whisper.cpp's converter (and its `quantize`) picks.
fn ggml_type_for(name: &str, shape: &[usize], quant: Quant) -> GgmlType {
    let keep_f32 = shape.len() < 2
        || name.ends_with("conv1.bias")
        || name.ends_with("conv2.bias")
        || name.ends_with("positional_embedding");
    // Only matrices are quantised; a row must be whole blocks.
    let quantisable = shape.len() == 2 && shape[1].is_multiple_of(quant::BLOCK);
    if keep_f32 {
        GgmlType::F32
    } else if quantisable {
        quant.into()
    } else {
        GgmlType::F16
    }
}

struct TensorSink<'a> {
    model: &'a Ct2Model,
    quant: Quant,
    out: Vec<GgmlTensor>,
}

impl TensorSink<'_> {
    fn push(&mut self, name: String, shape: Vec<usize>, values: &[f32]) {
        let ty = ggml_type_for(&name, &shape, self.quant);
        self.out.push(GgmlTensor::from_f32(name, shape, values, ty));
    }

    /// Copies a variable whole.
    fn copy(&mut self, src: &str, dst: String) -> Result<(), ConvertError> {
        let var = self.model.require(src)?;
        self.push(dst, var.shape.clone(), &var.to_f32());
        Ok(())
    }

    /// Splits a fused `[parts*n, ...]` projection along its first axis and
    /// writes the chosen parts; biases are written only where `with_bias` says.
    fn split(
        &mut self,
        src: &str,
        parts: usize,
        names: &[(usize, &str, bool)],
    ) -> Result<(), ConvertError> {
        let w = self.model.require(&format!("{src}/weight"))?;
        let b = self.model.require(&format!("{src}/bias"))?;
        if w.shape.len() != 2 || w.shape[0] % parts != 0 || b.shape != [w.shape[0]] {
            return Err(ConvertError::Format(format!(
                "`{src}` has shape {:?} / {:?}, not a fused projection of {parts}",
                w.shape, b.shape
            )));
        }
        let (rows, cols) = (w.shape[0] / parts, w.shape[1]);
        let (wv, bv) = (w.to_f32(), b.to_f32());
        for (part, dst, with_bias) in names {
            let part_w = &wv[part * rows * cols..(part + 1) * rows * cols];
            self.push(format!("{dst}.weight"), vec![rows, cols], part_w);
            if *with_bias {
                self.push(
                    format!("{dst}.bias"),
                    vec![rows],
                    &bv[part * rows..(part + 1) * rows],
                );
            }
        }
        Ok(())
    }

    fn linear(&mut self, src: &str, dst: &str) -> Result<(), ConvertError> {
        self.copy(&format!("{src}/weight"), format!("{dst}.weight"))?;
        self.copy(&format!("{src}/bias"), format!("{dst}.bias"))
    }

    fn layer_norm(&mut self, src: &str, dst: &str) -> Result<(), ConvertError> {
        self.copy(&format!("{src}/gamma"), format!("{dst}.weight"))?;
        self.copy(&format!("{src}/beta"), format!("{dst}.bias"))
    }

    /// Self-attention with CT2's fused q|k|v; the key projection has no bias.
    fn self_attention(&mut self, src: &str, dst: &str) -> Result<(), ConvertError> {
        self.split(
            &format!("{src}/self_attention/linear_0"),
            3,
            &[
                (0, &format!("{dst}.attn.query"), true),
                (1, &format!("{dst}.attn.key"), false),
                (2, &format!("{dst}.attn.value"), true),
            ],
        )?;
        self.linear(
            &format!("{src}/self_attention/linear_1"),
            &format!("{dst}.attn.out"),
        )?;
        self.layer_norm(
            &format!("{src}/self_attention/layer_norm"),
            &format!("{dst}.attn_ln"),
        )
    }

    fn ffn(&mut self, src: &str, dst: &str) -> Result<(), ConvertError> {
        self.linear(&format!("{src}/ffn/linear_0"), &format!("{dst}.mlp.0"))?;
        self.linear(&format!("{src}/ffn/linear_1"), &format!("{dst}.mlp.2"))?;
        self.layer_norm(&format!("{src}/ffn/layer_norm"), &format!("{dst}.mlp_ln"))
    }

    /// Conv biases are stored as `[n, 1]` in whisper.cpp files.
    fn conv(&mut self, src: &str, dst: &str) -> Result<(), ConvertError> {
        self.copy(&format!("{src}/weight"), format!("{dst}.weight"))?;
        let b = self.model.require(&format!("{src}/bias"))?;
        self.push(
            format!("{dst}.bias"),
            vec![b.element_count(), 1],
            &b.to_f32(),
        );
        Ok(())
    }
}

fn map_tensors(
    model: &Ct2Model,
    h: &WhisperHparams,
    quant: Quant,
) -> Result<Vec<GgmlTensor>, ConvertError> {
    let mut s = TensorSink {
        model,
        quant,
        out: Vec::new(),
    };
    s.copy(
        "encoder/position_encodings/encodings",
        "encoder.positional_embedding".into(),
    )?;
    s.conv("encoder/conv1", "encoder.conv1")?;
    s.conv("encoder/conv2", "encoder.conv2")?;
    for i in 0..h.n_audio_layer {
        let (src, dst) = (format!("encoder/layer_{i}"), format!("encoder.blocks.{i}"));
        s.self_attention(&src, &dst)?;
        s.ffn(&src, &dst)?;
    }
    s.layer_norm("encoder/layer_norm", "encoder.ln_post")?;

    s.copy(
        "decoder/position_encodings/encodings",
        "decoder.positional_embedding".into(),
    )?;
    s.copy(
        "decoder/embeddings/weight",
        "decoder.token_embedding.weight".into(),
    )?;
    for i in 0..h.n_text_layer {
        let (src, dst) = (format!("decoder/layer_{i}"), format!("decoder.blocks.{i}"));
        s.self_attention(&src, &dst)?;
        s.linear(
            &format!("{src}/attention/linear_0"),
            &format!("{dst}.cross_attn.query"),
        )?;
        s.split(
            &format!("{src}/attention/linear_1"),
            2,
            &[
                (0, &format!("{dst}.cross_attn.key"), false),
                (1, &format!("{dst}.cross_attn.value"), true),
            ],
        )?;
        s.linear(
            &format!("{src}/attention/linear_2"),
            &format!("{dst}.cross_attn.out"),
        )?;
        s.layer_norm(
            &format!("{src}/attention/layer_norm"),
            &format!("{dst}.cross_attn_ln"),
        )?;
        s.ffn(&src, &dst)?;
    }
    s.layer_norm("decoder/layer_norm", "decoder.ln")?;
    Ok(s.out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ct2::write_ct2;

    fn f32_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn f16_bytes(v: &[f32]) -> Vec<u8> {
        v.iter()
            .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
            .collect()
    }

    /// A one-layer Whisper with state 2 and 2-token+eot vocab: enough to
    /// check every mapping rule by value.
    fn tiny_ct2() -> Ct2Model {
        let s = 2usize;
        let seq = |n: usize, start: f32| (0..n).map(|i| start + i as f32).collect::<Vec<f32>>();
        let mut vars: Vec<(String, Vec<usize>, u8, Vec<u8>)> = vec![
            (
                "encoder/conv1/weight".into(),
                vec![s, 3, 3],
                4,
                f16_bytes(&seq(s * 9, 0.0)),
            ),
            (
                "encoder/conv1/bias".into(),
                vec![s],
                4,
                f16_bytes(&[7.0, 8.0]),
            ),
            (
                "encoder/conv2/weight".into(),
                vec![s, s, 3],
                4,
                f16_bytes(&seq(s * s * 3, 0.0)),
            ),
            (
                "encoder/conv2/bias".into(),
                vec![s],
                4,
                f16_bytes(&[1.0, 2.0]),
            ),
            (
                "encoder/position_encodings/encodings".into(),
                vec![5, s],
                0,
                f32_bytes(&seq(10, 0.0)),
            ),
            (
                "decoder/position_encodings/encodings".into(),
                vec![4, s],
                4,
                f16_bytes(&seq(8, 0.0)),
            ),
            (
                "decoder/embeddings/weight".into(),
                vec![4, s],
                4,
                f16_bytes(&seq(8, 0.0)),
            ),
            (
                "encoder/num_heads".into(),
                vec![],
                3,
                1i32.to_le_bytes().to_vec(),
            ),
        ];
        for prefix in ["encoder/layer_0", "decoder/layer_0"] {
            // Fused q|k|v: rows 0-1 are q (values 0..4), 2-3 k (4..8), 4-5 v (8..12).
            vars.push((
                format!("{prefix}/self_attention/linear_0/weight"),
                vec![3 * s, s],
                4,
                f16_bytes(&seq(12, 0.0)),
            ));
            vars.push((
                format!("{prefix}/self_attention/linear_0/bias"),
                vec![3 * s],
                4,
                f16_bytes(&[1.0, 2.0, 0.0, 0.0, 5.0, 6.0]),
            ));
            for lin in ["self_attention/linear_1", "ffn/linear_0", "ffn/linear_1"] {
                vars.push((
                    format!("{prefix}/{lin}/weight"),
                    vec![s, s],
                    4,
                    f16_bytes(&seq(4, 0.0)),
                ));
                vars.push((
                    format!("{prefix}/{lin}/bias"),
                    vec![s],
                    4,
                    f16_bytes(&[0.5, 0.5]),
                ));
            }
            for ln in ["self_attention/layer_norm", "ffn/layer_norm"] {
                vars.push((
                    format!("{prefix}/{ln}/gamma"),
                    vec![s],
                    4,
                    f16_bytes(&[1.0, 1.0]),
                ));
                vars.push((
                    format!("{prefix}/{ln}/beta"),
                    vec![s],
                    4,
                    f16_bytes(&[0.0, 0.0]),
                ));
            }
        }
        let d = "decoder/layer_0/attention";
        vars.push((
            format!("{d}/linear_0/weight"),
            vec![s, s],
            4,
            f16_bytes(&seq(4, 0.0)),
        ));
        vars.push((
            format!("{d}/linear_0/bias"),
            vec![s],
            4,
            f16_bytes(&[0.0, 0.0]),
        ));
        vars.push((
            format!("{d}/linear_1/weight"),
            vec![2 * s, s],
            4,
            f16_bytes(&seq(8, 10.0)),
        ));
        vars.push((
            format!("{d}/linear_1/bias"),
            vec![2 * s],
            4,
            f16_bytes(&[0.0, 0.0, 3.0, 4.0]),
        ));
        vars.push((
            format!("{d}/linear_2/weight"),
            vec![s, s],
            4,
            f16_bytes(&seq(4, 0.0)),
        ));
        vars.push((
            format!("{d}/linear_2/bias"),
            vec![s],
            4,
            f16_bytes(&[0.0, 0.0]),
        ));
        vars.push((
            format!("{d}/layer_norm/gamma"),
            vec![s],
            4,
            f16_bytes(&[1.0, 1.0]),
        ));
        vars.push((
            format!("{d}/layer_norm/beta"),
            vec![s],
            4,
            f16_bytes(&[0.0, 0.0]),
        ));
        for ln in ["encoder/layer_norm", "decoder/layer_norm"] {
            vars.push((format!("{ln}/gamma"), vec![s], 4, f16_bytes(&[1.0, 1.0])));
            vars.push((format!("{ln}/beta"), vec![s], 4, f16_bytes(&[0.0, 0.0])));
        }
        let refs: Vec<(&str, Vec<usize>, u8, Vec<u8>)> = vars
            .iter()
            .map(|(n, s, c, d)| (n.as_str(), s.clone(), *c, d.clone()))
            .collect();
        Ct2Model::parse(&write_ct2("WhisperSpec", &refs)).unwrap()
    }

    fn pieces() -> Vec<String> {
        ["Ġhi", "!", "<|endoftext|>", "<|startoftranscript|>"]
            .map(String::from)
            .to_vec()
    }

    fn tensor<'a>(c: &'a ConvertedWhisper, name: &str) -> &'a GgmlTensor {
        c.tensors
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
    }

    fn values(t: &GgmlTensor) -> Vec<f32> {
        match t.ty {
            GgmlType::F32 => t
                .data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect(),
            GgmlType::F16 => t
                .data
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            other => panic!("{other:?} is not read back here"),
        }
    }

    #[test]
    fn fused_qkv_is_split_and_key_has_no_bias() {
        let c = convert(&tiny_ct2(), &pieces(), Quant::F16).unwrap();
        assert_eq!(
            values(tensor(&c, "encoder.blocks.0.attn.query.weight")),
            vec![0.0, 1.0, 2.0, 3.0]
        );
        assert_eq!(
            values(tensor(&c, "encoder.blocks.0.attn.key.weight")),
            vec![4.0, 5.0, 6.0, 7.0]
        );
        assert_eq!(
            values(tensor(&c, "encoder.blocks.0.attn.value.weight")),
            vec![8.0, 9.0, 10.0, 11.0]
        );
        assert_eq!(
            values(tensor(&c, "encoder.blocks.0.attn.query.bias")),
            vec![1.0, 2.0]
        );
        assert_eq!(
            values(tensor(&c, "encoder.blocks.0.attn.value.bias")),
            vec![5.0, 6.0]
        );
        assert!(!c.tensors.iter().any(|t| t.name.ends_with("key.bias")));
        // Cross attention: k|v fused, k first.
        assert_eq!(
            values(tensor(&c, "decoder.blocks.0.cross_attn.key.weight")),
            vec![10.0, 11.0, 12.0, 13.0]
        );
        assert_eq!(
            values(tensor(&c, "decoder.blocks.0.cross_attn.value.weight")),
            vec![14.0, 15.0, 16.0, 17.0]
        );
        assert_eq!(
            values(tensor(&c, "decoder.blocks.0.cross_attn.value.bias")),
            vec![3.0, 4.0]
        );
    }

    #[test]
    fn tensor_type_rules_follow_whisper_cpp() {
        let c = convert(&tiny_ct2(), &pieces(), Quant::F16).unwrap();
        let bias = tensor(&c, "encoder.conv1.bias");
        assert_eq!((bias.ty, bias.shape.clone()), (GgmlType::F32, vec![2, 1]));
        assert_eq!(values(bias), vec![7.0, 8.0]);
        assert_eq!(tensor(&c, "encoder.positional_embedding").ty, GgmlType::F32);
        assert_eq!(tensor(&c, "decoder.positional_embedding").ty, GgmlType::F32);
        assert_eq!(tensor(&c, "decoder.ln.weight").ty, GgmlType::F32);
        assert_eq!(tensor(&c, "encoder.blocks.0.mlp.0.bias").ty, GgmlType::F32);
        assert_eq!(tensor(&c, "encoder.conv1.weight").ty, GgmlType::F16);
        assert_eq!(
            tensor(&c, "decoder.token_embedding.weight").ty,
            GgmlType::F16
        );
        assert_eq!(
            tensor(&c, "decoder.blocks.0.mlp.2.weight").ty,
            GgmlType::F16
        );
    }

    #[test]
    fn quantisation_takes_only_matrices_of_whole_blocks() {
        let q = Quant::Q5_1;
        assert_eq!(
            ggml_type_for("decoder.blocks.0.mlp.2.weight", &[384, 1536], q),
            GgmlType::Q5_1
        );
        assert_eq!(
            ggml_type_for("decoder.token_embedding.weight", &[51864, 384], q),
            GgmlType::Q5_1
        );
        assert_eq!(
            ggml_type_for("encoder.conv1.weight", &[384, 80, 3], q),
            GgmlType::F16
        );
        assert_eq!(
            ggml_type_for("encoder.blocks.0.mlp.0.bias", &[1536], q),
            GgmlType::F32
        );
        assert_eq!(
            ggml_type_for("encoder.positional_embedding", &[1500, 384], q),
            GgmlType::F32
        );
        // Rows that are not whole blocks stay f16, and the header says what was asked.
        let c = convert(&tiny_ct2(), &pieces(), q).unwrap();
        assert_eq!(
            tensor(&c, "decoder.blocks.0.mlp.2.weight").ty,
            GgmlType::F16
        );
        let mut bytes = Vec::new();
        c.write_to(&mut bytes).unwrap();
        let ftype = i32::from_le_bytes(bytes[44..48].try_into().unwrap());
        assert_eq!(ftype, 2009);
    }

    #[test]
    fn hparams_and_vocab_bytes() {
        let c = convert(&tiny_ct2(), &pieces(), Quant::F16).unwrap();
        let h = c.hparams;
        assert_eq!(
            (h.n_vocab, h.n_audio_ctx, h.n_audio_state, h.n_audio_head),
            (4, 5, 2, 1)
        );
        assert_eq!(
            (
                h.n_text_ctx,
                h.n_text_state,
                h.n_audio_layer,
                h.n_text_layer,
                h.n_mels
            ),
            (4, 2, 1, 1, 3)
        );
        // Tokens below end-of-text only, as raw bytes.
        assert_eq!(c.vocab, vec![b" hi".to_vec(), b"!".to_vec()]);
        let mut out = Vec::new();
        c.write_to(&mut out).unwrap();
        assert_eq!(&out[..4], &GGML_MAGIC.to_le_bytes());
        let ftype = i32::from_le_bytes(out[44..48].try_into().unwrap());
        assert_eq!(ftype, 1);
    }

    #[test]
    fn non_whisper_spec_is_refused_by_name() {
        let m = Ct2Model::parse(&write_ct2("TransformerSpec", &[])).unwrap();
        let err = convert(&m, &pieces(), Quant::F16)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("`TransformerSpec` is not a Whisper model"),
            "{err}"
        );
    }

    #[test]
    fn quantised_weights_are_refused_with_advice() {
        let m = Ct2Model::parse(&write_ct2(
            "WhisperSpec",
            &[("encoder/conv1/weight", vec![2, 2], 1, vec![1, 2, 3, 4])],
        ))
        .unwrap();
        let err = convert(&m, &pieces(), Quant::F16)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("quantised") && err.contains("float16"),
            "{err}"
        );
    }

    #[test]
    fn tokenizer_json_vocabulary_is_ordered_by_id() {
        let json = r#"{"model":{"vocab":{"b":1,"a":0}},"added_tokens":[{"id":2,"content":"<|endoftext|>"}]}"#;
        assert_eq!(
            vocabulary_from_tokenizer_json(json).unwrap(),
            vec!["a", "b", "<|endoftext|>"]
        );
    }
}
