//! Gemma 4's language model (`gemma4_text`, and `gemma4`'s `text_config`). Gemma 3's local and
//! global layers and sandwich norms (plain weights now, not 1 + w), with: per-head RMS norms on
//! Q and K and a weightless one on V, scores unscaled; global layers with heads of their own size
//! (`global_head_dim`) and proportional RoPE; keys that are also the values in global layers
//! (`attention_k_eq_v`); the last `num_kv_shared_layers` layers reusing the keys and values of
//! the last layer of their kind before them; per-layer embeddings (PLE); and a stored scalar on
//! each layer's output. Defaults follow `Gemma4TextConfig`.

use super::{attn_kind, heads, layer_count, layer_types, plain_attention, rope_by_type};
use super::{ByType, HeadDim, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::*;

/// What differs in Gemma 4's unified models' text config (`gemma4_unified_text`): no per-layer
/// embeddings or experts, and other defaults.
struct Class {
    unified: bool,
    window: u64,
    context: u64,
}

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    load_as(cfg, model_type, family, name, false)
}

/// Gemma 4's assistants (`gemma4_assistant`, `gemma4_unified_assistant`): the language model in
/// `text_config`, every layer reading its target's keys and values (`num_kv_shared_layers`, all
/// of them where unset), with the assistant's projections to and from its target's width and,
/// with `use_ordered_embeddings`, its clustered head. Defaults follow `Gemma4AssistantConfig`
/// and `Gemma4UnifiedAssistantConfig`.
pub fn load_assistant(
    top: &Config,
    text: &Config,
    model_type: &str,
    family: &str,
    name: &str,
) -> Result<Spec> {
    let mut s = load_as(text, model_type, family, name, true)?;
    let unified = model_type == "gemma4_unified_text";
    s.draft = Some(Draft {
        backbone: top.size(
            "backbone_hidden_size",
            Some(if unified { 3840 } else { 1536 }),
        )?,
        centroids: None,
    });
    let count = top.size("num_centroids", Some(2048))?;
    let top_k = top.size("centroid_intermediate_top_k", Some(32))?;
    if top.flag("use_ordered_embeddings", false)? {
        if s.vocab % count != 0 {
            return Err(top.err(
                "num_centroids",
                format!("is {count}, which does not divide the vocabulary of {}; each cluster holds vocab / num_centroids tokens", s.vocab),
            ));
        }
        if top_k > count {
            return Err(top.err(
                "centroid_intermediate_top_k",
                format!("is {top_k}, more than the {count} centroids to choose from"),
            ));
        }
        s.draft = s.draft.map(|d| Draft {
            centroids: Some(Centroids { count, top_k }),
            ..d
        });
    }
    // The assistant's head is a plain projection: the text config's final softcap, read by the
    // loader, is not applied.
    s.final_softcap = None;
    Ok(s)
}

fn load_as(
    cfg: &Config,
    model_type: &str,
    family: &str,
    name: &str,
    assistant: bool,
) -> Result<Spec> {
    let c = if model_type == "gemma4_unified_text" {
        Class {
            unified: true,
            window: 1024,
            context: 262_144,
        }
    } else {
        Class {
            unified: false,
            window: 512,
            context: 131_072,
        }
    };
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(2304))?;
    s.vocab = cfg.size("vocab_size", Some(262_144))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(30))?;
    s.context = cfg.size("max_position_embeddings", Some(c.context))?;
    let (h, kv, hd) = heads(cfg, s.hidden, Some(8), Some(4), HeadDim::Given(256))?;
    s.attn = normed_attention(cfg, h, kv, hd)?;
    s.final_softcap = cfg.opt_float("final_logit_softcapping")?;
    s.mlp = Mlp::gated(
        cfg.size("intermediate_size", Some(9216))?,
        super::act(cfg, "hidden_activation", "gelu_pytorch_tanh")?,
    );
    s.embedding.scale_by_sqrt_hidden = true;
    s.norm = super::gemma4::sandwich_rms(cfg)?;
    // "vision" changes only how image tokens attend; "all" makes every layer bidirectional.
    match cfg.opt_string("use_bidirectional_attention")?.as_deref() {
        None | Some("vision") => {}
        Some(other) => {
            return Err(cfg.err(
                "use_bidirectional_attention",
                format!("is `{other}`; every position then attends to every other (an embedding model), and anatomy draws causal decoders (null or \"vision\")"),
            ))
        }
    }
    let window = super::window(cfg, Some(c.window))?.ok_or_else(|| {
        cfg.err(
            "sliding_window",
            "is null; Gemma 4's local layers need a window size (a positive integer)",
        )
    })?;
    let mut spans = match layer_types(cfg, s.layers, Some(window), false)? {
        Some(spans) => spans,
        // Five local layers to each global one.
        None => (0..s.layers)
            .map(|i| {
                if (i + 1) % 6 != 0 {
                    AttnSpan::Sliding(window)
                } else {
                    AttnSpan::Full
                }
            })
            .collect(),
    };
    // The class makes the last layer global whatever `layer_types` says.
    if let Some(last) = spans.last_mut() {
        *last = AttnSpan::Full;
    }
    s.plan = super::uniform_plan(spans.clone(), false);
    super::rope_types_present(cfg, &spans)?;
    s.position = Position::Rope(rope_by_type(
        cfg,
        &RopeDefaults::new(10_000.0, s.context),
        ByType {
            full: (1_000_000.0, 0.25),
            sliding: (10_000.0, 1.0),
            full_proportional: true,
        },
    )?);
    s.tied = cfg.flag("tie_word_embeddings", true)?;

    // The global layers' heads: `per_layer_config` where saved, else `global_head_dim` and (with
    // keys as values) `num_global_key_value_heads`.
    let k_eq_v = cfg.flag("attention_k_eq_v", false)?;
    let full = LayerSet::from_fn(s.layers, |b| spans[b as usize] == AttnSpan::Full);
    let (global_hd, global_kv) = global_heads(cfg, &spans, hd, kv, k_eq_v)?;
    let shared = if assistant {
        assistant_layers(cfg, s.layers)?
    } else {
        shared_layers(cfg, &spans, 0)?
    };
    let mut variants: Vec<(LayerSet, Attention)> = Vec::new();
    for (is_full, is_shared) in [(true, false), (true, true), (false, true)] {
        let set = LayerSet::from_fn(s.layers, |b| {
            full.contains(b) == is_full && shared.contains(b) == is_shared
        });
        if set.is_empty() {
            continue;
        }
        let mut a = s.attn.clone();
        if is_full {
            a.head_dim = global_hd;
            a.v_head_dim = global_hd;
            a.kv_heads = global_kv;
            a.v_from_k = k_eq_v && !is_shared;
        }
        a.kind = attn_kind(a.heads, a.kv_heads);
        a.shares_kv = is_shared;
        variants.push((set, a));
    }
    s.layer_attn = variants;

    // The layers that reuse keys and values may have MLPs twice as wide.
    let wide = cfg.flag("use_double_wide_mlp", false)? && !shared.is_empty();
    if assistant && wide {
        return Err(cfg.err(
            "use_double_wide_mlp",
            "is true; Gemma 4's assistants are built with MLPs of one width (false)",
        ));
    }
    if wide {
        s.mlp_widths = vec![(shared.clone(), 2 * s.mlp.intermediate)];
    }
    if c.unified {
        // The unified class has neither experts nor per-layer embeddings: their keys are not its.
        s.layer_scalar = true;
        s.layout = Layout::Gemma4;
        return Ok(s);
    }
    if cfg.flag("enable_moe_block", false)? {
        if assistant {
            return Err(cfg.err(
                "enable_moe_block",
                "is true; Gemma 4's assistants have no experts (false)",
            ));
        }
        if wide {
            return Err(cfg.err(
                "use_double_wide_mlp",
                "is true beside enable_moe_block; anatomy draws Gemma 4's experts beside MLPs of one width only",
            ));
        }
        // Experts beside the MLP in every layer: a softmax router over a normed, scaled input,
        // its chosen weights renormalized and scaled per expert.
        let e = super::experts(cfg, "num_experts", None)?;
        let k = super::top_k_of(cfg, "top_k_experts", e, None)?;
        let width = cfg.size("moe_intermediate_size", None)?;
        s.moe = Some(Moe {
            norm_topk_prob: true,
            router_norm: true,
            expert_scale: true,
            storage: ExpertStorage::Stacked {
                out_in: true,
                interleaved: false,
            },
            ..super::plain_moe(e, k, width)
        });
        for l in &mut s.plan {
            l.ffn = Ffn::DenseAndMoe;
        }
    } else {
        for key in ["num_experts", "top_k_experts", "moe_intermediate_size"] {
            cfg.get(key); // read by the experts alone
        }
    }
    // Per-layer embeddings: a width of 0 or null turns them off.
    let width = match cfg.get("hidden_size_per_layer_input") {
        None if cfg.present("hidden_size_per_layer_input") => 0,
        None => 256,
        Some(_) => cfg.count("hidden_size_per_layer_input", 256)?,
    };
    if assistant {
        // The assistant reads its target's state, not token ids: no per-layer embeddings.
        for (key, n) in [
            ("hidden_size_per_layer_input", width),
            (
                "vocab_size_per_layer_input",
                cfg.count("vocab_size_per_layer_input", 262_144)?,
            ),
        ] {
            if n != 0 {
                return Err(cfg.err(
                    key,
                    format!("is {n}; Gemma 4's assistants have no per-layer embeddings (0)"),
                ));
            }
        }
    } else if width > 0 {
        s.per_layer_input = Some(PerLayerInput {
            clamp_ids: false,
            width,
            vocab: cfg.size("vocab_size_per_layer_input", Some(262_144))?,
        });
    } else {
        cfg.get("vocab_size_per_layer_input"); // the table's rows, without a table
    }
    s.layer_scalar = true;
    s.layout = Layout::Gemma4;
    Ok(s)
}

/// Gemma 4's and Gemma 3n's norms: RMS with plain weights (not Gemma 3's 1 + w), before and
/// after each sublayer.
pub(super) fn sandwich_rms(cfg: &Config) -> Result<Norm> {
    Ok(Norm {
        kind: NormKind::Rms,
        eps: cfg.float("rms_norm_eps", 1e-6)?,
        unit_offset: false,
        place: NormPlace::Sandwich,
    })
}

/// Gemma 4's and Gemma 3n's attention: per-head RMS norms on Q and K, a weightless one on V,
/// and the scores left unscaled (scaling 1.0), since the norms bound them; biases by
/// `attention_bias`.
pub(super) fn normed_attention(cfg: &Config, h: u64, kv: u64, hd: u64) -> Result<Attention> {
    let bias = cfg.flag("attention_bias", false)?;
    Ok(Attention {
        qkv_bias: bias,
        o_bias: bias,
        qk_norm: QkNorm::PerHead,
        v_norm: true,
        scale_dim: 1.0,
        ..plain_attention(h, kv, hd)
    })
}

/// The global layers' head size and K/V heads.
fn global_heads(
    cfg: &Config,
    spans: &[AttnSpan],
    hd: u64,
    kv: u64,
    k_eq_v: bool,
) -> Result<(u64, u64)> {
    let given_hd = cfg.size("global_head_dim", Some(512))?;
    // Read either way; the class applies it only with keys as values.
    let given_kv = match cfg.opt_size("num_global_key_value_heads")? {
        Some(n) if k_eq_v => n,
        _ => kv,
    };
    let Some(p) = cfg.sub("per_layer_config")? else {
        return Ok((given_hd, given_kv));
    };
    // Saved by transformers: overrides by layer index ("05"), for the global layers alone.
    let mut found: Option<(u64, u64)> = None;
    let keys: Vec<&String> = p.map.keys().collect();
    for key in &keys {
        let b: usize = key.parse().map_err(|_| {
            p.err(
                key,
                "is not a layer index; per_layer_config is keyed by layer (\"5\" or \"05\")",
            )
        })?;
        let Some(layer) = p.sub(key)? else { continue };
        if spans.get(b) != Some(&AttnSpan::Full) {
            return Err(p.err(
                key,
                "overrides a local layer; anatomy reads Gemma 4's per-layer overrides of its global layers only",
            ));
        }
        let this = (
            layer.size("head_dim", Some(hd))?,
            layer.size("num_key_value_heads", Some(kv))?,
        );
        match found {
            Some(f) if f != this => {
                return Err(p.err(
                    key,
                    "differs from another global layer's overrides; Gemma 4's global layers share one RoPE, so they must agree",
                ))
            }
            _ => found = Some(this),
        }
    }
    // Global layers without an entry keep the model's sizes.
    let covered = keys.len();
    let globals = spans.iter().filter(|s| **s == AttnSpan::Full).count();
    match found {
        Some(f) if covered == globals => Ok(f),
        Some(_) => Err(cfg.err(
            "per_layer_config",
            format!("overrides {covered} of the {globals} global layers; they share one RoPE, so it must override all of them or none"),
        )),
        None => Ok((hd, kv)),
    }
}

/// An assistant's layers: all of them read their target's keys and values, as
/// `num_kv_shared_layers` says (the class sets it to every layer where it is 0 or unset).
fn assistant_layers(cfg: &Config, layers: u64) -> Result<LayerSet> {
    match cfg.count("num_kv_shared_layers", 0)? {
        0 => {}
        n if n == layers => {}
        n => {
            return Err(cfg.err(
                "num_kv_shared_layers",
                format!("is {n}; every one of an assistant's {layers} layers reads its target's keys and values ({layers}, or 0 for all)"),
            ))
        }
    }
    Ok(LayerSet::from_fn(layers, |_| true))
}

/// The layers that reuse keys and values: the last `num_kv_shared_layers`.
pub(super) fn shared_layers(cfg: &Config, spans: &[AttnSpan], default: u64) -> Result<LayerSet> {
    let layers = spans.len() as u64;
    let n = cfg.count("num_kv_shared_layers", default)?;
    if n == 0 {
        return Ok(LayerSet::from_fn(layers, |_| false));
    }
    if n >= layers {
        return Err(cfg.err(
            "num_kv_shared_layers",
            format!("is {n}; the shared layers reuse the keys and values of an earlier layer, so at least one of the {layers} layers must compute its own"),
        ));
    }
    let first = (layers - n) as usize;
    for kind in &spans[first..] {
        let disc = std::mem::discriminant(kind);
        if !spans[..first]
            .iter()
            .any(|s| std::mem::discriminant(s) == disc)
        {
            return Err(cfg.err(
                "num_kv_shared_layers",
                format!("is {n}; a shared {} layer needs a layer of its kind before the shared ones to reuse", kind.describe()),
            ));
        }
    }
    Ok(LayerSet::from_fn(layers, |b| b as usize >= first))
}
