//! Inkling (Thinking Machines): a pre-norm decoder without RoPE. Positions reach attention
//! through relative logits each query mixes from a learned bank of distance profiles, and
//! through residual short convolutions on K, V and each sublayer's output. Full-attention
//! layers alternate with sliding-window ones of their own head counts; the FFN is a dense MLP
//! or experts routed by sigmoid scores with the shared experts scored beside them.

use super::{layer_count, plain_attention, top_k};
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::{
    AttnRes, AttnResLoop, AttnSpan, ExpertStorage, KvConv, LayerPlan, Layout, Mlp, Norm, NormKind,
    NormPlace, Position, QkNorm, QueryScale, RelLogits, ResConv, ScaleForm, Scoring, Spec,
};

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(6144))?;
    s.vocab = cfg.size("vocab_size", Some(201024))?;
    s.context = cfg.size("max_position_embeddings", Some(131072))?;
    // The head scores every row it stores and the logits past the real vocabulary are dropped
    // (the class ignores a value at or past vocab_size).
    if let Some(u) = cfg.opt_size("unpadded_vocab_size")? {
        if u < s.vocab {
            s.logits_kept = Some(u);
        }
    }
    // Read whether or not `layer_types` decides: the class derives the kinds from it only then.
    let local = cfg.list_any("local_layer_ids", |v| v.as_u64(), "a layer index")?;
    let sliding = sliding_layers(cfg, family, 66, local)?;
    s.layers = sliding.len() as u64;
    s.norm = Norm {
        kind: NormKind::Rms,
        eps: cfg.float("rms_norm_eps", 1e-6)?,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.embedding.norm = true;
    s.position = Position::None;
    let conv = cfg.size("conv_kernel_size", Some(4))?;
    let d_rel = cfg.size("d_rel", Some(16))?;
    let window = cfg.size("sliding_window_size", Some(512))?;
    // Queries RMS-normed per head, hence scores scaled by 1/head_dim rather than 1/√head_dim.
    let attention = |heads: u64, kv: u64, head_dim: u64, extent: u64| {
        let mut a = plain_attention(heads, kv, head_dim);
        a.qk_norm = QkNorm::PerHead;
        a.scale_dim = (head_dim * head_dim) as f64;
        a.rel_logits = Some(RelLogits {
            d_rel,
            extent,
            clip: None,
        });
        a.kv_conv = Some(KvConv {
            conv: ResConv {
                taps: conv,
                scaled: false,
            },
            dynamic: false,
        });
        a
    };
    let (heads, kv) = head_counts(cfg, "num_attention_heads", "num_key_value_heads", 64, 8)?;
    let mut full = attention(
        heads,
        kv,
        cfg.size("head_dim", Some(128))?,
        cfg.size("rel_extent", Some(1024))?,
    );
    let alpha = cfg.float("log_scaling_alpha", 0.1)?;
    if let Some(floor) = cfg.opt_size("log_scaling_n_floor")? {
        full.query_scale = Some(QueryScale {
            form: ScaleForm::Floored,
            beta: alpha,
            length: floor,
            shift: 1,
            nope_only: false,
        });
    }
    let (swa_heads, swa_kv) = head_counts(
        cfg,
        "swa_num_attention_heads",
        "swa_num_key_value_heads",
        64,
        16,
    )?;
    let swa = attention(
        swa_heads,
        swa_kv,
        cfg.size("swa_head_dim", Some(128))?,
        window,
    );
    // The sliding layers' attention is a variant of the full layers'; or every layer's.
    let local = LayerSet::from_fn(s.layers, |b| sliding[b as usize]);
    if local.len() == s.layers {
        s.attn = swa;
    } else {
        s.attn = full;
        if !local.is_empty() {
            s.layer_attn = vec![(local, swa)];
        }
    }
    // Checkpoints with `dense_intermediate_size` give the experts' width as `intermediate_size`
    // (the class then overwrites `moe_intermediate_size` with it).
    let intermediate = cfg.size("intermediate_size", Some(24576))?;
    let moe_intermediate = cfg.size("moe_intermediate_size", Some(3072))?;
    let (dense_width, expert_width) = match cfg.opt_size("dense_intermediate_size")? {
        Some(dense) => (dense, intermediate),
        None => (intermediate, moe_intermediate),
    };
    let act = super::act(cfg, "hidden_act", "silu")?;
    s.mlp = Mlp {
        scalar: true,
        ..Mlp::gated(dense_width, act)
    };
    let first_dense = cfg.count("dense_mlp_idx", 0)?;
    let sparse = super::mlp_layer_types(cfg, s.layers, first_dense)?;
    // The experts' keys are read whether or not a layer routes: with none, they change nothing.
    let experts = super::experts(cfg, "n_routed_experts", Some(256))?;
    let top_k = top_k(cfg, experts, Some(6))?;
    let shared = cfg.size("n_shared_experts", Some(2))?;
    let route_scale = cfg.float("route_scale", 8.0)?;
    if sparse.iter().any(|&m| m) {
        // The router's last rows score the shared experts: with none, nothing would be routed.
        if shared == 0 {
            return Err(cfg.err(
                "n_shared_experts",
                "is 0; Inkling's router scores its shared experts in its last rows, so give at least 1",
            ));
        }
        let mut m = super::plain_moe(experts, top_k, expert_width);
        m.shared_experts = shared;
        m.shared_intermediate = expert_width;
        m.scoring = Scoring::SigmoidSink;
        m.norm_topk_prob = true;
        m.correction_bias = true;
        m.routed_scaling = route_scale;
        m.storage = ExpertStorage::Stacked {
            out_in: true,
            interleaved: false,
        };
        s.moe = Some(m);
    }
    s.plan = (0..s.layers as usize)
        .map(|b| {
            let span = if sliding[b] {
                AttnSpan::Sliding(window)
            } else {
                AttnSpan::Full
            };
            LayerPlan::attention(span, false, sparse[b])
        })
        .collect();
    s.out_conv = Some(ResConv {
        taps: conv,
        scaled: false,
    });
    // The cache's convolution states, one per convolution: fewer than a layer runs and
    // transformers cannot decode.
    let states = cfg.count("number_of_conv_states", 4)?;
    if states < 4 {
        return Err(cfg.err(
            "number_of_conv_states",
            format!("is {states}; each Inkling layer carries 4 convolution states (K, V and both sublayers' outputs), so give 4"),
        ));
    }
    // The final hidden states are divided by the μP width multiplier before the head.
    let width = cfg.float("logits_mup_width_multiplier", 24.0)?;
    if !(width > 0.0 && width.is_finite()) {
        return Err(cfg.err(
            "logits_mup_width_multiplier",
            format!("is {width}; it must be a positive number"),
        ));
    }
    s.logits_mult = 1.0 / width;
    // `_tied_weights_keys` is empty: the head is its own whatever `tie_word_embeddings` says.
    s.tied = false;
    s.layout = Layout::Inkling;
    Ok(s)
}

/// Whether each layer is a sliding one: `layer_types` (which decides the count) where given, else
/// the layers `local` lists, else every layer but each sixth.
fn sliding_layers(
    cfg: &Config,
    family: &str,
    layers: u64,
    local: Option<Vec<u64>>,
) -> Result<Vec<bool>> {
    let listed = cfg.list_any(
        "layer_types",
        |v| match v.as_str()? {
            "hybrid" => Some(false),
            "hybrid_sliding" => Some(true),
            _ => None,
        },
        "\"hybrid\" or \"hybrid_sliding\"",
    )?;
    if let Some(kinds) = listed {
        return super::layers_listed(cfg, kinds, "layer_types", "layer_types", family);
    }
    let n = layer_count(cfg, &["num_hidden_layers"], Some(layers))?;
    Ok(match local {
        Some(ids) => (0..n).map(|i| ids.contains(&i)).collect(),
        None => (0..n).map(|i| (i + 1) % 6 != 0).collect(),
    })
}

/// Query heads and the K/V heads they share, which must divide them.
fn head_counts(
    cfg: &Config,
    heads_key: &str,
    kv_key: &str,
    heads: u64,
    kv: u64,
) -> Result<(u64, u64)> {
    let heads = cfg.size(heads_key, Some(heads))?;
    let kv = cfg.size(kv_key, Some(kv))?;
    if !heads.is_multiple_of(kv) {
        return Err(cfg.err(
            kv_key,
            format!(
                "is {kv}, which does not divide {heads_key} ({heads}); it must be a divisor of it"
            ),
        ));
    }
    Ok((heads, kv))
}

/// The weightless RMS norm of Inkling 2's block attention residuals (DeepSeek-V4's, its class
/// default).
const ATTN_RES_EPS: f64 = 1e-6;

/// Inkling 2: Inkling's relative logits and short convolutions (now scaled, and in the full
/// layers with per-token taps), with L2-clipped queries and keys, RMS-normed values, per-token
/// sinks and a gated output, every FFN routed experts with a softcapped SwiGLU, and block
/// attention residuals in place of the residual stream.
pub fn load2(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    inkling2(cfg, model_type, family, name, &INKLING2)
}

/// Inkling 2 Loop: Inkling 2 whose middle layers run several passes, the later ones fed
/// messages from the pass before (`AttnResLoop`).
pub fn load2_loop(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = inkling2(cfg, model_type, family, name, &INKLING2_LOOP)?;
    // The first code's `loop_config` (core_start, core_end, num_passes, gate_rank) overrides.
    let sub = cfg.sub("loop_config")?;
    // Both forms are read (each key is the model's); `loop_config`'s wins, as in the class.
    let read = |key: &str, inner: &str, default: u64| -> Result<u64> {
        let top = cfg.count(key, default)?;
        match &sub {
            Some(c) => c.count(inner, top),
            None => Ok(top),
        }
    };
    let start = read("loop_layer_index_start", "core_start", 6)?;
    let end = read("loop_layer_index_end", "core_end", 18)?;
    let passes = read("loop_num_passes", "num_passes", 3)?;
    let rank = read("loop_gate_rank", "gate_rank", 64)?;
    let r = s
        .attn_res()
        .expect("Inkling 2 has block attention residuals");
    // The class's checks: whole blocks, after the first layer, at least one pass.
    if passes < 1 {
        return Err(cfg.err("loop_num_passes", "is 0; give at least 1"));
    }
    if start == 0 || !start.is_multiple_of(r.block) {
        return Err(cfg.err(
            "loop_layer_index_start",
            format!(
                "is {start}; it must be a positive multiple of n_layers_per_attn_res_block ({})",
                r.block
            ),
        ));
    }
    // A section that starts past the last layer loops nothing, as the class builds it; its
    // message queries are sized by the section all the same.
    if !end.is_multiple_of(r.block) || end < start {
        return Err(cfg.err(
            "loop_layer_index_end",
            format!(
                "is {end}; it must be a multiple of n_layers_per_attn_res_block ({}), at least loop_layer_index_start ({start})",
                r.block
            ),
        ));
    }
    cfg.bounded("loop_layer_index_end", end, super::MAX_LAYERS)?;
    // transformers' later passes index every layer of a section that starts among the layers
    // (a single pass runs those that exist).
    if start < s.layers && end > s.layers && passes > 1 {
        return Err(cfg.err(
            "loop_layer_index_end",
            format!(
                "is {end}, past the {} layers, while the loop starts at layer {start}: transformers' later passes index layers that do not exist; give at most {} (or one pass)",
                s.layers, s.layers
            ),
        ));
    }
    if rank == 0 {
        return Err(cfg.err("loop_gate_rank", "is 0; give a positive rank"));
    }
    cfg.bounded("loop_num_passes", passes, super::MAX_LAYERS)?;
    s.stream = crate::spec::Stream::AttnRes(AttnRes {
        looped: Some(AttnResLoop {
            start,
            end,
            passes,
            rank: cfg.bounded("loop_gate_rank", rank, crate::config::MAX_SIZE)?,
        }),
        ..r
    });
    Ok(s)
}

/// The class defaults of Inkling 2 and Inkling 2 Loop that differ.
struct Inkling2Defaults {
    hidden: u64,
    layers: u64,
    heads: u64,
    swa_heads: u64,
    floor: u64,
    moe_inter: u64,
    experts: u64,
}

const INKLING2: Inkling2Defaults = Inkling2Defaults {
    hidden: 4608,
    layers: 48,
    heads: 48,
    swa_heads: 48,
    floor: 128000,
    moe_inter: 2304,
    experts: 384,
};

const INKLING2_LOOP: Inkling2Defaults = Inkling2Defaults {
    hidden: 2304,
    layers: 24,
    heads: 24,
    swa_heads: 24,
    floor: 8192,
    moe_inter: 1152,
    experts: 128,
};

fn inkling2(
    cfg: &Config,
    model_type: &str,
    family: &str,
    name: &str,
    dft: &Inkling2Defaults,
) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(dft.hidden))?;
    s.vocab = cfg.size("vocab_size", Some(201024))?;
    s.context = cfg.size("max_position_embeddings", Some(1048576))?;
    // The checkpoint's head is padded to vocab_size; transformers drops the rows past the real
    // vocabulary when it loads them, and writes them back as zeros.
    let rows = cfg.size("unpadded_vocab_size", Some(200058))?;
    if rows > s.vocab {
        return Err(cfg.err(
            "unpadded_vocab_size",
            format!("is {rows}, past vocab_size ({}): the stored head has vocab_size rows; give at most {}", s.vocab, s.vocab),
        ));
    }
    if rows < s.vocab {
        s.logits_kept = Some(rows);
    }
    let sliding = sliding_layers(cfg, family, dft.layers, None)?;
    s.layers = sliding.len() as u64;
    s.norm = Norm {
        kind: NormKind::Rms,
        eps: cfg.float("rms_norm_eps", 1e-6)?,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.embedding.norm = true;
    s.position = Position::None;
    let taps = cfg.size("conv_kernel_size", Some(4))?;
    let d_rel = cfg.size("d_rel", Some(16))?;
    let window = cfg.size("sliding_window_size", Some(1024))?;
    let qk_clip = positive_float(cfg, "qk_l2_clip_threshold", 22.627416997969522)?;
    let rel_clip = positive_float(cfg, "rel_l2_clip_threshold", 8.0)?;
    let attention = |heads: u64, kv: u64, head_dim: u64, extent: u64, full: bool| {
        let mut a = plain_attention(heads, kv, head_dim);
        a.l2_clip = Some(qk_clip);
        a.v_norm = true;
        a.rel_logits = Some(RelLogits {
            d_rel,
            extent,
            clip: Some(rel_clip),
        });
        a.kv_conv = Some(KvConv {
            conv: ResConv { taps, scaled: true },
            dynamic: full,
        });
        a.token_sinks = true;
        a.out_gate = Some(crate::spec::OutGate {
            softplus: false,
            per_head: false,
            bias: false,
            stored: crate::spec::GateStore::Own,
        });
        a.kv_inputs = full;
        a
    };
    let (heads, kv) = head_counts(
        cfg,
        "num_attention_heads",
        "num_key_value_heads",
        dft.heads,
        8,
    )?;
    let mut full = attention(
        heads,
        kv,
        cfg.size("head_dim", Some(128))?,
        cfg.size("rel_extent", Some(1024))?,
        true,
    );
    full.query_scale = Some(QueryScale {
        form: ScaleForm::Floored,
        beta: cfg.float("log_scaling_alpha", 0.1)?,
        length: cfg.size("log_scaling_n_floor", Some(dft.floor))?,
        shift: 1,
        nope_only: false,
    });
    let (swa_heads, swa_kv) = head_counts(
        cfg,
        "swa_num_attention_heads",
        "swa_num_key_value_heads",
        dft.swa_heads,
        8,
    )?;
    let swa = attention(
        swa_heads,
        swa_kv,
        cfg.size("swa_head_dim", Some(128))?,
        window,
        false,
    );
    let local = LayerSet::from_fn(s.layers, |b| sliding[b as usize]);
    if local.len() == s.layers {
        s.attn = swa;
    } else {
        s.attn = full;
        if !local.is_empty() {
            s.layer_attn = vec![(local, swa)];
        }
    }
    // Every FFN is routed experts: DeepSeek-V4's router, a SwiGLU with softcaps.
    let experts = super::experts(cfg, "n_routed_experts", Some(dft.experts))?;
    let mut m = super::plain_moe(
        experts,
        top_k(cfg, experts, Some(8))?,
        cfg.size("moe_intermediate_size", Some(dft.moe_inter))?,
    );
    let scoring = cfg.string("scoring_func", "sigmoid")?;
    if scoring != "sigmoid" {
        return Err(cfg.err(
            "scoring_func",
            format!("is {scoring:?}; Inkling 2's router scores experts by \"sigmoid\""),
        ));
    }
    m.scoring = Scoring::Sigmoid;
    m.correction_bias = true;
    m.norm_topk_prob = true;
    m.renorm_eps = 1e-20;
    m.routed_scaling = cfg.float("route_scale", 8.0)?;
    // Stored as the checkpoints hold them: gate and up rows alternate (`w13_weight`).
    m.storage = ExpertStorage::Stacked {
        out_in: true,
        interleaved: true,
    };
    m.glu_softcaps = Some((
        positive_float(cfg, "mlp_gate_softcap", 4.0)?,
        positive_float(cfg, "mlp_up_softcap", 25.0)?,
    ));
    s.moe = Some(m);
    s.plan = (0..s.layers as usize)
        .map(|b| {
            let span = if sliding[b] {
                AttnSpan::Sliding(window)
            } else {
                AttnSpan::Full
            };
            LayerPlan::attention(span, false, true)
        })
        .collect();
    s.out_conv = Some(ResConv { taps, scaled: true });
    let states = cfg.count("number_of_conv_states", 4)?;
    if states < 4 {
        return Err(cfg.err(
            "number_of_conv_states",
            format!("is {states}; each Inkling 2 layer carries 4 convolution states (K, V and both sublayers' outputs), so give 4"),
        ));
    }
    s.stream = crate::spec::Stream::AttnRes(AttnRes {
        block: cfg.size("n_layers_per_attn_res_block", Some(6))?,
        eps: ATTN_RES_EPS,
        looped: None,
    });
    s.final_softcap = Some(positive_float(cfg, "final_logit_softcapping", 30.0)?);
    s.tied = false;
    s.layout = Layout::Inkling2;
    Ok(s)
}

/// A positive finite number, the class default where absent.
fn positive_float(cfg: &Config, key: &str, default: f64) -> Result<f64> {
    let v = cfg.float(key, default)?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(cfg.err(key, format!("is {v}; it must be a positive number")));
    }
    Ok(v)
}
