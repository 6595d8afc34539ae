//! Loaders: one raw `config.json` → one validated [`Spec`], per `model_type`.
//!
//! Each family reads its fields with the defaults of its `transformers` config class. The helpers
//! here are the parts families share: RoPE parameters in both the classic and the transformers 5
//! format, per-layer attention plans, and the checks every Spec must pass.

mod blt;
mod cpmant;
mod dbrx;
mod deepseek;
mod deepseek_v4;
mod delta;
mod dory;
mod dots3;
mod echo;
mod ergo;
mod falcon;
mod falcon_h1;
mod gemma;
mod gemma3n;
mod gemma4;
mod gpt2;
mod gpt_oss;
mod heads;
mod hrm;
mod inkling;
mod jetmoe;
mod kolibri;
pub mod llama;
mod llama4;
mod longcat;
mod mamba;
mod mamba2;
mod minimax_m3;
mod modernbert;
mod nemotron_h;
mod qwen4_exp;
pub mod reads;
mod recurrent_gemma;
mod registry;
mod rwkv;
mod towers;
mod wrappers;
mod xlstm;
mod zamba;
mod zaya;

pub use heads::HeadDim;
pub(crate) use heads::{head_dim, heads};

use crate::config::{Config, MAX_LAYERS};
use crate::error::{Error, Result};
use crate::spec::{AttnKind, AttnSpan, Ignored, Rope, RopeFreqs, RopeScaling, Spec, Tower};
use serde_json::Value;

pub use registry::{Family, Reader, FAMILIES};

/// Parse `text` (the contents of `file`) as a config.json and load its Spec.
pub fn load_json(file: &str, text: &str, name: &str, lenient: bool) -> Result<Spec> {
    load(file, &parse_json(file, text)?, name, lenient)
}

/// A config file's JSON as transformers reads it: Python's `json`, which allows a byte-order mark
/// and the words `Infinity`, `-Infinity` and `NaN` (see `python_literals`), and transformers' own
/// form of those, `{"__float__": "Infinity"}` (`float_tags`).
pub fn parse_json(file: &str, text: &str) -> Result<Value> {
    // Editors on some systems start UTF-8 files with a byte-order mark; JSON has no use for it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = python_literals(text);
    let mut v: Value = serde_json::from_str(&text).map_err(|e| {
        Error::file(
            file,
            format!(
                "invalid JSON at line {}, column {}: {}",
                e.line(),
                e.column(),
                json_reason(&e)
            ),
        )
    })?;
    float_tags(&mut v);
    Ok(v)
}

/// Python's `json` writes float('inf') and NaN as the bare words `Infinity`, `-Infinity` and
/// `NaN`, which JSON does not have and serde_json refuses (Mamba2's `time_step_limit` is
/// `[0.0, Infinity]`). Outside strings, each becomes a string of the same word, which
/// `Config::float_value` reads as the number it names. Positions in error messages move only
/// after such a word, by its two quotes.
fn python_literals(text: &str) -> std::borrow::Cow<'_, str> {
    const WORDS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    if !WORDS.iter().any(|w| text.contains(w)) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if !in_string {
            if let Some(w) = WORDS.iter().find(|w| rest.starts_with(*w)) {
                out.push('"');
                out.push_str(w);
                out.push('"');
                rest = &rest[w.len()..];
                continue;
            }
        }
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ => {}
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.into()
}

/// transformers 5's `save_pretrained` writes a non-finite float as `{"__float__": "Infinity"}`
/// (`-Infinity`, `NaN`), and reads it back as the float: each such object becomes the word as a
/// string, as `python_literals` makes of the bare word. Another object is left as it is, as
/// transformers leaves it.
fn float_tags(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.len() == 1 {
                if let Some(Value::String(w)) = o.get("__float__") {
                    if matches!(w.as_str(), "Infinity" | "-Infinity" | "NaN") {
                        *v = Value::String(w.clone());
                        return;
                    }
                }
            }
            o.values_mut().for_each(float_tags);
        }
        Value::Array(a) => a.iter_mut().for_each(float_tags),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

fn json_reason(e: &serde_json::Error) -> String {
    // serde_json appends " at line L column C"; the position is already in our message.
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Load the Spec of a config.json's `value`. Every key must be one the family's loader reads or
/// one its registry row knows leaves the forward pass unchanged; any other is refused with an error
/// naming it, or, when `lenient`, listed in the Spec's `ignored`.
pub fn load(file: &str, value: &Value, name: &str, lenient: bool) -> Result<Spec> {
    let top = Config::new(file, value)?;
    let model_type = top.opt_string("model_type")?.ok_or_else(|| {
        top.err(
            "model_type",
            format!(
                "is missing; give one of the {} model types anatomy reads (`anatomy list --model-types` prints them)",
                model_types().len()
            ),
        )
    })?;
    // Configs of DeepSeek V3's architecture under another name (Kimi K2) load as DeepSeek V3.
    let declares_v3 = top
        .get("architectures")
        .and_then(|a| a.get(0))
        .and_then(|a| a.as_str())
        == Some("DeepseekV3ForCausalLM");
    let (row, model_type) = match registry::find(&model_type) {
        Some(row) => (row, model_type),
        None if declares_v3 => (
            registry::find("deepseek_v3").expect("a registry row"),
            "deepseek_v3".to_string(),
        ),
        None => return Err(top.err("model_type", unsupported(&model_type))),
    };
    if !row.standalone {
        let outer = registry::FAMILIES
            .iter()
            .find(|f| f.text == Some(row.model_type))
            .map_or("multimodal", |f| f.model_type);
        return Err(top.err(
            "model_type",
            format!("`{model_type}` is the language model inside a `{outer}` config: transformers builds no model of it alone; give the whole `{outer}` config"),
        ));
    }
    // A multimodal wrapper holds its language model in `text_config`, stored under `language_model.`.
    let flat = row.text_at_top && !top.present("text_config");
    let (cfg, text_row) = match row.text {
        Some(text_type) if flat => (
            top.view(),
            registry::find(text_type).expect("a registry row for the wrapper's language model"),
        ),
        Some(text_type) => {
            let text = top.sub("text_config")?.ok_or_else(|| {
                top.err(
                    "text_config",
                    format!("is missing; a `{model_type}` config holds its language model there"),
                )
            })?;
            let t = text.opt_string("model_type")?.unwrap_or(text_type.into());
            let t = match row.text_aliases.contains(&t.as_str()) {
                true => text_type.to_string(),
                false => t,
            };
            let text_row = registry::find(&t).filter(|r| r.text.is_none()).ok_or_else(|| {
                text.err(
                    "model_type",
                    format!("`{t}` is not a language model anatomy reads inside `{model_type}`; expected `{text_type}`"),
                )
            })?;
            (text, text_row)
        }
        None => (top.view(), row),
    };
    let cfg = cfg.renamed(text_row.renames);
    let text_type = if row.text.is_some() {
        text_row.model_type
    } else {
        &model_type
    };
    let mut spec = match row.text_read {
        Some(read) => read(&top, &cfg, text_type, row.name, name)?,
        None => text_row.read.read(&cfg, text_type, text_row.name, name)?,
    };
    spec.model_type = model_type.clone();
    if row.text.is_some() {
        spec.tied = match row.tie {
            registry::Tie::Text => spec.tied,
            registry::Tie::Wrapper(default) => top.flag("tie_word_embeddings", default)?,
            registry::Tie::EitherNested(default) if flat => default || spec.tied,
            registry::Tie::Either(default) | registry::Tie::EitherNested(default) => {
                top.flag("tie_word_embeddings", default)? || spec.tied
            }
        };
        spec.hf_wrap = row.wrap;
        // A head of the wrapper's own scales nothing unless it repeats the language model's
        // scale.
        if !matches!(row.tie, registry::Tie::Text) && !row.head_scale {
            spec.logits_mult = 1.0;
        }
    }
    // A wrapper's towers, or a language model's own encoders beside its embedding (Phi-4-
    // multimodal's `embed_tokens_extend`).
    spec.towers = row
        .parts
        .iter()
        .map(|p| {
            Ok(Tower {
                what: p.what.to_string(),
                prefix: p.prefix.to_string(),
                blocks: (p.build)(&top)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    spec.image = match row.image {
        Some(read) => read(&top)?,
        None => None,
    };
    // M-RoPE's split must fill a head's rotated pairs, or transformers cannot run the model.
    if let Some(m) = spec.image.as_ref().and_then(|i| i.encoder.mrope()) {
        if !m.fits(spec.attn.head_dim / 2) {
            spec.image = None;
        }
    }
    // A part whose config the wrapper lacks is not built (Gemma 4 without audio): not listed.
    spec.towers.retain(|p| p.params() != Some(0));
    spec.quant = crate::quant::Declared::read(&top)?;
    check(&cfg, &spec)?;
    echo::check(&cfg, text_row.echoes, &spec)?;
    (spec.ignored, spec.not_read) = account(&top, row, text_row, flat, lenient)?;
    Ok(spec)
}

/// Every key no loader read: inert for its family; not read by transformers for its model type
/// either (so it cannot change the model: accepted, and returned second to be listed); or
/// refused (listed first when `lenient`). `flat`: a wrapper's language model was read from its
/// top level, so a key there may be the language model's.
fn account(
    top: &Config,
    row: &Family,
    text_row: &Family,
    flat: bool,
    lenient: bool,
) -> Result<(Vec<Ignored>, Vec<Ignored>)> {
    let mut ignored = Vec::new();
    let mut not_read = Vec::new();
    for (path, value) in top.unread() {
        let (rows, key) = match path.strip_prefix("text_config.") {
            Some(inner) if row.text.is_some() => (vec![text_row], inner),
            _ if flat => (vec![row, text_row], path.as_str()),
            _ => (vec![row], path.as_str()),
        };
        if rows.iter().any(|r| r.is_inert(key)) {
            continue;
        }
        let shown = value.to_string();
        let shown = if shown.len() > 120 {
            format!(
                "{}…",
                &shown[..shown
                    .char_indices()
                    .nth(117)
                    .map_or(shown.len(), |(i, _)| i)]
            )
        } else {
            shown
        };
        // A top-level key (of the file or its text_config) that no row's model type reads in
        // transformers. A key inside an object (`rope_scaling.x`) is the object's reader's.
        // Every type the rows read that the table holds must leave it unread (a type it does
        // not hold decides nothing), and one at least must be held.
        let verdicts: Vec<Option<bool>> = rows
            .iter()
            .flat_map(|r| std::iter::once(r.model_type).chain(r.aliases.iter().copied()))
            .map(|t| reads::reads(t, key))
            .collect();
        let unread_by_transformers = !key.contains('.')
            && verdicts.contains(&Some(false))
            && !verdicts.contains(&Some(true));
        if unread_by_transformers {
            not_read.push(Ignored {
                key: path,
                value: shown,
            });
            continue;
        }
        if !lenient {
            return Err(Error::new(
                top.file,
                path.clone(),
                format!(
                    "= {shown}: transformers reads this key for a `{}` model and anatomy does not know how it changes one, so its numbers could be wrong; \
                     remove the key if it is not the model's, or pass --lenient to ignore it (every output then says so)",
                    text_row.model_type
                ),
            ));
        }
        ignored.push(Ignored {
            key: path,
            value: shown,
        });
    }
    Ok((ignored, not_read))
}

/// A Spec with every size zero and every option off, for a loader to fill in.
pub(crate) fn skeleton(name: &str, model_type: &str, family: &str) -> Spec {
    use crate::spec::*;
    Spec {
        name: name.to_string(),
        model_type: model_type.to_string(),
        family: family.to_string(),
        vocab: 0,
        hidden: 0,
        layers: 0,
        context: 0,
        embedding: Embedding {
            scale_by_sqrt_hidden: false,
            learned_positions: None,
            position_offset: 0,
            multiplier: 1.0,
            norm: false,
            affine: false,
            projected: None,
        },
        attn: Attention {
            kind: AttnKind::Mha,
            heads: 0,
            kv_heads: 0,
            head_dim: 0,
            v_head_dim: 0,
            v_scale: 1.0,
            moa: None,
            dynamic_mask: None,
            qkv_bias: false,
            o_bias: false,
            qk_norm: QkNorm::None,
            softcap: None,
            sinks: false,
            scale_dim: 1.0,
            scale_mult: 1.0,
            mla: None,
            qkv: Qkv::Separate,
            clip_qkv: None,
            query_scale: None,
            sub_norm: false,
            out_gate: None,
            differential: false,
            o_bias_last: false,
            v_norm: false,
            v_from_k: false,
            shares_kv: false,
            block_index: None,
            pool_index: None,
            qsa: None,
            cca: None,
            rel_logits: None,
            kv_conv: None,
            l2_clip: None,
            token_sinks: false,
            kv_inputs: false,
            v4: None,
        },
        layer_attn: vec![],
        mlp: Mlp::gated(0, crate::spec::Act::Silu),
        moe: None,
        recurrent: None,
        plan: Vec::new(),
        recurrent_place: None,
        stream_mix: None,
        mup: None,
        norm: Norm {
            kind: NormKind::Rms,
            eps: 1e-6,
            unit_offset: false,
            place: NormPlace::Pre,
        },
        position: Position::Learned,
        tied: false,
        final_softcap: None,
        logits_mult: 1.0,
        residual_mult: 1.0,
        residual: Residual::Add,
        depth_scaled: false,
        head_bias: false,
        head_rows: None,
        prompt: None,
        out_conv: None,
        logits_kept: None,
        skip_first_attn_norm: false,
        head_transform: None,
        per_layer_input: None,
        shared: None,
        ngram_ple: None,
        ngpt: None,
        final_norm_kind: None,
        laurel: None,
        sparsity: Vec::new(),
        gated_norm: None,
        layer_scalar: false,
        stream: Stream::Plain,
        mlp_widths: Vec::new(),
        block: Block::Sequential,
        layout: Layout::Llama,
        hf_wrap: HfWrap::None,
        towers: Vec::new(),
        image: None,
        prefix_lm: false,
        quant: None,
        mtp_layers: 0,
        draft: None,
        kv_from: vec![],
        ignored: Vec::new(),
        not_read: Vec::new(),
    }
}

/// Every model type anatomy reads, aliases included, in registry order.
pub fn model_types() -> Vec<&'static str> {
    FAMILIES
        .iter()
        .flat_map(|f| std::iter::once(f.model_type).chain(f.aliases.iter().copied()))
        .collect()
}

/// Model types of transformers 5.25's causal-LM and image-text-to-text mappings that anatomy does
/// not read yet, and what they hold that it does not read. README.md's tables say the same (a
/// test holds them together).
pub const NOT_YET: &[(&str, &str)] = &[
    ("apertus1p5", IMAGE_TEXT),
    ("blip", IMAGE_TEXT),
    ("chameleon", IMAGE_TEXT),
    ("cosmos3_edge", IMAGE_TEXT),
    ("cosmos3_omni", IMAGE_TEXT),
    ("deepseek_ocr2", IMAGE_TEXT),
    ("diffusion_gemma", IMAGE_TEXT),
    ("ernie4_5_vl_moe", IMAGE_TEXT),
    ("evolla", IMAGE_TEXT),
    ("fast_vlm", IMAGE_TEXT),
    ("florence2", IMAGE_TEXT),
    ("glm5_next", IMAGE_TEXT),
    ("idefics", IMAGE_TEXT),
    ("inkling_mm_model", IMAGE_TEXT),
    ("janus", IMAGE_TEXT),
    ("kosmos-2", IMAGE_TEXT),
    ("kosmos-2.5", IMAGE_TEXT),
    ("mistral_large4", IMAGE_TEXT),
    ("molmo2", IMAGE_TEXT),
    ("muse_glimmer", IMAGE_TEXT),
    ("muse_spark", IMAGE_TEXT),
    ("nemotron_h_omni", IMAGE_TEXT),
    ("ovis2_5", IMAGE_TEXT),
    ("perception_lm", IMAGE_TEXT),
    ("pi0", IMAGE_TEXT),
    ("pi05", IMAGE_TEXT),
    ("pix2struct", IMAGE_TEXT),
    ("pp_formulanet", IMAGE_TEXT),
    ("shieldgemma2", IMAGE_TEXT),
    ("step3p7", IMAGE_TEXT),
    ("t5gemma2", IMAGE_TEXT),
    ("udop", IMAGE_TEXT),
    ("unlimited_ocr", IMAGE_TEXT),
    ("vision-encoder-decoder", IMAGE_TEXT),
];

/// Why the image-text-to-text types of `NOT_YET` are refused.
const IMAGE_TEXT: &str =
    "an image-text-to-text model: its vision towers and the language model between them";

/// Why `model_type` is refused: a decoder not read yet, what it holds; otherwise the closest
/// type anatomy reads, where one is close enough to be a typo.
fn unsupported(model_type: &str) -> String {
    let all = model_types();
    let list = format!(
        "anatomy reads {} model types (`anatomy list --model-types` prints them)",
        all.len()
    );
    // A multimodal wrapper whose language model anatomy reads (Inkling 2's `inkling2`).
    let text = format!("{model_type}_text");
    if all.contains(&text.as_str()) {
        return format!("`{model_type}` is not supported, but its language model `{text}` is: give its `text_config` as the config; {list}");
    }
    if let Some((_, what)) = NOT_YET.iter().find(|(t, _)| *t == model_type) {
        return format!("`{model_type}` is not supported yet ({what}); {list}");
    }
    let near = all
        .iter()
        .map(|t| (strsim::normalized_damerau_levenshtein(model_type, t), *t))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match near {
        Some((_, t)) => format!("`{model_type}` is not supported; did you mean `{t}`? {list}"),
        None => format!("`{model_type}` is not supported; {list}"),
    }
}

/// Number of layers, bounded.
/// A per-layer list that decides the layer count (`key`, or what `source` names where the list
/// comes from several keys): 1 to MAX_LAYERS entries, and a `num_hidden_layers` that agrees
/// with it, since the class builds one layer per entry (`family`).
pub(crate) fn layers_listed<T>(
    cfg: &Config,
    kinds: Vec<T>,
    key: &str,
    source: &str,
    family: &str,
) -> Result<Vec<T>> {
    if kinds.is_empty() || kinds.len() as u64 > MAX_LAYERS {
        return Err(cfg.err(
            key,
            format!("gives {} layers; give 1 to {MAX_LAYERS}", kinds.len()),
        ));
    }
    if let Some(n) = cfg.opt_size("num_hidden_layers")? {
        if n != kinds.len() as u64 {
            return Err(cfg.err(
                "num_hidden_layers",
                format!(
                    "is {n}, but {source} gives {} layers; {family} builds one layer per entry",
                    kinds.len()
                ),
            ));
        }
    }
    Ok(kinds)
}

pub(crate) fn layer_count(cfg: &Config, keys: &[&str], default: Option<u64>) -> Result<u64> {
    let n = cfg.size_any(keys, default)?;
    let key = keys.iter().find(|k| cfg.has(k)).unwrap_or(&keys[0]);
    cfg.bounded(key, n, MAX_LAYERS)
}

/// Softmax attention over `heads` query heads sharing `kv` K/V heads of `head_dim`, scaled by
/// 1/√head_dim, with every option off; a loader switches on what its family has.
pub(crate) fn plain_attention(heads: u64, kv: u64, head_dim: u64) -> crate::spec::Attention {
    crate::spec::Attention {
        kind: attn_kind(heads, kv),
        heads,
        kv_heads: kv,
        head_dim,
        v_head_dim: head_dim,
        v_scale: 1.0,
        moa: None,
        dynamic_mask: None,
        block_index: None,
        pool_index: None,
        qsa: None,
        cca: None,
        rel_logits: None,
        kv_conv: None,
        l2_clip: None,
        token_sinks: false,
        kv_inputs: false,
        v4: None,
        qkv_bias: false,
        o_bias: false,
        qk_norm: crate::spec::QkNorm::None,
        softcap: None,
        sinks: false,
        scale_dim: head_dim as f64,
        scale_mult: 1.0,
        mla: None,
        qkv: crate::spec::Qkv::Separate,
        clip_qkv: None,
        query_scale: None,
        sub_norm: false,
        out_gate: None,
        differential: false,
        o_bias_last: false,
        v_norm: false,
        v_from_k: false,
        shares_kv: false,
    }
}

/// `num_experts_per_tok`, which must not exceed the `experts` there are.
/// A Mixtral-style router: `experts` experts of `intermediate`, the top `top_k` by softmax, no
/// shared expert, no biases, no groups, one tensor per expert. Families state what differs.
pub(crate) fn plain_moe(experts: u64, top_k: u64, intermediate: u64) -> crate::spec::Moe {
    crate::spec::Moe {
        experts,
        top_k,
        expert_intermediate: intermediate,
        shared_experts: 0,
        shared_intermediate: 0,
        shared_gate: false,
        shared_fused: false,
        shared_bias: false,
        shared_average: false,
        post_norm: false,
        scoring: crate::spec::Scoring::Softmax,
        norm_topk_prob: false,
        router_bias: false,
        correction_bias: false,
        expert_bias: false,
        n_group: 1,
        topk_group: 1,
        routed_scaling: 1.0,
        renorm_eps: 1e-20,
        swiglu_limit: None,
        swiglu_plain: false,
        storage: crate::spec::ExpertStorage::PerExpert,
        out_bias: false,
        router_softcap: None,
        zero_experts: 0,
        act_clips: None,
        expert_out_norm: false,
        shared_out_norm: false,
        hash_layers: None,
        shared_clamp: false,
        router_norm: false,
        expert_scale: false,
        router_mlp: None,
        glu_softcaps: None,
    }
}

/// RMSNorm before each sublayer, with `rms_norm_eps` (the config class's `eps` when absent).
pub(crate) fn pre_rms(cfg: &Config, eps: f64) -> Result<crate::spec::Norm> {
    Ok(crate::spec::Norm {
        kind: crate::spec::NormKind::Rms,
        eps: cfg.float("rms_norm_eps", eps)?,
        unit_offset: false,
        place: crate::spec::NormPlace::Pre,
    })
}

/// The activation named by `key` (`hidden_act`), as transformers' `ACT2FN` computes it; an
/// unknown name is refused rather than run as something else.
pub(crate) fn act(cfg: &Config, key: &str, default: &str) -> Result<crate::spec::Act> {
    act_renamed(cfg, key, default, &[])
}

/// `act`, with the names the config class rewrites first (`gelu` → `gelu_pytorch_tanh`).
pub(crate) fn act_renamed(
    cfg: &Config,
    key: &str,
    default: &str,
    renames: &[(&str, &str)],
) -> Result<crate::spec::Act> {
    let name = cfg.string(key, default)?;
    let name = renames
        .iter()
        .find(|(from, _)| *from == name)
        .map_or(name.clone(), |(_, to)| to.to_string());
    crate::spec::Act::parse(&name).ok_or_else(|| {
        cfg.err(
            key,
            format!(
                "`{name}` is not an activation anatomy computes; valid: {}",
                crate::spec::Act::NAMES
            ),
        )
    })
}

/// The number of routed experts under `key`, positive and at most MAX_EXPERTS.
pub(crate) fn experts(cfg: &Config, key: &str, default: Option<u64>) -> Result<u64> {
    cfg.bounded(key, cfg.size(key, default)?, crate::config::MAX_EXPERTS)
}

/// A head count that must divide the width `hidden` (the config's `hidden_key`): every head gets
/// hidden / heads dims.
pub(crate) fn dividing_heads(
    cfg: &Config,
    heads: u64,
    heads_key: &str,
    hidden: u64,
    hidden_key: &str,
) -> Result<u64> {
    if !hidden.is_multiple_of(heads) {
        return Err(cfg.err(
            hidden_key,
            format!(
                "is {hidden}, not divisible by {heads_key} ({heads}); it must be a multiple of it"
            ),
        ));
    }
    Ok(heads)
}

pub(crate) fn top_k(cfg: &Config, experts: u64, default: Option<u64>) -> Result<u64> {
    top_k_of(cfg, "num_experts_per_tok", experts, default)
}

/// The experts each token uses, from `key` (DBRX's `moe_top_k`): at most the expert count.
pub(crate) fn top_k_of(cfg: &Config, key: &str, experts: u64, default: Option<u64>) -> Result<u64> {
    let k = cfg.size(key, default)?;
    if k > experts {
        return Err(cfg.err(
            key,
            format!("is {k}, more than the {experts} experts; it must be at most {experts}"),
        ));
    }
    Ok(k)
}

/// An optional positive number (a clamp bound), null for none.
pub(crate) fn positive(cfg: &Config, key: &str) -> Result<Option<f64>> {
    match cfg.opt_float(key)? {
        Some(c) if !(c > 0.0 && c.is_finite()) => Err(cfg.err(
            key,
            format!("is {c}; it must be a positive number, or null for none"),
        )),
        c => Ok(c),
    }
}

/// Which layers have experts by `mlp_layer_types` ("dense" or "sparse" per layer); without it,
/// every layer after the first `first_dense`.
pub(crate) fn mlp_layer_types(cfg: &Config, layers: u64, first_dense: u64) -> Result<Vec<bool>> {
    let types = cfg.list(
        "mlp_layer_types",
        layers,
        |v| match v.as_str()? {
            "dense" => Some(false),
            "sparse" => Some(true),
            _ => None,
        },
        "\"dense\" or \"sparse\"",
    )?;
    Ok(types.unwrap_or_else(|| (0..layers).map(|i| i >= first_dense).collect()))
}

/// `n_group` and `topk_group` (DeepSeek's group-limited routing), checked against the `experts`
/// and the `top_k` they must leave room for. `by_two`: groups are ranked by their two best
/// experts' scores (sigmoid routing), so each needs two.
pub(crate) fn expert_groups(
    cfg: &Config,
    experts: u64,
    top_k: u64,
    (n_group, topk_group): (u64, u64),
    by_two: bool,
) -> Result<(u64, u64)> {
    if !experts.is_multiple_of(n_group) {
        return Err(cfg.err(
            "n_group",
            format!("is {n_group}, which does not divide the {experts} routed experts"),
        ));
    }
    if by_two && experts / n_group < 2 {
        return Err(cfg.err(
            "n_group",
            format!("is {n_group}, leaving {} routed expert(s) per group; groups are ranked by their two best experts, so each needs at least 2", experts / n_group),
        ));
    }
    if n_group > 1 && top_k > topk_group * (experts / n_group) {
        return Err(cfg.err(
            "num_experts_per_tok",
            format!(
                "is {top_k}, more than the {} experts of the best {topk_group} groups of {}; transformers would fill the rest with arbitrary experts of the other groups",
                topk_group * (experts / n_group),
                experts / n_group
            ),
        ));
    }
    if topk_group > n_group {
        return Err(cfg.err(
            "topk_group",
            format!("is {topk_group}, more than n_group ({n_group})"),
        ));
    }
    Ok((n_group, topk_group))
}

pub(crate) fn attn_kind(heads: u64, kv: u64) -> AttnKind {
    if kv == heads {
        AttnKind::Mha
    } else if kv == 1 {
        AttnKind::Mqa
    } else {
        AttnKind::Gqa
    }
}

/// What a family's config class says about RoPE when the config does not.
pub(crate) struct RopeDefaults {
    pub theta: f64,
    /// The key of the base (`rope_theta`; GPT-NeoX `rotary_emb_base`).
    pub theta_key: &'static str,
    /// The rotated fraction of a head when the config gives none, and its key
    /// (`partial_rotary_factor`; GPT-NeoX `rotary_pct`); no key where the class fixes the
    /// top-level fraction whatever the config says (Bamba's 0.5).
    pub partial: f64,
    pub partial_key: Option<&'static str>,
    /// `max_position_embeddings` as read: what dynamic NTK scales from, and the pretraining
    /// length of llama3, YaRN and LongRoPE when nothing else gives one.
    pub context: u64,
    /// The class's own `original_max_position_embeddings` attribute (Phi-3: 4096), which takes
    /// precedence over the one inside the scaling dict, as in transformers.
    pub original: Option<u64>,
    /// RoPE types the class renames (Phi-3 reads `su` and `yarn` as `longrope`).
    pub renames: &'static [(&'static str, &'static str)],
    /// The scaling the class uses when the config gives none (gpt-oss: YaRN).
    pub scaling: Option<fn(&RopeDefaults) -> RopeScaling>,
    /// LongRoPE reads `short_mscale` and `long_mscale` (PhiMoE).
    pub longrope_mscale: bool,
}

impl RopeDefaults {
    pub fn new(theta: f64, context: u64) -> Self {
        RopeDefaults {
            theta,
            theta_key: "rope_theta",
            partial: 1.0,
            partial_key: Some("partial_rotary_factor"),
            context,
            original: None,
            renames: &[],
            scaling: None,
            longrope_mscale: false,
        }
    }
}

/// RoPE base, scaling and rotated fraction, from `rope_parameters` (transformers 5: flat, or one
/// entry per layer type) or the classic `rope_theta` + `rope_scaling`. Every key of the scaling
/// dict is read, and every kind is resolved to the numbers transformers computes with
/// (`modeling_rope_utils`), or refused.
pub(crate) fn rope(cfg: &Config, d: &RopeDefaults) -> Result<Rope> {
    let top_theta = cfg.float(d.theta_key, d.theta)?;
    if top_theta <= 0.0 {
        return Err(cfg.err(
            d.theta_key,
            format!("is {top_theta}; it must be a positive number"),
        ));
    }
    // A top-level `original_max_position_embeddings` (an attribute of the config) wins over the
    // dict's, as `standardize_rope_params` does.
    let original_attr = match cfg.opt_size("original_max_position_embeddings")? {
        Some(o) => Some(o),
        None => d.original,
    };
    let params = match cfg.sub("rope_parameters")? {
        Some(p) => {
            // Saved beside it as null by transformers 5: understood, and nothing to read.
            if cfg.present("rope_scaling") && !cfg.has("rope_scaling") {
                cfg.get("rope_scaling");
            }
            Some(p)
        }
        None => cfg.sub("rope_scaling")?,
    };
    let (full, sliding, partial_in) = match &params {
        None => {
            let scaling = d.scaling.map_or(RopeScaling::None, |f| f(d));
            (
                RopeFreqs {
                    theta: top_theta,
                    scaling,
                },
                None,
                None,
            )
        }
        Some(p) if p.has("full_attention") || p.has("sliding_attention") => {
            // Per layer type: transformers fills each entry's gaps from the top level.
            let full = match p.sub("full_attention")? {
                Some(f) => freqs(&f, top_theta, d, None)?,
                None => RopeFreqs {
                    theta: top_theta,
                    scaling: RopeScaling::None,
                },
            };
            let sliding = p
                .sub("sliding_attention")?
                .map(|s| freqs(&s, top_theta, d, None))
                .transpose()?;
            let partial = p
                .sub("full_attention")?
                .map(|f| f.opt_float("partial_rotary_factor"))
                .transpose()?
                .flatten();
            (full, sliding, partial)
        }
        Some(p) => {
            let partial = p.opt_float("partial_rotary_factor")?;
            (freqs(p, top_theta, d, original_attr)?, None, partial)
        }
    };
    // The top-level key is read either way: the dict's own value, where given, wins over it.
    let top_partial = match d.partial_key {
        Some(key) => cfg.float(key, d.partial)?,
        None => d.partial,
    };
    let partial = partial_in.unwrap_or(top_partial);
    if !(partial > 0.0 && partial <= 1.0) {
        let key = match (partial_in, d.partial_key) {
            (None, Some(key)) => key,
            _ => "rope_parameters.partial_rotary_factor",
        };
        return Err(cfg.err(key, format!("is {partial}; it must be in (0, 1]")));
    }
    // The sliding layers' own fraction, where their dict gives one that differs (Laguna).
    let mut sliding_partial = None;
    if let Some(s) = params
        .as_ref()
        .map(|p| p.sub("sliding_attention"))
        .transpose()?
        .flatten()
    {
        if let Some(sp) = s.opt_float("partial_rotary_factor")? {
            if !(sp > 0.0 && sp <= 1.0) {
                return Err(s.err(
                    "partial_rotary_factor",
                    format!("is {sp}; it must be in (0, 1]"),
                ));
            }
            sliding_partial = (sp != partial).then_some(sp);
        }
    }
    // Proportional RoPE spreads its turning pairs over the whole head: its fraction is its own.
    let proportional = |f: &RopeFreqs| matches!(f.scaling, RopeScaling::Proportional { .. });
    let whole = |p: f64, f: &RopeFreqs| if proportional(f) { 1.0 } else { p };
    let partial = whole(partial, &full);
    if let Some(s) = &sliding {
        let own = whole(sliding_partial.unwrap_or(partial), s);
        sliding_partial = (own != partial).then_some(own);
    }
    Ok(Rope {
        full,
        sliding,
        partial,
        sliding_partial,
        interleaved: false,
        reversed: false,
        start: 0,
    })
}

/// A class's RoPE for each layer type when the config gives none: (base, rotated fraction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByType {
    pub full: (f64, f64),
    pub sliding: (f64, f64),
    /// The full layers' RoPE is proportional, its fraction the fraction of pairs that turn
    /// (LFM3's).
    pub full_proportional: bool,
}

/// RoPE from one dict per layer type, or the class's bases for each without it (a top-level
/// `rope_theta` is then ignored, as those classes ignore it).
/// A rotary embedding indexed by layer type reads the dict of each type the model's attention
/// layers have (`rope_parameters[type]`): one missing fails transformers' first forward pass.
pub(crate) fn rope_types_present(cfg: &Config, spans: &[AttnSpan]) -> Result<()> {
    let Some(p) = cfg.sub("rope_parameters")? else {
        return Ok(());
    };
    if !(p.has("full_attention") || p.has("sliding_attention")) {
        return Ok(());
    }
    for (full, key) in [(true, "full_attention"), (false, "sliding_attention")] {
        if spans.iter().any(|s| (*s == AttnSpan::Full) == full) && !p.present(key) {
            return Err(p.err(
                key,
                "is missing; this model type reads the RoPE of each layer type it has from rope_parameters[type]",
            ));
        }
    }
    Ok(())
}

pub(crate) fn rope_by_type(cfg: &Config, d: &RopeDefaults, by: ByType) -> Result<Rope> {
    match cfg.sub("rope_parameters")? {
        Some(p) if p.has("full_attention") || p.has("sliding_attention") => rope(cfg, d),
        Some(_) => Err(cfg.err(
            "rope_parameters",
            "is one dict for every layer; this model type indexes it by layer type, so it must hold a \"full_attention\" and a \"sliding_attention\" dict",
        )),
        None => {
            cfg.get(d.theta_key); // read, and ignored
            let freqs = |theta| RopeFreqs {
                theta,
                scaling: RopeScaling::None,
            };
            let (full, partial) = if by.full_proportional {
                let scaling = RopeScaling::Proportional {
                    factor: 1.0,
                    fraction: by.full.1,
                };
                (RopeFreqs { theta: by.full.0, scaling }, 1.0)
            } else {
                (freqs(by.full.0), by.full.1)
            };
            Ok(Rope {
                full,
                sliding: Some(freqs(by.sliding.0)),
                partial,
                sliding_partial: (by.sliding.1 != partial).then_some(by.sliding.1),
                interleaved: false,
                reversed: false,
                start: 0,
            })
        }
    }
}

/// One scaling dict: its base and its kind's parameters, each checked.
pub(crate) fn freqs(
    s: &Config,
    top_theta: f64,
    d: &RopeDefaults,
    original_attr: Option<u64>,
) -> Result<RopeFreqs> {
    let theta = s.float("rope_theta", top_theta)?;
    if theta <= 0.0 {
        return Err(s.err(
            "rope_theta",
            format!("is {theta}; it must be a positive number"),
        ));
    }
    let (kind_key, kind) = match s.opt_string("rope_type")? {
        Some(k) => ("rope_type", k),
        None => ("type", s.string("type", "default")?),
    };
    // Both spellings may be present; the one not used must agree.
    if s.has("rope_type") {
        s.get("type");
    }
    let kind = d
        .renames
        .iter()
        .find(|(from, _)| *from == kind)
        .map_or(kind.clone(), |(_, to)| to.to_string());
    let positive = |key: &str, v: f64| -> Result<f64> {
        if v > 0.0 {
            Ok(v)
        } else {
            Err(s.err(key, format!("is {v}; it must be a positive number")))
        }
    };
    let factor = |required: bool| -> Result<Option<f64>> {
        match s.opt_float("factor")? {
            Some(f) => positive("factor", f).map(Some),
            None if required => Err(s.err(
                "factor",
                format!("is missing; RoPE scaling `{kind}` needs its factor"),
            )),
            None => Ok(None),
        }
    };
    let original = |s: &Config| -> Result<u64> {
        let inner = s.opt_size("original_max_position_embeddings")?;
        Ok(original_attr.or(inner).unwrap_or(d.context))
    };
    let scaling = match kind.as_str() {
        "default" => RopeScaling::None,
        "proportional" => RopeScaling::Proportional {
            factor: factor(false)?.unwrap_or(1.0),
            fraction: {
                let p = s.float("partial_rotary_factor", 1.0)?;
                if !(p > 0.0 && p <= 1.0) {
                    return Err(s.err(
                        "partial_rotary_factor",
                        format!("is {p}; it must be in (0, 1]"),
                    ));
                }
                p
            },
        },
        "linear" => RopeScaling::Linear {
            factor: factor(true)?.expect("required"),
        },
        "dynamic" => {
            // transformers scales from `max_position_embeddings`; a pretraining length in the
            // dict does not enter dynamic NTK.
            s.get("original_max_position_embeddings");
            RopeScaling::Dynamic {
                factor: factor(true)?.expect("required"),
                original: d.context,
            }
        }
        "llama3" => {
            let need = |key: &str| -> Result<f64> {
                match s.opt_float(key)? {
                    Some(v) => Ok(v),
                    None => Err(s.err(key, "is missing; llama3 RoPE scaling needs it")),
                }
            };
            let (low, high) = (need("low_freq_factor")?, need("high_freq_factor")?);
            RopeScaling::Llama3 {
                factor: factor(true)?.expect("required"),
                low_freq_factor: low,
                high_freq_factor: high,
                original: original(s)?,
            }
        }
        "yarn" => {
            let original = original(s)?;
            // The key is required; an explicit null means the ratio of the two lengths.
            if !s.present("factor") {
                return Err(s.err("factor", "is missing; YaRN scaling needs its factor (null for max_position_embeddings / original_max_position_embeddings)"));
            }
            let factor = factor(false)?.unwrap_or(d.context as f64 / original as f64);
            let get = |scale: f64, m: f64| if scale <= 1.0 { 1.0 } else { 0.1 * m * scale.ln() + 1.0 };
            let mscale = s.opt_float("mscale")?.unwrap_or(0.0);
            let mscale_all = s.opt_float("mscale_all_dim")?.unwrap_or(0.0);
            let attention_factor = match s.opt_float("attention_factor")? {
                Some(a) => positive("attention_factor", a)?,
                None if mscale != 0.0 && mscale_all != 0.0 => get(factor, mscale) / get(factor, mscale_all),
                None => get(factor, 1.0),
            };
            // transformers reads `beta_fast or 32`: a zero counts as absent.
            let beta = |key: &str, default: f64| -> Result<f64> {
                Ok(s.opt_float(key)?.filter(|b| *b != 0.0).unwrap_or(default))
            };
            RopeScaling::Yarn {
                factor,
                original,
                beta_fast: beta("beta_fast", 32.0)?,
                beta_slow: beta("beta_slow", 1.0)?,
                attention_factor,
                truncate: s.flag("truncate", true)?,
            }
        }
        "longrope" => {
            let original = original(s)?;
            let list = |key: &str| -> Result<Vec<f64>> {
                let v = s
                    .list_any(key, |v| v.as_f64().filter(|f| f.is_finite() && *f > 0.0), "a positive number")?
                    .ok_or_else(|| s.err(key, "is missing; longrope RoPE scaling needs one factor per rotated pair of dims"))?;
                Ok(v)
            };
            let (short, long) = (list("short_factor")?, list("long_factor")?);
            if short.len() != long.len() {
                return Err(s.err(
                    "long_factor",
                    format!("has {} entries and short_factor {}; they must be as long (one per rotated pair of dims)", long.len(), short.len()),
                ));
            }
            let factor = factor(false)?.unwrap_or(d.context as f64 / original as f64);
            let attention_factor = match s.opt_float("attention_factor")? {
                Some(a) => positive("attention_factor", a)?,
                None if factor <= 1.0 => 1.0,
                None => (1.0 + factor.ln() / (original as f64).ln()).sqrt(),
            };
            // PhiMoE always rotates by the short factors and switches the cos/sin scale instead.
            let mscale = if d.longrope_mscale {
                let get = |key: &str| -> Result<f64> {
                    let v = s.opt_float(key)?.ok_or_else(|| {
                        s.err(key, "is missing; this model's LongRoPE scales cos and sin by it")
                    })?;
                    positive(key, v)
                };
                Some((get("short_mscale")?, get("long_mscale")?))
            } else {
                None
            };
            RopeScaling::LongRope {
                short,
                long,
                original,
                attention_factor,
                mscale,
            }
        }
        other => {
            return Err(s.err(
                kind_key,
                format!(
                    "`{other}` is not a RoPE type anatomy computes; valid: default, linear, dynamic, llama3, yarn, longrope"
                ),
            ))
        }
    };
    Ok(RopeFreqs { theta, scaling })
}

/// The plan of a model whose every layer rotates and has the same FFN (`moe`), by attention span.
pub(crate) fn uniform_plan(spans: Vec<AttnSpan>, moe: bool) -> Vec<crate::spec::LayerPlan> {
    spans
        .into_iter()
        .map(|attn| crate::spec::LayerPlan::attention(attn, true, moe))
        .collect()
}

/// `sliding_window`: its value (null for none), or `default` when the config has no such key.
pub(crate) fn window(cfg: &Config, default: Option<u64>) -> Result<Option<u64>> {
    if cfg.present("sliding_window") {
        cfg.opt_size("sliding_window")
    } else {
        Ok(default)
    }
}

/// Layers sliding with `window` from `max_window_layers` (default `from`) on, unless
/// `layer_types` names them (Qwen2/3, dots.llm1); a sliding layer without a window attends fully.
pub(crate) fn sliding_from(
    cfg: &Config,
    layers: u64,
    window: Option<u64>,
    from: u64,
) -> Result<Vec<AttnSpan>> {
    let from = cfg.count("max_window_layers", from)?;
    Ok(match layer_types(cfg, layers, window, true)? {
        Some(spans) => spans,
        None => (0..layers)
            .map(|i| match window {
                Some(w) if i >= from => AttnSpan::Sliding(w),
                _ => AttnSpan::Full,
            })
            .collect(),
    })
}

/// Per-layer attention spans from `layer_types` (`"sliding_attention"`, `"full_attention"`, …).
/// `unwindowed_is_full`: a "sliding_attention" layer without a window attends fully (Qwen's
/// classes drop the window when `use_sliding_window` is off), rather than being an error.
pub(crate) fn layer_types(
    cfg: &Config,
    layers: u64,
    window: Option<u64>,
    unwindowed_is_full: bool,
) -> Result<Option<Vec<AttnSpan>>> {
    let parsed = cfg.list(
        "layer_types",
        layers,
        |v| match v.as_str()? {
            "full_attention" => Some(None),
            "sliding_attention" => Some(Some(())),
            _ => None,
        },
        "\"full_attention\" or \"sliding_attention\"",
    )?;
    let Some(kinds) = parsed else { return Ok(None) };
    let mut out = Vec::with_capacity(kinds.len());
    for k in kinds {
        out.push(match (k, window) {
            (None, _) => AttnSpan::Full,
            (Some(()), Some(w)) => AttnSpan::Sliding(w),
            (Some(()), None) if unwindowed_is_full => AttnSpan::Full,
            (Some(()), None) => return Err(cfg.err(
                "sliding_window",
                "is missing, but layer_types has sliding_attention layers; give the window size",
            )),
        });
    }
    Ok(Some(out))
}

/// Checks every Spec must pass whatever its family: an even rotary dimension, and sizes whose
/// products the Graph computes in u64 (heads × head_dim, vocab × hidden) staying in range. The
/// Graph then checks the exact total (`graph::build`).
fn check(cfg: &Config, spec: &Spec) -> Result<()> {
    // xIELU's parameters live in a plain MLP's `act_fn` (Apertus); elsewhere transformers would
    // give every projection its own, which anatomy does not draw.
    if spec.mlp.act == crate::spec::Act::Xielu
        && (spec.mlp.gated || spec.moe.is_some() || spec.layout != crate::spec::Layout::Apertus)
    {
        return Err(cfg.err(
            "hidden_act",
            "is xielu, which anatomy draws in Apertus's plain MLP only",
        ));
    }
    let a = &spec.attn;
    if let crate::spec::Qkv::Parts(n) = a.qkv {
        if !a.heads.is_multiple_of(n) {
            return Err(cfg.err(
                "num_attention_heads",
                format!(
                    "is {}; the fused q/v/k tensor holds {n} parts of whole heads, so it must be a multiple of {n}",
                    a.heads
                ),
            ));
        }
    }
    // RoPE rotates pairs of dims; transformers refuses an odd rotary dimension too.
    if spec.norm.eps < 0.0 {
        return Err(cfg.err(
            "rms_norm_eps",
            format!(
                "is {}; a norm's epsilon must not be negative",
                spec.norm.eps
            ),
        ));
    }
    if let crate::spec::Position::Rope(r) = &spec.position {
        // LongRoPE rescales each rotated pair of dims by its own factor.
        let pairs = r.rotary_dim(a.mla.as_ref().map_or(a.head_dim, |m| m.qk_rope_head_dim)) / 2;
        for f in std::iter::once(&r.full).chain(&r.sliding) {
            if let RopeScaling::LongRope { short, .. } = &f.scaling {
                if short.len() as u64 != pairs {
                    return Err(cfg.err(
                        "rope_scaling.short_factor",
                        format!(
                            "has {} entries; LongRoPE needs one per rotated pair of dims, {pairs} here",
                            short.len()
                        ),
                    ));
                }
            }
        }
        let odd = std::iter::once(r.partial)
            .chain(r.sliding_partial)
            .map(|p| (a.head_dim as f64 * p) as u64)
            .find(|rotary| rotary % 2 == 1);
        if let (Some(rotary), true) = (odd, spec.plan.iter().any(|l| l.rope) && a.mla.is_none()) {
            let field = if cfg.has("head_dim") {
                "head_dim"
            } else {
                "hidden_size"
            };
            return Err(cfg.err(
                field,
                format!(
                    "gives head_dim {} and a rotary dimension of {rotary}, which is odd; RoPE rotates pairs of dims, \
                     so it must be even",
                    a.head_dim
                ),
            ));
        }
    }
    let per_layer = [spec.hidden, a.heads, a.head_dim.max(a.v_head_dim), 4]
        .iter()
        .try_fold(1u128, |acc, &x| acc.checked_mul(x as u128));
    let mlp = [spec.hidden, spec.mlp.intermediate, 3]
        .iter()
        .try_fold(1u128, |acc, &x| acc.checked_mul(x as u128));
    let embed = (spec.vocab as u128).checked_mul(spec.hidden as u128 * 2);
    let total = per_layer
        .zip(mlp)
        .and_then(|(p, m)| p.checked_add(m))
        .and_then(|x| x.checked_mul(spec.layers as u128))
        .zip(embed)
        .and_then(|(x, e)| x.checked_add(e));
    match total {
        Some(t) if t <= u64::MAX as u128 => Ok(()),
        _ => Err(cfg.err(
            "hidden_size",
            format!(
                "sizes too large: hidden_size {} with vocab_size {}, intermediate_size {}, {} layers of {} heads × {} \
                 gives a parameter count that overflows 64 bits; check these fields",
                spec.hidden, spec.vocab, spec.mlp.intermediate, spec.layers, a.heads, a.head_dim
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals_outside_strings_only() {
        let text = r#"{"a": [0.0, Infinity], "b": -Infinity, "c": NaN, "s": "Infinity \"NaN\" -Infinity", "t": "x\\"}"#;
        // transformers' own form, inside lists and objects; another one-key object stays.
        let tagged = parse_json(
            "t",
            r#"{"l": [0.0, {"__float__": "Infinity"}], "o": {"x": {"__float__": "-Infinity"}}, "n": {"__float__": "NaN"}, "k": {"__float__": "1e9"}}"#,
        )
        .unwrap();
        assert_eq!(tagged["l"][1], "Infinity");
        assert_eq!(tagged["o"]["x"], "-Infinity");
        assert_eq!(tagged["n"], "NaN");
        assert_eq!(tagged["k"]["__float__"], "1e9");
        let v = parse_json("f.json", text).unwrap();
        assert_eq!(v["a"][1], "Infinity");
        assert_eq!(v["b"], "-Infinity");
        assert_eq!(v["c"], "NaN");
        assert_eq!(v["s"], "Infinity \"NaN\" -Infinity");
        assert_eq!(v["t"], "x\\");
        // Plain JSON passes through untouched.
        assert!(matches!(
            python_literals("{\"a\": 1}"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
