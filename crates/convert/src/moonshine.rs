//! Moonshine as shipped for ONNX Runtime (`encoder_model.ort`,
//! `decoder_model_merged.ort`, `tokenizer.bin`: the `moonshine-voice` and
//! `moonshine-cpp` Python packages) → the `moonshine` GGUF the engine loads.
//!
//! ONNX graphs name their weights after the node that uses them, not after
//! the layer (`onnx::MatMul_2096_quantized`), so each engine tensor is found
//! through its node (`/layers.0/self_attn/q_proj/MatMul_quant`, input 1).
//! Weights come quantised two ways, both undone here into f32 and written as
//! f16 matrices and f32 vectors:
//! - tiny: u8 with one scale and zero point per tensor (`MatMulIntegerToFloat`
//!   or `DynamicQuantizeMatMul`): `w = (q − zp) · scale`;
//! - base: weight-only int8 with a float zero point (`X_quantized`, `X_scale`,
//!   `X_zero_point`, dequantised by a Cast/Mul/Add chain into `X_add_tensor`):
//!   `w = q · scale + zp`.
//!
//! ONNX MatMul weights are `[in, out]`; the engine wants `[out, in]`.

use std::path::Path;

use super::ggml::GgmlType;
use super::gguf::{self, GgufFile, Value};
use super::ort::{OrtDataType, OrtModel, OrtNode};
use super::ConvertError;

/// The three files of a Moonshine model folder.
pub const FILES: [&str; 3] = [
    "encoder_model.ort",
    "decoder_model_merged.ort",
    "tokenizer.bin",
];

/// Attention heads of both published sizes (Moonshine's config; the
/// weights do not say).
const N_HEADS: u32 = 8;
/// The decoder's position table (tokens of output per run).
const MAX_POSITIONS: u32 = 194;
/// Moonshine's conv stem: kernel sizes and strides of its three convolutions.
const CONV_KERNELS: [u32; 3] = [127, 7, 3];
const CONV_STRIDES: [u32; 3] = [64, 3, 2];

/// The size of a published Moonshine model, told by its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Size {
    Tiny,
    Base,
}

impl Size {
    fn of(d_model: usize) -> Result<Self, ConvertError> {
        match d_model {
            288 => Ok(Self::Tiny),
            416 => Ok(Self::Base),
            other => Err(ConvertError::Unsupported(format!(
                "a Moonshine model {other} wide; Utter converts tiny (288) and base (416)"
            ))),
        }
    }

    fn variant(self) -> &'static str {
        match self {
            Self::Tiny => "moonshine-tiny",
            Self::Base => "moonshine-base",
        }
    }

    /// The share of each head's dimensions that is rotated (tiny: 0.9 of
    /// 36; base: 32 of its 52). With the wrong one the output is garbage.
    fn partial_rotary_factor(self) -> f32 {
        match self {
            Self::Tiny => 0.9,
            Self::Base => 0.62,
        }
    }
}

/// Reads a Moonshine folder and builds the GGUF.
pub fn convert_dir(dir: &Path) -> Result<GgufFile, ConvertError> {
    let missing: Vec<&str> = FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(ConvertError::Unsupported(format!(
            "{}: a Moonshine model folder needs {}; missing: {}",
            dir.display(),
            FILES.join(", "),
            missing.join(", ")
        )));
    }
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|e| ConvertError::io(&path, e))
    };
    let (encoder, decoder, tokenizer) = (read(FILES[0])?, read(FILES[1])?, read(FILES[2])?);
    convert(&encoder, &decoder, &tokenizer)
}

/// Converts the three files' bytes.
pub fn convert(encoder: &[u8], decoder: &[u8], tokenizer: &[u8]) -> Result<GgufFile, ConvertError> {
    let enc = Graph::parse(encoder, FILES[0])?;
    let dec = Graph::parse(decoder, FILES[1])?;
    let mut out = GgufFile::default();

    // The conv stem: conv1 (no bias), a one-group GroupNorm, conv2, conv3.
    let mut channels = Vec::new();
    for (i, kernel) in CONV_KERNELS.iter().enumerate() {
        let node = enc.node(&format!("/conv{}/Conv", i + 1))?;
        let (shape, w) = enc.float(node.input(1)?)?;
        if shape.len() != 3 || shape[2] != *kernel as usize {
            return Err(enc.wrong(&format!(
                "conv{} weight has shape {shape:?}, expected [out, in, {kernel}]",
                i + 1
            )));
        }
        channels.push(shape[0] as u32);
        out.tensors.push(gguf::weight(
            &format!("enc.conv.{i}.weight"),
            shape,
            &w,
            GgmlType::F16,
        ));
        if i == 0 {
            for (op, key) in [("Mul", "weight"), ("Add", "bias")] {
                let node = enc.node(&format!("/groupnorm/{op}"))?;
                let (_, v) = enc.float(enc.constant_input(node)?)?;
                out.tensors.push(gguf::weight(
                    &format!("enc.conv.norm.{key}"),
                    vec![v.len()],
                    &v,
                    GgmlType::F32,
                ));
            }
        } else {
            let (_, b) = enc.float(node.input(2)?)?;
            out.tensors.push(gguf::weight(
                &format!("enc.conv.{i}.bias"),
                vec![b.len()],
                &b,
                GgmlType::F32,
            ));
        }
    }
    let d_model = channels[0] as usize;
    let size = Size::of(d_model)?;

    let n_enc = enc.count_layers("/layers.");
    let mut enc_ffn = 0;
    for i in 0..n_enc {
        let p = format!("/layers.{i}");
        let to = |s: &str| format!("enc.blocks.{i}.{s}");
        out.tensors
            .push(enc.norm(&format!("{p}/input_layernorm"), &to("norm_attn.weight"))?);
        out.tensors
            .extend(enc.attention(&format!("{p}/self_attn"), &to("attn"))?);
        out.tensors.push(enc.norm(
            &format!("{p}/post_attention_layernorm"),
            &to("norm_ffn.weight"),
        )?);
        for fc in ["fc1", "fc2"] {
            let prefix = format!("{p}/mlp/{fc}");
            let (w, fused_bias) = enc.linear(&prefix, &to(&format!("ffn.{fc}.weight")))?;
            if fc == "fc1" {
                enc_ffn = w.shape[0];
            }
            out.tensors.push(w);
            out.tensors
                .push(enc.bias(&prefix, fused_bias, &to(&format!("ffn.{fc}.bias")))?);
        }
    }
    // The final norm: base has its own node; tiny's is fused with the last
    // residual add into a SkipLayerNormalization (gamma is input 2).
    out.tensors.push(if enc.has_node("/layer_norm/Mul") {
        enc.norm("/layer_norm", "enc.final_norm.weight")?
    } else {
        let skip = enc
            .model
            .nodes
            .iter()
            .find(|n| n.op_type == "SkipLayerNormalization")
            .ok_or_else(|| {
                enc.wrong("no final layer norm (/layer_norm or SkipLayerNormalization)")
            })?;
        let (_, g) = enc.float(skip.input(2)?)?;
        gguf::weight("enc.final_norm.weight", vec![g.len()], &g, GgmlType::F32)
    });

    // The decoder: the token embedding (also its output layer), then layers.
    let embed = "model.decoder.embed_tokens.weight_merged_0";
    let (embed_shape, embedding) = dec.dequantized(embed)?;
    if embed_shape.len() != 2 || embed_shape[1] != d_model {
        return Err(dec.wrong(&format!(
            "the token embedding has shape {embed_shape:?}, expected [vocab, {d_model}]"
        )));
    }
    let vocab_size = embed_shape[0];
    out.tensors.push(gguf::weight(
        "dec.token_embd.weight",
        embed_shape,
        &embedding,
        GgmlType::F16,
    ));
    let n_dec = dec.count_layers("/model/decoder/layers.");
    let mut dec_ffn = 0;
    for i in 0..n_dec {
        let p = format!("/model/decoder/layers.{i}");
        let to = |s: &str| format!("dec.blocks.{i}.{s}");
        for (src, dst) in [
            ("input_layernorm", "norm_self"),
            ("post_attention_layernorm", "norm_cross"),
            ("final_layernorm", "norm_ffn"),
        ] {
            out.tensors
                .push(dec.norm(&format!("{p}/{src}"), &to(&format!("{dst}.weight")))?);
        }
        for (src, dst) in [("self_attn", "self_attn"), ("encoder_attn", "cross_attn")] {
            out.tensors
                .extend(dec.attention(&format!("{p}/{src}"), &to(dst))?);
        }
        for (sources, dst) in [(["fc1", "up_proj"], "fc1"), (["fc2", "down_proj"], "fc2")] {
            let prefix = dec.first_of(&format!("{p}/mlp"), &sources)?;
            let (w, fused_bias) = dec.linear(&prefix, &to(&format!("ffn.{dst}.weight")))?;
            if dst == "fc1" {
                // A gated (SiLU) FFN: fc1 holds the value and the gate halves.
                dec_ffn = w.shape[0] / 2;
            }
            out.tensors.push(w);
            out.tensors
                .push(dec.bias(&prefix, fused_bias, &to(&format!("ffn.{dst}.bias")))?);
        }
    }
    out.tensors
        .push(dec.norm("/model/decoder/norm", "dec.final_norm.weight")?);
    if n_enc == 0 || n_dec == 0 {
        return Err(ConvertError::Format(format!(
            "found {n_enc} encoder and {n_dec} decoder layers: not a Moonshine model"
        )));
    }

    set_hparams(
        &mut out,
        size,
        d_model,
        [n_enc, n_dec],
        [enc_ffn, dec_ffn],
        vocab_size,
        channels,
    );
    set_tokenizer(&mut out, tokenizer, vocab_size)?;
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn set_hparams(
    out: &mut GgufFile,
    size: Size,
    d_model: usize,
    layers: [usize; 2],
    ffn: [usize; 2],
    vocab_size: usize,
    channels: Vec<u32>,
) {
    out.set("general.architecture", "moonshine");
    out.set("general.name", format!("{}-en", size.variant()).as_str());
    out.set("stt.variant", size.variant());
    out.set("general.languages", Value::ArrStr(vec!["en".into()]));
    for cap in ["lang_detect", "translate", "timestamps"] {
        out.set(&format!("stt.capability.{cap}"), false);
    }
    for (i, (side, activation)) in [("encoder", "gelu"), ("decoder", "silu")]
        .iter()
        .enumerate()
    {
        let key = |k: &str| format!("stt.moonshine.{side}.{k}");
        out.set(&key("n_layers"), layers[i] as u32);
        out.set(&key("d_model"), d_model as u32);
        out.set(&key("n_heads"), N_HEADS);
        out.set(&key("n_kv_heads"), N_HEADS);
        out.set(&key("ffn_dim"), ffn[i] as u32);
        out.set(&key("activation"), *activation);
    }
    out.set("stt.moonshine.decoder.vocab_size", vocab_size as u32);
    out.set(
        "stt.moonshine.decoder.max_position_embeddings",
        MAX_POSITIONS,
    );
    out.set("stt.moonshine.decoder.tie_word_embeddings", true);
    out.set(
        "stt.moonshine.partial_rotary_factor",
        size.partial_rotary_factor(),
    );
    out.set("stt.moonshine.rope_theta", 10_000.0f32);
    out.set("stt.moonshine.attention_bias", false);
    out.set("stt.moonshine.pad_head_dim_to_multiple_of", 8u32);
    out.set("stt.moonshine.conv_stem.channels", Value::ArrU32(channels));
    out.set(
        "stt.moonshine.conv_stem.kernel_sizes",
        Value::ArrU32(CONV_KERNELS.to_vec()),
    );
    out.set(
        "stt.moonshine.conv_stem.strides",
        Value::ArrU32(CONV_STRIDES.to_vec()),
    );
    out.set("stt.moonshine.conv_stem.groupnorm_num_groups", 1u32);
    out.set("stt.moonshine.conv_stem.groupnorm_eps", 1e-5f32);
    out.set("stt.moonshine.decoder_start_token_id", 1u32);
    out.set("stt.moonshine.bos_token_id", 1u32);
    out.set("stt.moonshine.eos_token_id", 2u32);
    out.set("stt.moonshine.pad_token_id", 2u32);
    out.set("stt.frontend.type", "raw");
    out.set("stt.frontend.sample_rate", 16_000u32);
    out.set("stt.frontend.num_mels", 1u32);
}

/// `tokenizer.bin`: length-prefixed pieces (one length byte; from 128 a
/// second byte holds the high bits). Ids 3–258 are the raw bytes.
pub fn read_tokenizer(bytes: &[u8]) -> Result<Vec<&[u8]>, ConvertError> {
    let mut pieces = Vec::new();
    let mut at = 0;
    let truncated = || ConvertError::Truncated(format!("{}: a token runs past the end", FILES[2]));
    while at < bytes.len() {
        let mut len = usize::from(bytes[at]);
        at += 1;
        if len >= 128 {
            len = (len & 0x7f) | usize::from(*bytes.get(at).ok_or_else(truncated)?) << 7;
            at += 1;
        }
        pieces.push(bytes.get(at..at + len).ok_or_else(truncated)?);
        at += len;
    }
    Ok(pieces)
}

fn set_tokenizer(out: &mut GgufFile, bytes: &[u8], vocab_size: usize) -> Result<(), ConvertError> {
    let pieces = read_tokenizer(bytes)?;
    if pieces.len() < 259 || pieces.len() > vocab_size {
        return Err(ConvertError::Format(format!(
            "{}: {} tokens for an embedding of {vocab_size} rows",
            FILES[2],
            pieces.len()
        )));
    }
    let (mut tokens, mut types) = (Vec::new(), Vec::new());
    for (id, piece) in pieces.iter().enumerate() {
        if (3..=258).contains(&id) {
            tokens.push(format!("<0x{:02X}>", id - 3));
            types.push(6); // byte
            continue;
        }
        let text = String::from_utf8_lossy(piece).into_owned();
        types.push(match text.as_str() {
            "<unk>" => 2,
            "<s>" | "</s>" => 3,
            t if t.starts_with("<<ST_") && t.ends_with(">>") => 3,
            _ => 1,
        });
        tokens.push(text);
    }
    // base's file has 32000 pieces for 32768 embedding rows: the rest are
    // unused special tokens.
    for id in tokens.len()..vocab_size {
        tokens.push(format!("<<ST_{}>>", id.saturating_sub(32_000)));
        types.push(3);
    }
    out.set("tokenizer.ggml.model", "bpe");
    out.set("tokenizer.ggml.pre", "default");
    out.set("tokenizer.ggml.tokens", Value::ArrStr(tokens));
    out.set("tokenizer.ggml.token_type", Value::ArrI32(types));
    out.set("tokenizer.ggml.byte_fallback", true);
    out.set("tokenizer.ggml.unknown_token_id", 0u32);
    out.set("tokenizer.ggml.bos_token_id", 1u32);
    out.set("tokenizer.ggml.eos_token_id", 2u32);
    out.set("tokenizer.ggml.padding_token_id", 2u32);
    out.set("tokenizer.ggml.add_bos_token", true);
    Ok(())
}

/// One `.ort` graph, with lookups that name what is missing.
struct Graph<'a> {
    model: OrtModel<'a>,
    file: &'static str,
}

impl<'a> Graph<'a> {
    fn parse(bytes: &'a [u8], file: &'static str) -> Result<Self, ConvertError> {
        Ok(Self {
            model: OrtModel::parse(bytes, file)?,
            file,
        })
    }

    fn wrong(&self, detail: &str) -> ConvertError {
        ConvertError::Unsupported(format!(
            "{}: not a Moonshine graph Utter knows: {detail}",
            self.file
        ))
    }

    fn has_node(&self, name: &str) -> bool {
        self.model.node(name).is_some()
    }

    fn node(&self, name: &str) -> Result<&OrtNode<'a>, ConvertError> {
        self.model
            .node(name)
            .ok_or_else(|| self.wrong(&format!("no node `{name}`")))
    }

    /// The projection under `prefix` called by the first of `names` present.
    fn first_of(&self, prefix: &str, names: &[&str]) -> Result<String, ConvertError> {
        names
            .iter()
            .map(|n| format!("{prefix}/{n}"))
            .find(|p| {
                self.has_node(&format!("{p}/MatMul_quant")) || self.has_node(&format!("{p}/MatMul"))
            })
            .ok_or_else(|| self.wrong(&format!("none of {names:?} under `{prefix}`")))
    }

    fn count_layers(&self, prefix: &str) -> usize {
        (0..)
            .take_while(|i| {
                let p = format!("{prefix}{i}/");
                self.model.nodes.iter().any(|n| n.name.starts_with(&p))
            })
            .count()
    }

    fn initializer(&self, name: &str) -> Result<&super::ort::OrtTensor<'a>, ConvertError> {
        self.model
            .initializer(name)
            .ok_or_else(|| self.wrong(&format!("no tensor `{name}`")))
    }

    /// A float tensor: an initializer, or the output of base's weight-only
    /// int8 dequantisation (`X_add_tensor` = `X_quantized · X_scale + X_zero_point`).
    fn float(&self, name: &str) -> Result<(Vec<usize>, Vec<f32>), ConvertError> {
        if let Some(t) = self.model.initializer(name) {
            return Ok((t.dims.clone(), t.to_f32()?));
        }
        match name.strip_suffix("_add_tensor") {
            Some(base)
                if self
                    .model
                    .initializer(&format!("{base}_quantized"))
                    .is_some() =>
            {
                self.dequantized(base)
            }
            Some(base) => Err(self.wrong(&format!(
                "no tensor `{name}` (nor its quantised form `{base}_quantized`)"
            ))),
            None => Err(self.wrong(&format!("no tensor `{name}`"))),
        }
    }

    /// `base`'s quantised weight in f32: `q · scale + zp` when the zero point
    /// is a float (base), `(q − zp) · scale` when it is an integer (tiny).
    fn dequantized(&self, base: &str) -> Result<(Vec<usize>, Vec<f32>), ConvertError> {
        let (q, scale, zp) = (
            format!("{base}_quantized"),
            format!("{base}_scale"),
            format!("{base}_zero_point"),
        );
        let quantized = self.initializer(&q)?;
        if self.initializer(&zp)?.data_type != OrtDataType::F32 {
            return self.asymmetric(&q, &scale, &zp);
        }
        let scale = self.initializer(&scale)?.scalar()?;
        let zero = self.initializer(&zp)?.scalar()?;
        let w = quantized
            .to_f32()?
            .iter()
            .map(|v| v * scale + zero)
            .collect();
        Ok((quantized.dims.clone(), w))
    }

    /// The query, key, value and output projections of the attention under
    /// `prefix`, named `{name}.{q,k,v,out}.weight` (base calls the output `dense`).
    fn attention(
        &self,
        prefix: &str,
        name: &str,
    ) -> Result<Vec<super::ggml::GgmlTensor>, ConvertError> {
        let mut weights = Vec::new();
        for (proj, short) in [("q_proj", "q"), ("k_proj", "k"), ("v_proj", "v")] {
            let (w, _) = self.linear(
                &format!("{prefix}/{proj}"),
                &format!("{name}.{short}.weight"),
            )?;
            weights.push(w);
        }
        let o = self.first_of(prefix, &["o_proj", "dense"])?;
        weights.push(self.linear(&o, &format!("{name}.out.weight"))?.0);
        Ok(weights)
    }

    /// The weight of projection `prefix` as `[out, in]`, and the name of a
    /// bias fused into its node (tiny's quantised MatMuls carry one).
    fn linear(
        &self,
        prefix: &str,
        name: &str,
    ) -> Result<(super::ggml::GgmlTensor, Option<&'a str>), ConvertError> {
        let node = self
            .model
            .node(&format!("{prefix}/MatMul_quant"))
            .or_else(|| self.model.node(&format!("{prefix}/MatMul")))
            .ok_or_else(|| self.wrong(&format!("no MatMul under `{prefix}`")))?;
        let optional = |i: usize| node.inputs.get(i).copied().filter(|s| !s.is_empty());
        let (shape, w, bias) = match node.op_type {
            // [a, q, a_scale, w_scale, a_zp, w_zp, (bias)]
            "MatMulIntegerToFloat" => {
                let (shape, w) = self.asymmetric(node.input(1)?, node.input(3)?, node.input(5)?)?;
                (shape, w, optional(6))
            }
            // [a, q, w_scale, w_zp, (bias)]
            "DynamicQuantizeMatMul" => {
                let (shape, w) = self.asymmetric(node.input(1)?, node.input(2)?, node.input(3)?)?;
                (shape, w, optional(4))
            }
            "MatMul" => {
                let (shape, w) = self.float(node.input(1)?)?;
                (shape, w, None)
            }
            other => return Err(self.wrong(&format!("`{}` is a {other}", node.name))),
        };
        let [rows, cols] = shape[..] else {
            return Err(self.wrong(&format!("`{}`'s weight has shape {shape:?}", node.name)));
        };
        // [in, out] → [out, in].
        let mut t = vec![0.0f32; w.len()];
        for r in 0..rows {
            for c in 0..cols {
                t[c * rows + r] = w[r * cols + c];
            }
        }
        Ok((
            gguf::weight(name, vec![cols, rows], &t, GgmlType::F16),
            bias,
        ))
    }

    /// u8/i8 weights with an integer zero point: `(q − zp) · scale`.
    fn asymmetric(
        &self,
        q: &str,
        scale: &str,
        zp: &str,
    ) -> Result<(Vec<usize>, Vec<f32>), ConvertError> {
        let q = self.initializer(q)?;
        let scale = self.initializer(scale)?.scalar()?;
        let zero = self.initializer(zp)?.scalar()?;
        let w = q.to_f32()?.iter().map(|v| (v - zero) * scale).collect();
        Ok((q.dims.clone(), w))
    }

    /// The bias of `prefix`: fused into its MatMul, or the constant of its `Add`.
    fn bias(
        &self,
        prefix: &str,
        fused: Option<&str>,
        name: &str,
    ) -> Result<super::ggml::GgmlTensor, ConvertError> {
        let source = match fused {
            Some(f) => f,
            None => self.constant_input(self.node(&format!("{prefix}/Add"))?)?,
        };
        let (_, b) = self.float(source)?;
        Ok(gguf::weight(name, vec![b.len()], &b, GgmlType::F32))
    }

    /// The one input of `node` that is a stored constant.
    fn constant_input(&self, node: &OrtNode<'a>) -> Result<&'a str, ConvertError> {
        let constants: Vec<&str> = node
            .inputs
            .iter()
            .copied()
            .filter(|i| self.model.initializer(i).is_some())
            .collect();
        match constants[..] {
            [one] => Ok(one),
            _ => Err(self.wrong(&format!(
                "`{}` has {} constant inputs, expected one",
                node.name,
                constants.len()
            ))),
        }
    }

    /// A layer norm's gamma: input 1 of a `LayerNormalization` (tiny), or the
    /// constant of the `Mul` of a decomposed one (base). Neither has a bias.
    fn norm(&self, prefix: &str, name: &str) -> Result<super::ggml::GgmlTensor, ConvertError> {
        let source = match self.model.node(&format!("{prefix}/LayerNormalization")) {
            Some(ln) => ln.input(1)?,
            None => self.constant_input(self.node(&format!("{prefix}/Mul"))?)?,
        };
        let (_, g) = self.float(source)?;
        Ok(gguf::weight(name, vec![g.len()], &g, GgmlType::F32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_lengths_take_a_second_byte_from_128() {
        let mut bytes = vec![2, b'h', b'i'];
        bytes.extend([0x80 | 2, 1]); // 2 + (1 << 7) = 130
        bytes.extend(vec![b'x'; 130]);
        let pieces = read_tokenizer(&bytes).unwrap();
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0], b"hi");
        assert_eq!(pieces[1].len(), 130);
        assert!(read_tokenizer(&[5, b'a']).is_err(), "runs past the end");
    }

    #[test]
    fn a_folder_without_the_three_files_names_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("encoder_model.ort"), b"x").unwrap();
        let err = convert_dir(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("missing: decoder_model_merged.ort, tokenizer.bin"),
            "{err}"
        );
    }

    #[test]
    fn an_ort_file_of_another_model_is_refused_by_what_it_lacks() {
        let file = crate::testing::ort_file(&[], &[("/x/Add", "Add", &["a", "b"])]);
        let err = convert(&file, &file, &[]).unwrap_err().to_string();
        assert!(err.contains("no node `/conv1/Conv`"), "{err}");
    }
}
