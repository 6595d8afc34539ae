//! dots.3 Note (`dots3_note_text`; `dots3_note`, whose causal LM is the same model): what it
//! adds to DeepSeek-V3.2's latent attention and experts. Every layer attends with latent
//! attention whose latents are normed at the model's ε and rescaled to the stream's width, whose
//! shared rotary key is normed before RoPE, and whose heads are each gated by σ(x · W_g). Layers
//! are of three kinds (`layer_types`): with DeepSeek sparse attention's indexer, without it, or
//! in a sliding window, and each kind may have latent attention of its own sizes
//! (`per_layer_config`, or the `swa_*` keys for the sliding layers) and its own RoPE.

use super::{freqs, rope, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::layers::LayerSet;
use crate::spec::*;

/// A layer's kind, as `layer_types` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Latent attention with the indexer (`indexed_attention`).
    Indexed,
    /// Latent attention over every earlier token (`full_attention`).
    Full,
    /// Latent attention in a window (`sliding_attention`).
    Sliding,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Indexed, Kind::Full, Kind::Sliding];

    fn key(self) -> &'static str {
        match self {
            Kind::Indexed => "indexed_attention",
            Kind::Full => "full_attention",
            Kind::Sliding => "sliding_attention",
        }
    }
}

/// Each layer's kind: `layer_types`, else two full layers and then one of every four, the rest
/// sliding (all full with `use_sliding_window` false). The full layers run the indexer unless
/// `use_dsa` is false; `use_dsa`, given, renames the kinds of a saved `layer_types` the same way
/// (its default is true, or unset beside a `per_layer_config`).
pub(super) fn layer_kinds(cfg: &Config, layers: u64) -> Result<Vec<Kind>> {
    let use_dsa = if cfg.has("use_dsa") {
        Some(cfg.flag("use_dsa", true)?)
    } else if cfg.present("use_dsa") || cfg.present("per_layer_config") {
        // Given as null, or unset beside a per_layer_config.
        None
    } else {
        Some(true)
    };
    let sliding = cfg.flag("use_sliding_window", true)?;
    let parse = |v: &serde_json::Value| Kind::ALL.into_iter().find(|k| Some(k.key()) == v.as_str());
    let given = cfg.list(
        "layer_types",
        layers,
        parse,
        "\"indexed_attention\", \"full_attention\" or \"sliding_attention\"",
    )?;
    let full = if use_dsa == Some(false) {
        Kind::Full
    } else {
        Kind::Indexed
    };
    let kinds = given.unwrap_or_else(|| {
        (0..layers)
            .map(|i| {
                if !sliding || i < 2 || i % 4 == 1 {
                    full
                } else {
                    Kind::Sliding
                }
            })
            .collect()
    });
    Ok(kinds
        .into_iter()
        .map(|k| match (use_dsa, k) {
            (Some(true), Kind::Full) => Kind::Indexed,
            (Some(false), Kind::Indexed) => Kind::Full,
            _ => k,
        })
        .collect())
}

/// RoPE by layer kind. Without `rope_parameters` (or `rope_scaling`) the sliding layers turn at
/// `swa_rope_theta` and the others at `rope_theta`; one dict serves every kind; a dict per kind
/// must hold each kind the model has. The indexed and full layers share the frequencies anatomy
/// calls full, so where both are present they must agree. Each kind rotates all of its
/// `qk_rope_head_dim` (the class derives its fraction from it), in interleaved pairs.
pub(super) fn kind_rope(cfg: &Config, kinds: &[Kind], context: u64) -> Result<Rope> {
    let d = RopeDefaults::new(80_000_000.0, context);
    let swa_theta = cfg.float("swa_rope_theta", 50_000.0)?;
    let has = |k: Kind| kinds.contains(&k);
    let nested = cfg
        .sub("rope_parameters")?
        .filter(|p| Kind::ALL.iter().any(|k| p.has(k.key())));
    let (full, sliding) = match nested {
        Some(p) => {
            let top = cfg.float("rope_theta", d.theta)?;
            let of = |k: Kind| -> Result<Option<RopeFreqs>> {
                if !has(k) {
                    return Ok(None);
                }
                let sub = p.sub(k.key())?.ok_or_else(|| {
                    p.err(
                        k.key(),
                        "is missing; a dict per layer kind must hold every kind the model's layer_types has",
                    )
                })?;
                // The class sets each kind's fraction from its heads, whatever the dict says.
                sub.get("partial_rotary_factor");
                Ok(Some(freqs(&sub, top, &d, None)?))
            };
            let (indexed, full, sliding) =
                (of(Kind::Indexed)?, of(Kind::Full)?, of(Kind::Sliding)?);
            if let (Some(i), Some(f)) = (&indexed, &full) {
                if i != f {
                    return Err(p.err(
                        "full_attention",
                        "differs from indexed_attention; anatomy draws one RoPE for the layers that attend over every token, so the two must agree",
                    ));
                }
            }
            (indexed.or(full), sliding)
        }
        None if cfg.present("rope_parameters") || cfg.present("rope_scaling") => {
            let r = rope(cfg, &d)?;
            (Some(r.full), None)
        }
        None => {
            let top = cfg.float("rope_theta", d.theta)?;
            let plain = |theta| RopeFreqs {
                theta,
                scaling: RopeScaling::None,
            };
            (Some(plain(top)), Some(plain(swa_theta)))
        }
    };
    let full = match full {
        Some(f) => f,
        // Every layer slides: the sliding frequencies are the model's.
        None => sliding.clone().expect("a layer of some kind"),
    };
    let sliding = sliding.filter(|s| *s != full && has(Kind::Sliding));
    Ok(Rope {
        full,
        sliding,
        partial: 1.0,
        sliding_partial: None,
        interleaved: true,
        reversed: false,
        start: 0,
    })
}

/// One kind's latent attention sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dims {
    heads: u64,
    kv_heads: u64,
    q_lora: Option<u64>,
    kv_lora: u64,
    head_dim: u64,
    nope: u64,
    rope: u64,
    v: u64,
}

/// The attention keys a layer's entry in `per_layer_config` may override.
const DIM_KEYS: [&str; 8] = [
    "num_attention_heads",
    "num_key_value_heads",
    "q_lora_rank",
    "kv_lora_rank",
    "head_dim",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
];

impl Dims {
    /// The sizes `c` gives, each key missing there taking `base`'s.
    fn read(c: &Config, base: &Dims) -> Result<Dims> {
        let q_lora = if c.present("q_lora_rank") {
            c.opt_size("q_lora_rank")?
        } else {
            base.q_lora
        };
        Ok(Dims {
            heads: c.size(DIM_KEYS[0], Some(base.heads))?,
            kv_heads: c.size(DIM_KEYS[1], Some(base.kv_heads))?,
            q_lora,
            kv_lora: c.size(DIM_KEYS[3], Some(base.kv_lora))?,
            head_dim: c.size(DIM_KEYS[4], Some(base.head_dim))?,
            nope: c.size(DIM_KEYS[5], Some(base.nope))?,
            rope: c.size(DIM_KEYS[6], Some(base.rope))?,
            v: c.size(DIM_KEYS[7], Some(base.v))?,
        })
    }

    /// The sliding layers' sizes from the `swa_*` keys and the class's defaults for them.
    fn sliding(cfg: &Config) -> Result<Dims> {
        let q_lora = if cfg.present("swa_q_lora_rank") {
            cfg.opt_size("swa_q_lora_rank")?
        } else {
            Some(1024)
        };
        let head_dim = cfg.size("swa_head_dim", Some(256))?;
        let nope = cfg.size("swa_qk_nope_head_dim", Some(192))?;
        let rope = match cfg.opt_size("swa_qk_rope_head_dim")? {
            Some(r) => r,
            None if nope < head_dim => head_dim - nope,
            None => {
                return Err(cfg.err(
                    "swa_qk_nope_head_dim",
                    format!("is {nope}, not less than swa_head_dim ({head_dim}); the sliding layers rotate the rest of each head, so it must leave some"),
                ))
            }
        };
        Ok(Dims {
            heads: cfg.size("swa_num_attention_heads", Some(64))?,
            kv_heads: cfg.size("swa_num_key_value_heads", Some(64))?,
            q_lora,
            kv_lora: cfg.size("swa_kv_lora_rank", Some(1024))?,
            head_dim,
            nope,
            rope,
            v: cfg.size("swa_v_head_dim", Some(128))?,
        })
    }

    /// `base`'s attention with these sizes, checked as the class checks them, its latents
    /// scaled to a model `hidden` wide. The sizes came from `c`'s keys, each named with
    /// `prefix` (`swa_` for the sliding layers' defaults).
    fn attention(
        &self,
        (c, prefix): (&Config, &str),
        kind: Kind,
        base: &Attention,
        hidden: u64,
    ) -> Result<Attention> {
        let err = |key: &str, message: String| c.err(&format!("{prefix}{key}"), message);
        let Some(q_lora) = self.q_lora else {
            return Err(err(
                "q_lora_rank",
                "is null; dots.3 Note's latent attention needs a query latent".into(),
            ));
        };
        if self.kv_heads != self.heads {
            return Err(err(
                "num_key_value_heads",
                format!(
                    "is {}; with multi-head latent attention it must equal num_attention_heads ({})",
                    self.kv_heads, self.heads
                ),
            ));
        }
        if self.rope % 2 == 1 {
            return Err(err(
                "qk_rope_head_dim",
                format!(
                    "is {}, which is odd; RoPE rotates pairs of dims, so it must be even",
                    self.rope
                ),
            ));
        }
        if kind == Kind::Sliding && self.head_dim != self.nope + self.rope {
            return Err(err(
                "head_dim",
                format!(
                    "is {} for the sliding layers, but qk_nope_head_dim + qk_rope_head_dim = {}; the class requires them equal",
                    self.head_dim,
                    self.nope + self.rope
                ),
            ));
        }
        // The class computes RoPE's frequencies for int(head_dim × rope / head_dim) dims, which
        // float rounding can leave one short of the rotary width (its tables then still fit,
        // with other frequencies): refused rather than drawn wrong.
        let turned = (self.head_dim as f64 * (self.rope as f64 / self.head_dim as f64)) as u64;
        if turned != self.rope {
            return Err(err(
                "head_dim",
                format!(
                    "is {} with qk_rope_head_dim {}: the class computes RoPE's frequencies for int({} × {} / {}) = {turned} dims, not the rotary part's, which anatomy does not model; choose a head_dim that gives {1} back",
                    self.head_dim, self.rope, self.head_dim, self.rope, self.head_dim
                ),
            ));
        }
        let qk = self.nope + self.rope;
        let mut a = base.clone();
        a.heads = self.heads;
        a.kv_heads = self.heads;
        a.head_dim = qk;
        a.v_head_dim = self.v;
        a.scale_dim = qk as f64;
        let m = a.mla.as_mut().expect("latent attention");
        m.q_lora_rank = Some(q_lora);
        m.kv_lora_rank = self.kv_lora;
        m.qk_nope_head_dim = self.nope;
        m.qk_rope_head_dim = self.rope;
        let scale = |rank: u64| (hidden as f64 / rank as f64).sqrt();
        m.lora_scales = Some((scale(q_lora), scale(self.kv_lora)));
        Ok(a)
    }
}

/// What dots.3 Note adds to the V3.2 Spec `s` that `load` built from the top-level keys: the
/// layers' kinds and spans, each kind's attention, the latents' scales and ε, the rotary key's
/// norm, the gate per head, and the shared experts' own width.
pub(super) fn finish(cfg: &Config, s: &mut Spec, kinds: &[Kind]) -> Result<()> {
    let eps = s.norm.eps;
    let window = match cfg.opt_size("sliding_window")? {
        Some(w) => w,
        None => cfg.size("sliding_window_size", Some(512))?,
    };
    // Read either way: the class pops it, and uses it only without `sliding_window`.
    cfg.get("sliding_window_size");
    {
        let m = s.attn.mla.as_mut().expect("latent attention");
        m.latent_eps = eps;
        m.rope_key_norm = true;
    }
    // The class scales scores by 1/√(nope + rope) alone, whatever the RoPE's scaling.
    s.attn.scale_mult = 1.0;
    s.attn.out_gate = Some(OutGate {
        softplus: false,
        per_head: true,
        bias: false,
        stored: GateStore::Own,
    });
    let global = Dims {
        heads: s.attn.heads,
        kv_heads: cfg.size("num_key_value_heads", Some(128))?,
        q_lora: s.attn.mla.as_ref().and_then(|m| m.q_lora_rank),
        kv_lora: s.attn.mla.as_ref().map_or(0, |m| m.kv_lora_rank),
        head_dim: cfg.size("head_dim", Some(256))?,
        nope: s.attn.mla.as_ref().map_or(0, |m| m.qk_nope_head_dim),
        rope: s.attn.mla.as_ref().map_or(0, |m| m.qk_rope_head_dim),
        v: s.attn.v_head_dim,
    };
    // The `swa_*` keys are read either way: the class pops them, and without a
    // `per_layer_config` they give the sliding layers' sizes.
    let swa = Dims::sliding(cfg)?;
    let per_layer = cfg.sub("per_layer_config")?;
    let mut by_kind: Vec<(Kind, LayerSet, Attention)> = Vec::new();
    for kind in Kind::ALL {
        let set = LayerSet::from_fn(s.layers, |b| kinds[b as usize] == kind);
        if set.is_empty() {
            continue;
        }
        let (dims, entry) = match &per_layer {
            None if kind == Kind::Sliding => (swa, None),
            None => (global, None),
            Some(p) => kind_dims(p, kinds, kind, &global)?,
        };
        let source = match (&entry, kind) {
            (Some(e), _) => (e, ""),
            (None, Kind::Sliding) if per_layer.is_none() => (cfg, "swa_"),
            (None, _) => (cfg, ""),
        };
        let mut a = dims.attention(source, kind, &s.attn, s.hidden)?;
        if kind != Kind::Indexed {
            a.mla.as_mut().expect("latent attention").indexer = None;
        } else {
            let ix = a
                .mla
                .as_mut()
                .and_then(|m| m.indexer.as_mut())
                .expect("V3.2's indexer");
            if dims.rope > ix.head_dim {
                return Err(cfg.err(
                    "index_head_dim",
                    format!("is {}, less than the indexed layers' qk_rope_head_dim ({}); the indexer rotates that many of its dims", ix.head_dim, dims.rope),
                ));
            }
            ix.own = set.clone();
        }
        by_kind.push((kind, set, a));
    }
    // `attn` is the indexed layers' (else the full layers'); the other kinds have their own.
    let (_, _, first) = by_kind.remove(0);
    s.attn = first;
    s.layer_attn = by_kind.into_iter().map(|(_, set, a)| (set, a)).collect();
    for (l, kind) in s.plan.iter_mut().zip(kinds) {
        if *kind == Kind::Sliding {
            l.mixer = Mixer::Attention(AttnSpan::Sliding(window));
        }
    }
    // The shared experts: `n_shared_experts` of their own width, at least one.
    let width = if cfg.present("moe_shared_expert_intermediate_size") {
        cfg.get("shared_experts_intermediate_size");
        cfg.size("moe_shared_expert_intermediate_size", None)?
    } else {
        cfg.size("shared_experts_intermediate_size", Some(1536))?
    };
    if let Some(m) = s.moe.as_mut() {
        if m.shared_experts == 0 {
            return Err(cfg.err(
                "n_shared_experts",
                "is 0; dots.3 Note's experts need at least one shared expert",
            ));
        }
        m.shared_intermediate = width * m.shared_experts;
    }
    Ok(())
}

/// The sizes of the layers of `kind` with `per_layer_config`: each layer's entry over the
/// model's sizes, one set for the kind (the class reads one config per layer kind); and the
/// first entry that gave them, if any did.
fn kind_dims<'a>(
    p: &Config<'a>,
    kinds: &[Kind],
    kind: Kind,
    global: &Dims,
) -> Result<(Dims, Option<Config<'a>>)> {
    let mut found: Option<Dims> = None;
    let mut first_entry = None;
    for (b, k) in kinds.iter().enumerate() {
        if *k != kind {
            continue;
        }
        // Saved keyed by index, "5" or "05".
        let key = p
            .map
            .keys()
            .find(|key| key.parse::<usize>().ok() == Some(b))
            .cloned();
        let entry = match &key {
            Some(key) => p.sub(key)?,
            None => None,
        };
        let dims = match &entry {
            Some(entry) => Dims::read(entry, global)?,
            None => *global,
        };
        if first_entry.is_none() {
            first_entry = entry;
        }
        match found {
            Some(f) if f != dims => {
                return Err(p.err(
                    &key.unwrap_or_else(|| b.to_string()),
                    format!("gives layer {b} attention sizes unlike the other {} layers'; the class reads one config per layer kind, so they must agree", kind.key()),
                ))
            }
            _ => found = Some(dims),
        }
    }
    for key in p.map.keys() {
        if !key.parse::<usize>().is_ok_and(|b| b < kinds.len()) {
            return Err(p.err(
                key,
                format!(
                    "is not a layer index; per_layer_config is keyed by layer, 0 to {}",
                    kinds.len() - 1
                ),
            ));
        }
    }
    Ok((found.unwrap_or(*global), first_entry))
}
