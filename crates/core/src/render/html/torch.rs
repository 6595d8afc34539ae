//! The PyTorch reference: one module per model, written with its sizes, whose parameters are
//! named as its checkpoint names them, so `Model().load_state_dict(load_file(path))` takes the
//! published safetensors as they are (stacked experts, fused projections, Conv1D and router
//! buffers included). The page shows each part's piece of it.
//!
//! The Python is written as templates (`${name}` placeholders) and holds only what this model
//! uses; every attribute name comes from the layout's checkpoint names (`naming`).

use super::parts::{Kind, Part};
use crate::fmt::float as fmt_f;
use crate::naming::{names, Role};
use crate::spec::{
    Act, AttnSpan, Block, DeltaNet, DeltaStore, ExpertStorage, HfWrap, NormKind, NormPlace,
    OutGate, Position, QkNorm, Qkv, Rope, RopeFreqs, RopeScaling, ScaleForm, Scoring, Spec,
    SsmGate,
};

const HEADER: &str =
    "import math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n";

/// `${name}` → value, for each pair.
pub(super) fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut out = template.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("${{{k}}}"), v);
    }
    debug_assert!(!out.contains("${"), "unfilled placeholder in {out}");
    out
}

pub(super) fn py_bool(b: bool) -> String {
    if b { "True" } else { "False" }.into()
}

/// The snippet shown for `part`: imports, the helpers it uses, and its classes.
pub fn snippet(spec: &Spec, part: &Part) -> String {
    if let Some(bl) = spec.bytes.as_deref() {
        return format!(
            "{HEADER}\n\n{}\n",
            super::torch_blt::snippet(spec, bl, part.kind).trim_end()
        );
    }
    let n = Names::new(spec);
    let body = match part.kind {
        Kind::Embedding => embedding_note(spec, &n),
        Kind::Norm => norm(spec),
        // Inkling 2: its attention, experts and layers are its own.
        Kind::Attention if spec.attn_res.is_some() => super::torch_inkling2::attention(spec),
        Kind::Moe if spec.attn_res.is_some() => super::torch_inkling2::moe(spec),
        Kind::Head | Kind::HeadInput | Kind::PerLayer | Kind::Residual
            if spec.attn_res.is_some() =>
        {
            super::torch_inkling2::model(spec)
        }
        // DeepSeek-V4: likewise.
        Kind::Attention if spec.attn.v4.is_some() => super::torch_deepseek_v4::attention(spec),
        Kind::Moe if spec.attn.v4.is_some() => format!(
            "HIDDEN = {}\n\n{}",
            spec.hidden,
            super::torch_deepseek_v4::moe(spec)
        ),
        Kind::Head | Kind::HeadInput | Kind::Residual if spec.attn.v4.is_some() => {
            super::torch_deepseek_v4::model(spec)
        }
        Kind::Attention => [rope(spec), mask(spec), attention(spec, &n)].join("\n\n\n"),
        Kind::Mixer if spec.s6.as_ref().is_some_and(|s| s.heads > 1) => {
            super::torch_shared::mamba_heads(spec)
        }
        Kind::Mixer if spec.s6.is_some() => mamba(spec, &n),
        Kind::Mixer if spec.mlstm.is_some() => super::torch_mlstm::mlstm(spec),
        Kind::Mlp | Kind::Head if spec.mlstm.is_some() => super::torch_mlstm::model(spec),
        Kind::Mixer if spec.short_conv.is_some() => short_conv_class(spec, &n),
        Kind::Mixer if spec.delta.is_some() => gated_delta_net(spec, &n),
        Kind::Mixer if spec.lightning.is_some() => lightning_class(spec, &n),
        Kind::Mixer if spec.rg_lru.is_some() => rg_lru_class(spec, &n),
        Kind::Mixer | Kind::Mlp if spec.rwkv.is_some() => rwkv_classes(spec, &n),
        Kind::Mixer => mamba2(spec, &n),
        Kind::Mlp => mlp_classes(spec, &n),
        Kind::Moe => moe_classes(spec, &n),
        // Qwen4-Exp's n-gram embeddings: their modules, and the layer that adds them.
        Kind::PerLayer if spec.ngram_ple.is_some() => {
            [ngram_code(spec), layer(spec, &n)].join("\n\n\n")
        }
        // The layer holds the per-layer gate; the model computes every layer's inputs.
        Kind::PerLayer => [layer(spec, &n), model(spec, &n)].join("\n\n\n"),
        Kind::Shared => match &spec.shared {
            Some(s) => [
                super::torch_shared::block_classes(spec, s),
                super::torch_shared::model(spec, s),
            ]
            .join("\n\n\n"),
            None => unreachable!("a shared-block part comes from shared blocks"),
        },
        Kind::Residual => residual(spec),
        Kind::Head | Kind::HeadInput | Kind::Hierarchy | Kind::Loop => match spec.hierarchy {
            Some(h) => super::torch_hierarchy::model(spec, h),
            None => model(spec, &n),
        },
        Kind::Aux => mtp(spec),
        Kind::CrossAttention => cross_layer(spec),
        Kind::Stack(_) => unreachable!("a stack's part is BLT's, answered above"),
    };
    format!("{HEADER}\n\n{}\n", body.trim_end())
}

/// The whole model as one runnable module.
pub fn module(spec: &Spec) -> String {
    super::torch_decode::decoding(spec, assemble(spec))
}

fn assemble(spec: &Spec) -> String {
    if let Some(d) = spec.draft {
        // A draft model: its layers' module, turned to run a step from its target's state.
        let plain = Spec {
            draft: None,
            ..spec.clone()
        };
        return super::torch_draft::module(spec, d, &module(&plain));
    }
    if let Some(bl) = spec.bytes.as_deref() {
        return super::torch_blt::module(spec, bl, docstring(spec), HEADER);
    }
    let n = Names::new(spec);
    let mut parts = vec![docstring(spec), HEADER.trim_end().to_string(), norm(spec)];
    if spec.attn_res.is_some() {
        // Inkling 2: its attention, experts and layers are its own.
        parts.push(super::torch_inkling2::attention(spec));
        parts.push(super::torch_inkling2::moe(spec));
        parts.push(super::torch_inkling2::model(spec));
        return parts.join("\n\n\n") + "\n";
    }
    if spec.attn.v4.is_some() {
        // DeepSeek-V4: its attention, experts and layers are its own.
        parts.push(super::torch_deepseek_v4::attention(spec));
        parts.push(super::torch_deepseek_v4::moe(spec));
        parts.push(super::torch_deepseek_v4::model(spec));
        return parts.join("\n\n\n") + "\n";
    }
    if matches!(spec.position, Position::Rope(_)) {
        parts.push(rope(spec));
    }
    parts.extend(super::torch_decode::helpers(spec));
    if !spec.attn_variants().is_empty() {
        parts.push(mask(spec));
        parts.push(attention(spec, &n));
    }
    if spec.ssm.is_some() {
        parts.push(mamba2(spec, &n));
    }
    match &spec.s6 {
        Some(s) if s.heads > 1 => parts.push(super::torch_shared::mamba_heads(spec)),
        Some(_) => parts.push(mamba(spec, &n)),
        None => {}
    }
    if spec.short_conv.is_some() {
        parts.push(short_conv_class(spec, &n));
    }
    if spec.delta.is_some() {
        parts.push(gated_delta_net(spec, &n));
    }
    if spec.lightning.is_some() {
        parts.push(lightning_class(spec, &n));
    }
    if spec.rg_lru.is_some() {
        parts.push(rg_lru_class(spec, &n));
    }
    if spec.rwkv.is_some() {
        parts.push(rwkv_classes(spec, &n));
    }
    if spec.mlstm.is_some() {
        // xLSTM: its mixer, blocks and model are its own.
        parts.push(super::torch_mlstm::mlstm(spec));
        parts.push(super::torch_mlstm::model(spec));
        return parts.join("\n\n\n") + "\n";
    }
    if spec.altup.is_some() {
        // Gemma 3n: its layers and model are its own.
        parts.push(super::torch_altup::classes(spec));
        return parts.join("\n\n\n") + "\n";
    }
    if let Some(s) = &spec.shared {
        // Zamba's and Zamba2's layers and model are their own; the block's classes where a
        // layer runs it.
        if !s.layers.is_empty() {
            parts.push(super::torch_shared::block_classes(spec, s));
        }
        parts.push(super::torch_shared::model(spec, s));
        return parts.join("\n\n\n") + "\n";
    }
    if spec.layout.stores_in_out() {
        parts.push(CONV1D.to_string());
    }
    let variants = spec.attn_variants();
    if spec.out_conv.is_some() || variants.iter().any(|(a, _)| a.kv_conv.is_some()) {
        parts.push(RESIDUAL_CONV.to_string());
    }
    if variants.iter().any(|(a, _)| a.rel_logits.is_some()) {
        parts.push(RELATIVE_LOGITS.to_string());
    }
    if spec.plan.iter().any(|l| l.dense()) {
        parts.push(mlp_classes(spec, &n));
    }
    if spec.is_moe() {
        parts.push(moe_classes(spec, &n));
    }
    if spec.plan.iter().any(|l| !l.mixer.runs_on_text()) {
        parts.push(cross_layer(spec));
    }
    if let Some(g) = spec.gated_streams {
        parts.push(super::torch_gated::gated_mix_class(
            g,
            spec.hidden,
            spec.norm.eps,
            [
                Role::GsAttnNorm,
                Role::GsAttnDown,
                Role::GsAttnUp,
                Role::GsAttnInject,
            ]
            .map(|r| n.path(r).rsplit('.').next().unwrap_or_default().to_string()),
        ));
    }
    if spec.ngram_ple.is_some() {
        parts.push(ngram_code(spec));
    }
    if let Some(h) = spec.hyper {
        parts.push(super::torch_hyper::stream_mix_class(
            h,
            spec.hidden,
            spec.norm.eps,
        ));
    }
    if let Some(g) = &spec.gated_norm {
        parts.push(fill(
            r#"class GatedNorm(nn.Module):
    """RMSNorm, then its output gated by a sigmoid of a rank-${r} projection of itself."""

    def __init__(self):
        super().__init__()
        self.norm = Norm(${d})
        self.W_down = nn.Linear(${d}, ${r}, bias=False)
        self.W_up = nn.Linear(${r}, ${d}, bias=False)

    def forward(self, x):
        y = self.norm(x)
        return y * torch.sigmoid(self.W_up(F.silu(self.W_down(y))))"#,
            &[("r", g.rank.to_string()), ("d", spec.hidden.to_string())],
        ));
    }
    parts.push(layer(spec, &n));
    parts.push(match spec.hierarchy {
        Some(h) => super::torch_hierarchy::model(spec, h),
        None => model(spec, &n),
    });
    parts.join("\n\n\n") + "\n"
}

fn docstring(spec: &Spec) -> String {
    let load = if spec.not_drawn.is_empty() {
        "model.load_state_dict(load_file(\"model.safetensors\"))".to_string()
    } else {
        "model.load_state_dict(language_model_only(load_file(\"model.safetensors\")))".to_string()
    };
    format!(
        "\"\"\"{} in PyTorch, generated by anatomy from its architecture graph.\n\nParameters are named as the checkpoint names them, so its safetensors load as they are:\n\n    from safetensors.torch import load_file\n    model = Model()\n    {load}\n    logits = model(torch.tensor([[1, 2, 3]]))\n\"\"\"",
        crate::fmt::py_doc(&spec.name)
    )
}

/// Where each tensor sits, from the layout's checkpoint names: the attribute path below a layer
/// (`self_attn.q_proj`) and outside the layers (`model.embed_tokens`).
struct Names {
    layout: crate::spec::Layout,
    /// A wrapper that nests the language model inside its own `model` (Qwen3.5).
    nested: bool,
    /// The layer list's path (`model.layers`, `transformer.h`).
    layers: String,
}

impl Names {
    fn new(spec: &Spec) -> Names {
        let nested = spec.hf_wrap == HfWrap::Nested;
        let (hf, _) = names(spec.layout, Role::AttnNorm, false);
        let hf = if nested {
            HfWrap::Nested.apply(&hf)
        } else {
            hf
        };
        let layers = layer_split(&hf).map_or(hf.as_str(), |(l, _)| l).to_string();
        Names {
            layout: spec.layout,
            nested,
            layers,
        }
    }

    /// The module path of `role`'s tensor (without `.weight`), below a layer for layer roles.
    fn path(&self, role: Role) -> String {
        let (hf, _) = names(self.layout, role, false);
        let hf = if self.nested {
            HfWrap::Nested.apply(&hf)
        } else {
            hf
        };
        let hf = hf.strip_suffix(".weight").unwrap_or(&hf).to_string();
        match layer_split(&hf) {
            Some((_, rest)) => rest.replace(".{e}", ""),
            None => hf,
        }
    }

    /// The attribute holding `role`'s tensor in its own module (`q_proj`).
    fn attr(&self, role: Role) -> String {
        let p = self.path(role);
        p.rsplit('.').next().unwrap_or(&p).to_string()
    }

    /// The first component of `role`'s path below a layer (`self_attn`, `mlp`).
    fn sublayer(&self, role: Role) -> String {
        let p = self.path(role);
        p.split('.').next().unwrap_or(&p).to_string()
    }

    /// The path of `role`'s tensor inside its sublayer (`experts.gate_up_proj`).
    fn inside(&self, role: Role) -> String {
        let p = self.path(role);
        p.split_once('.').map_or(p.clone(), |(_, r)| r.to_string())
    }
}

/// An ungated MLP whose up and down projections sit under sublayers of their own (BERT's
/// `intermediate.dense` and `output.dense`).
fn split_mlp(spec: &Spec, n: &Names) -> bool {
    !spec.mlp.gated
        && n.sublayer(Role::Up) != n.sublayer(Role::Down)
        && n.path(Role::Down).contains('.')
}

/// An output gate's logits from the input `x`, and the line that makes its bias where it has
/// one per head (Beam), shared by the head's `vd` features.
fn gate_logits(n: &Names, g: OutGate, h: u64, vd: u64) -> (String, String) {
    let proj = format!("self.{}(x)", n.inside(Role::AttnGate));
    if !g.bias {
        return (String::new(), proj);
    }
    let b = n.inside(Role::AttnGateBias);
    let init =
        format!("        self.{b} = nn.Parameter(torch.zeros({h}))  # one gate bias per head\n");
    if g.per_head {
        (init, format!("({proj} + self.{b})"))
    } else {
        (init, format!("({proj} + self.{b}.repeat_interleave({vd}))"))
    }
}

/// A layer tensor's name split at its layer: at `{b}`, or at `{p}` where a checkpoint layer holds
/// two of the model's layers (LongCat-Flash).
fn layer_split(hf: &str) -> Option<(&str, &str)> {
    hf.split_once(".{b}.").or_else(|| hf.split_once(".{p}."))
}

// ---- norms --------------------------------------------------------------------------------------

pub(super) fn norm(spec: &Spec) -> String {
    let eps = spec.norm.eps;
    match (spec.norm.kind, spec.norm.unit_offset) {
        (NormKind::Unit, _) => fill(
            r#"class Norm(nn.Module):
    """L2 norm (nGPT): project each vector onto the unit sphere, length 1, in float32; no weight."""

    def __init__(self, dim=None, eps=${eps}):
        super().__init__()
        self.eps = eps

    def forward(self, x):  # [..., dim]
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).sum(-1, keepdim=True) + self.eps)).type_as(x)"#,
            &[("eps", eps.to_string())],
        ),
        (NormKind::PlainRms, _) => fill(
            r#"class Norm(nn.Module):
    """RMSNorm without a weight: rescale each vector to unit root-mean-square (in float32)."""

    def __init__(self, dim, eps=${eps}):
        super().__init__()
        self.eps = eps

    def forward(self, x):  # [..., dim]
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x)"#,
            &[("eps", eps.to_string())],
        ),
        (NormKind::Plain, _) => fill(
            r#"def Norm(dim, eps=${eps}):
    """LayerNorm without parameters: subtract the mean, divide by the standard deviation."""
    return nn.LayerNorm(dim, eps=eps, elementwise_affine=False)"#,
            &[("eps", eps.to_string())],
        ),
        (NormKind::Layer { bias }, false) => fill(
            r#"def Norm(dim, eps=${eps}):
    """LayerNorm: subtract the mean, divide by the standard deviation, scale${shift}."""
    return nn.LayerNorm(dim, eps=eps, bias=${bias})"#,
            &[
                ("eps", eps.to_string()),
                (
                    "shift",
                    if bias { " and shift" } else { " (no shift)" }.into(),
                ),
                ("bias", py_bool(bias)),
            ],
        ),
        (NormKind::Layer { bias }, true) => fill(
            r#"class Norm(nn.LayerNorm):
    """LayerNorm whose stored weight w is applied as (1 + w)."""

    def __init__(self, dim, eps=${eps}):
        super().__init__(dim, eps=eps, bias=${bias})

    def forward(self, x):  # [..., dim]
        return F.layer_norm(x, self.normalized_shape, self.weight + 1.0, self.bias, self.eps)"#,
            &[("eps", eps.to_string()), ("bias", py_bool(bias))],
        ),
        (NormKind::Rms, true) => fill(
            r#"class Norm(nn.Module):
    """RMSNorm whose stored weight w is applied as (1 + w), computed in float32."""

    def __init__(self, dim, eps=${eps}):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):  # [..., dim]
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (h * (1.0 + self.weight.float())).type_as(x)"#,
            &[("eps", eps.to_string())],
        ),
        // Its blocks' norms shift; a final norm without one is built with bias=False.
        (NormKind::RmsBias, _) => fill(
            r#"class Norm(nn.Module):
    """RMSNorm with a shift: rescale each vector to unit root-mean-square (in float32), then
    apply a learned gain and, where it has one, a learned shift."""

    def __init__(self, dim, eps=${eps}, bias=True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x):  # [..., dim]
        h = x.float()
        h = self.weight * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x)
        return h if self.bias is None else h + self.bias"#,
            &[("eps", eps.to_string())],
        ),
        (NormKind::Rms, false) => fill(
            r#"class Norm(nn.Module):
    """RMSNorm: rescale each vector to unit root-mean-square (in float32), then apply a learned gain."""

    def __init__(self, dim, eps=${eps}):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):  # [..., dim]
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.type_as(x)"#,
            &[("eps", eps.to_string())],
        ),
    }
}

// ---- rotary positions ---------------------------------------------------------------------------

/// The dims of a head that RoPE may turn: the whole head, or latent attention's rotary part.
fn turnable(a: &crate::spec::Attention) -> u64 {
    a.mla.as_ref().map_or(a.head_dim, |m| m.qk_rope_head_dim)
}

/// The sliding layers' rotated dims, of their own heads.
fn sliding_rope_dim(spec: &Spec, r: &Rope) -> u64 {
    let span = AttnSpan::Sliding(1);
    r.rotary_dim_for(span, turnable(spec.attn_for(span)))
}

/// The full layers' rotated dims, of their own heads (Gemma 4's global heads are larger).
fn rope_dim(spec: &Spec, r: &Rope) -> u64 {
    r.rotary_dim(turnable(spec.attn_for(AttnSpan::Full)))
}

/// The function computing one set of inverse frequencies for a sequence of `seq_len` tokens.
pub(super) fn freqs_fn(name: &str, f: &RopeFreqs, dim: u64) -> String {
    let base = fmt_f(f.theta);
    let scaled = match &f.scaling {
        RopeScaling::None => String::new(),
        RopeScaling::Linear { factor } => fill(
            "    inv_freq = inv_freq / ${factor}  # linear: every position squeezed ×${factor}\n",
            &[("factor", fmt_f(*factor))],
        ),
        RopeScaling::Dynamic { factor, original } => fill(
            r#"    if seq_len > ${original}:
        # dynamic NTK: past ${original} positions the base grows with the sequence
        base = ${base} * ((${factor} * seq_len / ${original}) - (${factor} - 1)) ** (${dim} / (${dim} - 2))
        inv_freq = 1.0 / (base ** (torch.arange(0, ${dim}, 2, dtype=torch.float32) / ${dim}))
"#,
            &[
                ("original", original.to_string()),
                ("factor", fmt_f(*factor)),
                ("base", base.clone()),
                ("dim", dim.to_string()),
            ],
        ),
        RopeScaling::Llama3 {
            factor,
            low_freq_factor,
            high_freq_factor,
            original,
        } => fill(
            r#"    # llama3: wavelengths longer than ${original}/${low} slowed ×${factor}, shorter than ${original}/${high} kept, a ramp between
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > ${original} / ${low}, inv_freq / ${factor}, inv_freq)
    smooth = (${original} / wavelen - ${low}) / (${high} - ${low})
    smoothed = (1 - smooth) * scaled / ${factor} + smooth * scaled
    medium = ~(wavelen < ${original} / ${high}) & ~(wavelen > ${original} / ${low})
    inv_freq = torch.where(medium, smoothed, scaled)
"#,
            &[
                ("original", original.to_string()),
                ("factor", fmt_f(*factor)),
                ("low", fmt_f(*low_freq_factor)),
                ("high", fmt_f(*high_freq_factor)),
            ],
        ),
        RopeScaling::Yarn {
            factor,
            original,
            beta_fast,
            beta_slow,
            attention_factor,
            truncate,
        } => fill(
            r#"    # YaRN: low frequencies interpolated ×${factor}, high ones kept, a linear ramp between
    def correction_dim(rotations):
        return (${dim} * math.log(${original} / (rotations * 2 * math.pi))) / (2 * math.log(${base}))

    low, high = correction_dim(${fast}), correction_dim(${slow})
${truncate}    low, high = max(low, 0), min(high, ${dim} - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(${half}, dtype=torch.float32) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    inv_freq = inv_freq / ${factor} * (1 - extrapolation) + inv_freq * extrapolation
    attention_factor = ${attn}
"#,
            &[
                ("factor", fmt_f(*factor)),
                ("original", original.to_string()),
                ("base", base.clone()),
                ("dim", dim.to_string()),
                ("half", (dim / 2).to_string()),
                ("fast", fmt_f(*beta_fast)),
                ("slow", fmt_f(*beta_slow)),
                ("attn", attention_factor.to_string()),
                (
                    "truncate",
                    if *truncate {
                        "    low, high = math.floor(low), math.ceil(high)\n".into()
                    } else {
                        "    # the ramp's ends are not rounded to whole dims (truncate: false)\n"
                            .into()
                    },
                ),
            ],
        ),
        RopeScaling::Proportional { factor, fraction } => fill(
            "    # proportional: the first ${turning} of the ${half} pairs turn, the rest stay still\n    inv_freq = torch.where(torch.arange(${half}) < ${turning}, inv_freq / ${factor}, 0.0)\n",
            &[
                ("turning", ((fraction * dim as f64 / 2.0).floor() as u64).to_string()),
                ("half", (dim / 2).to_string()),
                ("factor", fmt_f(*factor)),
            ],
        ),
        RopeScaling::LongRope {
            short,
            original,
            mscale: Some((short_scale, long_scale)),
            ..
        } => fill(
            r#"    # LongRoPE as PhiMoE reads it: the short factors at every length; cos and sin scaled by
    # ${s} up to ${original} positions, by ${l} beyond
    factors = torch.tensor(${short}, dtype=torch.float32)
    inv_freq = 1.0 / (factors * ${base} ** (torch.arange(0, ${dim}, 2, dtype=torch.float32) / ${dim}))
    attention_factor = ${l} if seq_len > ${original} else ${s}
"#,
            &[
                ("original", original.to_string()),
                ("short", format!("{short:?}")),
                ("s", short_scale.to_string()),
                ("l", long_scale.to_string()),
                ("base", base.clone()),
                ("dim", dim.to_string()),
            ],
        ),
        RopeScaling::LongRope {
            short,
            long,
            original,
            attention_factor,
            mscale: None,
        } => {
            let list = |v: &[f64]| {
                let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                format!("[{}]", items.join(", "))
            };
            fill(
                r#"    # LongRoPE: one factor per rotated pair, the short set up to ${original} positions, the long beyond
    short = torch.tensor(${short}, dtype=torch.float32)
    long = torch.tensor(${long}, dtype=torch.float32)
    factors = long if seq_len > ${original} else short
    inv_freq = 1.0 / (factors * ${base} ** (torch.arange(0, ${dim}, 2, dtype=torch.float32) / ${dim}))
    attention_factor = ${attn}
"#,
                &[
                    ("original", original.to_string()),
                    ("short", list(short)),
                    ("long", list(long)),
                    ("base", base.clone()),
                    ("dim", dim.to_string()),
                    ("attn", attention_factor.to_string()),
                ],
            )
        }
    };
    fill(
        r#"def ${name}(seq_len):
    """Inverse frequencies of ${dim} rotated dims (${desc}), and the factor on cos and sin."""
    inv_freq = 1.0 / (${base} ** (torch.arange(0, ${dim}, 2, dtype=torch.float32) / ${dim}))
    attention_factor = 1.0
${scaled}    return inv_freq, attention_factor"#,
        &[
            ("name", name.to_string()),
            ("dim", dim.to_string()),
            ("desc", f.describe()),
            ("base", base),
            ("scaled", scaled),
        ],
    )
}

fn rope(spec: &Spec) -> String {
    let Position::Rope(r) = &spec.position else {
        return match spec.position {
            Position::Learned => {
                "# No rotary embedding: positions enter as learned embeddings added to the tokens."
            }
            Position::Sinusoidal(_) => {
                "# No rotary embedding: positions enter as fixed sinusoids added to the tokens."
            }
            Position::Alibi(_) => {
                "# No rotary embedding: each head adds a linear penalty on key distance (ALiBi) to its scores."
            }
            Position::Buckets(_) => {
                "# No rotary embedding: each head adds a learned bias per distance bucket to its scores."
            }
            Position::None if spec.attn.rel_logits.is_some() => {
                "# No rotary embedding: each attention layer adds relative logits (RelativeLogits) to its scores."
            }
            Position::None => "# No position encoding: attention sees order only through the causal mask and any recurrent layers.",
            Position::Rope(_) => unreachable!("matched by the let-else above"),
        }
        .into();
    };
    let dim = rope_dim(spec, r);
    let mut out = vec![freqs_fn("rope_frequencies", &r.full, dim)];
    if let Some(s) = &r.sliding {
        // The sliding layers' own rotated dims where they differ (Laguna, Gemma 4's smaller
        // heads, dots.3 Note's sliding latent attention).
        let sliding_dim = if r.sliding_partial.is_some()
            || turnable(spec.attn_for(AttnSpan::Sliding(1)))
                != turnable(spec.attn_for(AttnSpan::Full))
        {
            sliding_rope_dim(spec, r)
        } else {
            dim
        };
        out.push(freqs_fn("sliding_rope_frequencies", s, sliding_dim));
    }
    out.push(fill(
        r#"def rope_cos_sin(frequencies, T, dtype):
    """cos and sin of every position's angles: [T, rotated dims]."""
    inv_freq, factor = frequencies(T)
    angles = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]  # [T, rotated dims / 2]
    angles = torch.cat((angles, angles), dim=-1)
    return (angles.cos() * factor).to(dtype), ${sign}(angles.sin() * factor).to(dtype)"#,
        &[
            // This model rotates backwards: its rotate_half is (x₂, −x₁).
            ("sign", if r.reversed { "-" } else { "" }.into()),
        ],
    ));
    out.push(if r.interleaved {
        r#"def apply_rope(x, cos, sin):  # x: [B, heads, T, d]; the first cos.shape[-1] dims rotate
    """Rotate interleaved pairs (x0, x1), (x2, x3) … as complex numbers."""
    dim = cos.shape[-1]
    rot, rest = x[..., :dim], x[..., dim:]
    a, b = rot[..., 0::2], rot[..., 1::2]
    c, s = cos[..., : dim // 2], sin[..., : dim // 2]
    rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
    return torch.cat((rot, rest), dim=-1)"#
            .to_string()
    } else {
        r#"def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, cos, sin):  # x: [B, heads, T, d]; the first cos.shape[-1] dims rotate
    dim = cos.shape[-1]
    rot, rest = x[..., :dim], x[..., dim:]
    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)"#
            .to_string()
    });
    out.join("\n\n\n")
}

fn mask(spec: &Spec) -> String {
    let mut spans: Vec<AttnSpan> = spec.plan.iter().filter_map(|l| l.span()).collect();
    spans.sort();
    spans.dedup();
    let mut rules = String::new();
    for s in spans {
        match s {
            AttnSpan::Full => {}
            AttnSpan::Whole => rules += "    if span[0] == \"whole\":\n        allowed = torch.ones(T, T, dtype=torch.bool)  # both ways: every query sees every key, later ones too\n",
            AttnSpan::Sliding(_) => rules += "    if span[0] == \"sliding\":\n        allowed &= i - j < span[1]  # only the last span[1] keys\n",
            AttnSpan::Chunked(_) => rules += "    if span[0] == \"chunked\":\n        allowed &= (j // span[1]) == (i // span[1])  # only keys of the same chunk\n",
        }
    }
    let bias = match spec.position {
        Position::Buckets(b) => position_bias(spec, b),
        // The others add nothing to the scores here (ALiBi's slopes are written in `attend`).
        Position::Rope(_)
        | Position::Learned
        | Position::Sinusoidal(_)
        | Position::Alibi(_)
        | Position::None => String::new(),
    };
    bias + &fill(
        r#"def attention_mask(T, span):
    """True where query i may attend to key j; span is ("full", 0), ("sliding", w) or ("chunked", c)."""
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    allowed = j <= i  # causal
${rules}    return allowed"#,
        &[("rules", rules)],
    )
}

/// The bucketed relative-position bias as a function of the table, for the model to compute once
/// and hand every layer.
fn position_bias(spec: &Spec, b: crate::spec::Buckets) -> String {
    let segments = match spec.prompt {
        Some(p) => fill(
            r#"    seg = torch.where(torch.arange(T) < P, ${ps}, ${ts})  # each position's segment: the prompt's, then the text's
    across = ${buckets} + seg[:, None] * ${segments} + seg[None, :]  # a row of its own per pair of segments
    row = torch.where(seg[:, None] == seg[None, :], row, across)
"#,
            &[
                ("ps", crate::spec::PROMPT_SEGMENT.to_string()),
                ("ts", crate::spec::TEXT_SEGMENT.to_string()),
                ("buckets", b.buckets.to_string()),
                ("segments", p.segments.to_string()),
            ],
        ),
        None => String::new(),
    };
    let half = b.buckets / 2;
    let exact = half / 2;
    fill(
        r#"def position_bias(table, T, P):
    """[1, heads, T, T]: the learned bias of key j for the query at i, by bucket of j - i: ${half}
    buckets for keys before the query, ${half} for keys after it; distances below ${exact} have one
    each, longer ones share buckets spaced by log distance up to ${max}. P: the prompt's length."""
    rel = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # j - i
    a = rel.abs()
    far = ${exact} + (torch.log(a.clamp(min=1).float() / ${exact}) / math.log(${max} / ${exact}) * ${span}).to(torch.int64)
    row = (rel > 0) * ${half} + torch.where(a < ${exact}, a, far.clamp(max=${last}))
${segments}    return table[row.to(table.device)].permute(2, 0, 1).unsqueeze(0)


"#,
        &[
            ("half", half.to_string()),
            ("exact", exact.to_string()),
            ("max", b.max_distance.to_string()),
            ("span", (half - exact).to_string()),
            ("last", (half - 1).to_string()),
            ("segments", segments),
        ],
    )
}

// ---- attention ----------------------------------------------------------------------------------

/// The score scale as a Python expression: 1/√d, times YaRN's mscale² where the Spec has it.
fn scale_text(spec: &Spec) -> String {
    let a = &spec.attn;
    if a.scale_mult != 1.0 {
        format!("{} ** -0.5 * {}", fmt_f(a.scale_dim), a.scale_mult)
    } else {
        format!("{} ** -0.5", fmt_f(a.scale_dim))
    }
}

/// A linear layer's constructor: nn.Linear, or GPT-2's Conv1D stored [in, out].
fn linear(spec: &Spec, inp: &str, out: &str, bias: bool) -> String {
    if spec.layout.stores_in_out() {
        format!("Conv1D({inp}, {out})")
    } else {
        format!("nn.Linear({inp}, {out}, bias={})", py_bool(bias))
    }
}

/// Inkling's residual short convolution.
const RESIDUAL_CONV: &str = r#"class ResidualConv(nn.Module):
    """x plus its causal depthwise convolution: each channel mixed over its last `taps` positions;
    `scaled`: the sum divided by sqrt(taps + 1)."""

    def __init__(self, channels, taps, scaled=False):
        super().__init__()
        self.scale = (taps + 1) ** -0.5 if scaled else 1.0
        self.conv1d = nn.Conv1d(channels, channels, taps, groups=channels, padding=taps - 1, bias=False)

    def forward(self, x):  # [B, T, channels]
        T = x.shape[1]
        return (x + self.conv1d(x.transpose(1, 2))[..., :T].transpose(1, 2)) * self.scale"#;

/// Inkling's relative logits.
pub(super) const RELATIVE_LOGITS: &str = r#"class RelativeLogits(nn.Module):
    """A bank of bias-by-distance profiles; each query's relative state mixes them into its bias."""

    def __init__(self, d_rel, extent):
        super().__init__()
        self.extent = extent
        self.proj = nn.Parameter(torch.empty(d_rel, extent))

    def forward(self, r, T):  # r: [B, heads, T, d_rel] -> [B, heads, T, T]
        per_distance = r @ self.proj  # [B, heads, T, extent]: the bias at each backward distance
        distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).to(r.device)  # i - j
        index = distance.clamp(0, self.extent - 1).expand(*per_distance.shape[:2], T, T)
        bias = per_distance.gather(-1, index)
        return bias.masked_fill((distance < 0) | (distance >= self.extent), 0.0)  # nothing ahead or beyond"#;

const CONV1D: &str = r#"class Conv1D(nn.Module):
    """GPT-2's linear layer: the weight stored [in, out], with a bias."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias"#;

/// Attention's last steps, shared by GQA and MLA: scale, softcap, mask, sink, softmax, values.
/// Scores, mask, softmax and values. `keep`: a further [B, T, T] boolean of the keys each query
/// may see (DeepSeek sparse attention's choice), by its Python name.
fn attend(spec: &Spec, heads: u64, vd: u64, keep: Option<&str>) -> String {
    let a = &spec.attn;
    let mut s = format!(
        "        scores = (q @ k.transpose(-1, -2)) * {}  # [B, {heads}, T, T]\n",
        scale_text(spec)
    );
    if let Position::Alibi(slopes) = &spec.position {
        let list: Vec<String> = slopes.iter().map(|m| format!("{m:?}")).collect();
        s += &format!(
            "        slopes = torch.tensor([{}])  # ALiBi: one slope per head\n        distance = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # j - i\n        scores = scores + slopes.view(1, {heads}, 1, 1) * distance.to(x.device)\n",
            list.join(", ")
        );
    }
    if let Position::Buckets(_) = spec.position {
        s += &format!("        scores = scores + rope  # [B, {heads}, T, T]: here `rope` is the model's position bias, the same for every layer\n");
    }
    if a.rel_logits.is_some() {
        s += &format!("        scores = scores + rel  # [B, {heads}, T, T]: each query's bias for each key's distance\n");
    }
    if let Some(c) = a.softcap {
        s += &format!("        scores = {c} * torch.tanh(scores / {c})  # softcap\n");
    }
    let mut allowed = "attention_mask(T, self.span).to(x.device)".to_string();
    if let Some(k) = keep {
        allowed = format!("({allowed} & {k})");
    }
    s += &format!("        scores = scores.masked_fill(~{allowed}, float(\"-inf\"))\n");
    if let Some(dm) = a.dynamic_mask {
        let g = heads / a.kv_heads;
        s += &format!(
            "        delta = delta.repeat_interleave({g}, dim=1)[:, :, None, :]  # [B, {heads}, 1, T]: each key's score\n        choice = delta.masked_fill(~{allowed}, float(\"-inf\"))  # the visible keys' scores\n        scores = scores + delta\n        if T > {k}:  # only the {k} best-scored keys stay\n            floor = choice.topk({k}, dim=-1).values[..., -1:]\n            scores = scores.masked_fill(choice < floor, float(\"-inf\"))\n",
            k = dm.keep
        );
    }
    if a.sinks {
        s += &format!(
            "        sink = self.{}.view(1, {heads}, 1, 1).expand(B, {heads}, T, 1).to(scores.dtype)\n        probs = torch.cat([scores, sink], dim=-1).float().softmax(dim=-1)[..., :-1].to(q.dtype)  # the sink takes its share, then is dropped\n",
            Names::new(spec).inside(Role::Sinks)
        );
    } else {
        s += "        probs = scores.float().softmax(dim=-1).to(q.dtype)\n";
    }
    s += &format!("        out = (probs @ v).transpose(1, 2).reshape(B, T, {heads} * {vd})\n");
    s
}

/// The attention module, or where some layers have their own (`layer_attn`), a class for each
/// variant and the list of every layer's class.
fn attention(spec: &Spec, n: &Names) -> String {
    // Layers that share keys and values read them from the ones that store theirs.
    let store = spec.attn_variants().iter().any(|(a, _)| a.shares_kv);
    if spec.layer_attn.is_empty() {
        return attention_class(spec, n, "Attention", store);
    }
    let mut parts = vec![attention_class(spec, n, "Attention", store)];
    if store {
        parts[0] = format!("# The keys and values of the last layer of each span kind that projects its own, for the\n# layers that share them.\nSHARED_KV = {{}}\n\n\n{}", parts[0]);
    }
    for (i, (_, a)) in spec.layer_attn.iter().enumerate() {
        let mut own = spec.clone();
        own.attn = a.clone();
        own.layer_attn.clear();
        parts.push(attention_class(
            &own,
            n,
            &format!("Attention{}", i + 1),
            store,
        ));
    }
    let classes: Vec<String> = (0..spec.layers as usize)
        .map(|b| {
            match spec
                .layer_attn
                .iter()
                .position(|(set, _)| set.contains(b as u64))
            {
                Some(i) => format!("Attention{}", i + 1),
                None => "Attention".into(),
            }
        })
        .collect();
    parts.push(format!(
        "# Each layer's attention class: some layers have their own heads.\nATTENTION = [{}]",
        classes.join(", ")
    ));
    parts.join("\n\n\n")
}

/// `init` with the sublayer modules made first, where other parts of the layer sit inside them
/// (DBRX's norms beside its attention in `norm_attn_norm`, CPM-Ant's in `self_att` and `ffn`).
fn modules_first(init: &str, modules: &[&str]) -> String {
    let makes: Vec<String> = modules
        .iter()
        .map(|m| format!("        self.{m} = "))
        .collect();
    let (first, rest): (Vec<&str>, Vec<&str>) = init
        .lines()
        .partition(|l| makes.iter().any(|m| l.starts_with(m)));
    first
        .into_iter()
        .chain(rest)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The layer's attribute holding its attention (`self_attn`).
fn attn_sublayer(spec: &Spec, n: &Names) -> String {
    n.sublayer(if spec.attn.moa.is_some() {
        Role::Kv
    } else {
        Role::O
    })
}

/// `self.a = nn.Module()` for every module above these attribute paths (`experts` and
/// `experts.router` above `experts.router.layer`), outermost first.
fn holders_of(paths: &[String]) -> String {
    let mut held: Vec<String> = Vec::new();
    for p in paths {
        let parts: Vec<&str> = p.split('.').collect();
        for i in 1..parts.len() {
            let h = parts[..i].join(".");
            if !held.contains(&h) {
                held.push(h);
            }
        }
    }
    held.iter()
        .map(|h| format!("        self.{h} = nn.Module()\n"))
        .collect()
}

/// JetMoE's mixture of attention heads.
fn moa(spec: &Spec, n: &Names, m: crate::spec::Moa) -> String {
    let a = &spec.attn;
    let (d, kv, hd, e, k) = (spec.hidden, a.kv_heads, a.head_dim, m.experts, m.top_k);
    let (kvp, router, wq, wo, bias) = (
        n.inside(Role::Kv),
        n.inside(Role::AttnRouter),
        n.inside(Role::AttnExpertQ),
        n.inside(Role::AttnExpertO),
        n.inside(Role::AttnExperts),
    );
    let holders = holders_of(&[
        router.clone(),
        format!("{wq}.weight"),
        format!("{wo}.weight"),
        format!("{bias}.bias"),
    ]);
    let rope = if matches!(spec.position, Position::Rope(_)) {
        "        if self.use_rope:\n            cos, sin = rope\n            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n"
    } else {
        ""
    };
    fill(
        r#"class Attention(nn.Module):
    """A mixture of attention heads: each token's ${k} chosen experts of ${e} bring a query and an
    output projection each, over one set of ${kv} K/V heads."""

    def __init__(self, span=("full", 0), use_rope=True):
        super().__init__()
        self.span, self.use_rope = span, use_rope
${holders}        self.${kvp} = nn.Linear(${d}, 2 * ${kv} * ${hd}, bias=False)  # K, then V
        self.${router} = nn.Linear(${d}, ${e}, bias=False)  # the router
        self.${wq}.weight = nn.Parameter(torch.zeros(${e}, ${kv} * ${hd}, ${d}))  # each expert's query projection
        self.${wo}.weight = nn.Parameter(torch.zeros(${e}, ${d}, ${kv} * ${hd}))  # each expert's output projection
        self.${bias}.bias = nn.Parameter(torch.zeros(${d}))  # shared by the experts

    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
        top, idx = self.${router}(x).topk(${k}, dim=-1)  # [B, T, ${k}]: each token's experts, best first
        gates = top.float().softmax(dim=-1).to(x.dtype)  # softmax over the chosen logits
        slots = x.unsqueeze(2).expand(B, T, ${k}, ${d})  # the input, once per slot
        q = x.new_zeros(B, T, ${k}, ${kv} * ${hd})
        for e in range(${e}):
            rows = idx == e
            if rows.any():
                q[rows] = slots[rows] @ self.${wq}.weight[e].T  # slot j's queries from its expert
        k, v = self.${kvp}(x).view(B, T, 2, ${kv}, ${hd}).unbind(2)
        # K/V group i's query heads are the ${k} slots' head i
        q = q.view(B, T, ${k}, ${kv}, ${hd}).permute(0, 3, 2, 1, 4).reshape(B, ${kv} * ${k}, T, ${hd})
        k, v = k.transpose(1, 2), v.transpose(1, 2)  # [B, ${kv}, T, ${hd}]
${rope}        k = k.repeat_interleave(${k}, dim=1)  # each K/V head serves ${k} query heads
        v = v.repeat_interleave(${k}, dim=1)
${attend}        out = out.view(B, T, ${kv}, ${k}, ${hd}).transpose(2, 3).reshape(B, T, ${k}, ${kv} * ${hd})  # slot j's heads
        y = torch.zeros_like(x)
        for e in range(${e}):
            rows = idx == e
            if rows.any():
                b, t, _ = rows.nonzero(as_tuple=True)
                y.index_put_((b, t), gates[rows, None] * (out[rows] @ self.${wo}.weight[e].T), accumulate=True)
        return y + self.${bias}.bias  # [B, T, ${d}]"#,
        &[
            ("holders", holders),
            ("kvp", kvp),
            ("router", router),
            ("wq", wq),
            ("wo", wo),
            ("bias", bias),
            ("rope", rope.to_string()),
            ("attend", attend(spec, a.heads, a.v_head_dim, None)),
            ("d", d.to_string()),
            ("kv", kv.to_string()),
            ("hd", hd.to_string()),
            ("e", e.to_string()),
            ("k", k.to_string()),
        ],
    )
}

/// One attention class, `class`, of `spec.attn`; `store`: the model has layers that share keys
/// and values, which this one keeps for them unless it shares itself.
fn attention_class(spec: &Spec, n: &Names, class: &str, store: bool) -> String {
    if spec.attn.mla.is_some() {
        return mla(spec, n, class);
    }
    if let Some(cca) = spec.attn.cca {
        return cca_attention(spec, class, cca);
    }
    if let Some(m) = spec.attn.moa {
        return moa(spec, n, m);
    }
    let a = &spec.attn;
    let (d, h, kv, hd) = (spec.hidden, a.heads, a.kv_heads, a.head_dim);
    // A value head's width: narrower than Q's and K's in MiMo-V2-Flash (three separate
    // projections there; the fused layouts hold heads of one width).
    let vhd = a.v_head_dim;
    let mut init = String::new();
    let mut fwd = String::from("        B, T, _ = x.shape\n");
    let shares = a.shares_kv;
    match a.qkv {
        // Gemma 4: a layer that shares projects queries alone; keys may be the values too.
        Qkv::Separate if shares || a.v_from_k => {
            let (q, k) = (n.inside(Role::Q), n.inside(Role::K));
            init += &format!(
                "        self.{q} = {}\n",
                linear(spec, &d.to_string(), &format!("{h} * {hd}"), a.qkv_bias)
            );
            if shares {
                fwd += &format!(
                    "        q = self.{q}(x)  # the keys and values are an earlier layer's\n"
                );
            } else {
                init += &format!(
                    "        self.{k} = {}  # the values too\n",
                    linear(spec, &d.to_string(), &format!("{kv} * {hd}"), a.qkv_bias)
                );
                fwd += &format!("        q, k = self.{q}(x), self.{k}(x)\n        v = k  # the values are the keys as projected\n");
            }
        }
        Qkv::Separate => {
            let (q, k, v) = (n.inside(Role::Q), n.inside(Role::K), n.inside(Role::V));
            let gated = a.out_gate.is_some_and(|g| g.in_query());
            let q_rows = if gated {
                format!("{h} * 2 * {hd}")
            } else {
                format!("{h} * {hd}")
            };
            init += &format!(
                "        self.{q} = {}{}\n        self.{k} = {}\n        self.{v} = {}\n",
                linear(spec, &d.to_string(), &q_rows, a.qkv_bias),
                if gated {
                    "  # per head: its queries, then its output gate"
                } else {
                    ""
                },
                linear(spec, &d.to_string(), &format!("{kv} * {hd}"), a.qkv_bias),
                linear(spec, &d.to_string(), &format!("{kv} * {vhd}"), a.qkv_bias),
            );
            fwd += &format!("        q, k, v = self.{q}(x), self.{k}(x), self.{v}(x)\n");
            if gated {
                fwd += &format!("        q, gate = q.view(B, T, {h}, 2, {hd}).unbind(3)\n        q, gate = q.reshape(B, T, {h} * {hd}), gate.reshape(B, T, {h} * {hd})\n");
            }
        }
        Qkv::Stacked if a.out_gate.is_some_and(|g| g.before_qkv()) => {
            let qkv = n.inside(Role::Qkv);
            init += &format!(
                "        self.{qkv} = {}  # the output gate, q, k and v stacked: all gate rows, then query, key, value\n",
                linear(spec, &d.to_string(), &format!("(2 * {h} + 2 * {kv}) * {hd}"), a.qkv_bias)
            );
            fwd += &format!(
                "        gate, q, k, v = self.{qkv}(x).split([{h} * {hd}, {h} * {hd}, {kv} * {hd}, {kv} * {hd}], dim=-1)\n"
            );
        }
        Qkv::Stacked => {
            let qkv = n.inside(Role::Qkv);
            init += &format!(
                "        self.{qkv} = {}  # q, k and v stacked: all query rows, then key, then value\n",
                linear(spec, &d.to_string(), &format!("({h} + 2 * {kv}) * {hd}"), a.qkv_bias)
            );
            fwd += &format!(
                "        q, k, v = self.{qkv}(x).split([{h} * {hd}, {kv} * {hd}, {kv} * {hd}], dim=-1)\n"
            );
        }
        Qkv::Parts(parts) => {
            let qkv = n.inside(Role::Qkv);
            init += &format!(
                "        self.{qkv} = {}  # {parts} parts, each [q | v | k] of a 1/{parts} share of the heads\n",
                linear(spec, &d.to_string(), &format!("3 * {h} * {hd}"), a.qkv_bias)
            );
            fwd += &format!(
                "        qkv = self.{qkv}(x).view(B, T, {parts}, 3, {h} * {hd} // {parts})\n        q, v, k = (qkv[:, :, :, i].reshape(B, T, {h} * {hd}) for i in range(3))\n"
            );
        }
        Qkv::Grouped => {
            let qkv = n.inside(Role::Qkv);
            let g = h / kv;
            init += &format!(
                "        self.{qkv} = {}  # per K/V group: its {g} query heads, its key, its value\n",
                linear(spec, &d.to_string(), &format!("({h} + 2 * {kv}) * {hd}"), a.qkv_bias)
            );
            fwd += &format!(
                "        qkv = self.{qkv}(x).view(B, T, {kv}, {g} + 2, {hd})\n        q = qkv[:, :, :, :{g}].reshape(B, T, {h} * {hd})\n        k = qkv[:, :, :, {g}].reshape(B, T, {kv} * {hd})\n        v = qkv[:, :, :, {g} + 1].reshape(B, T, {kv} * {hd})\n"
            );
        }
    }
    let o = n.inside(Role::O);
    init += &format!(
        "        self.{o} = {}\n",
        linear(spec, &format!("{h} * {vhd}"), &d.to_string(), a.o_bias)
    );
    // Inkling: K and V each through a residual convolution over time, once projected.
    if let Some(kc) = a.kv_conv {
        let (taps, scaled) = (kc.conv.taps, py_bool(kc.conv.scaled));
        let module = |role| {
            n.inside(role)
                .split('.')
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let (kc, vc) = (module(Role::KConv), module(Role::VConv));
        init += &format!("        self.{kc} = ResidualConv({kv} * {hd}, {taps}, {scaled})\n        self.{vc} = ResidualConv({kv} * {vhd}, {taps}, {scaled})\n");
        fwd += &format!("        k, v = self.{kc}(k), self.{vc}(v)  # each channel mixed over its last {taps} positions\n");
    }
    let (qn, kn) = (n.inside(Role::QNorm), n.inside(Role::KNorm));
    match a.qk_norm {
        QkNorm::PerHead | QkNorm::PerHeadPostRope if shares => {
            init += &format!("        self.{qn} = Norm({hd})  # over each head's {hd} dims, shared by the heads\n");
        }
        QkNorm::PerHead | QkNorm::PerHeadPostRope => {
            init += &format!("        self.{qn} = Norm({hd})  # over each head's {hd} dims, shared by the heads\n        self.{kn} = Norm({hd})\n");
        }
        QkNorm::Full => {
            init += &format!("        self.{qn} = Norm({h} * {hd})  # over all heads together\n        self.{kn} = Norm({kv} * {hd})\n");
            fwd += &format!("        q, k = self.{qn}(q), self.{kn}(k)\n");
        }
        QkNorm::Unit => {
            init += &format!("        self.{qn} = Norm({hd})  # each head to length 1, no weight\n        self.{kn} = Norm({hd})\n");
        }
        // One LayerNorm per head (StableLM's `q_layernorm.norms`).
        QkNorm::HeadWeights if crate::naming::qk_norm_per_head(spec.layout) => {
            let eps = spec.norm.eps;
            init += &holders_of(&[qn.clone(), kn.clone()]);
            init += &format!("        self.{qn} = nn.ModuleList(nn.LayerNorm({hd}, eps={eps}, bias=False) for _ in range({h}))  # one per head\n        self.{kn} = nn.ModuleList(nn.LayerNorm({hd}, eps={eps}, bias=False) for _ in range({kv}))\n");
        }
        QkNorm::HeadWeights => {
            init += &format!("        self.{qn} = nn.Module()\n        self.{qn}.weight = nn.Parameter(torch.ones({h}, {hd}))  # each head its own\n        self.{kn} = nn.Module()\n        self.{kn}.weight = nn.Parameter(torch.ones({kv}, {hd}))\n");
        }
        QkNorm::None | QkNorm::L2 => {}
    }
    if let Some(c) = a.clip_qkv {
        fwd += &format!(
            "        q, k, v = q.clamp(-{c}, {c}), k.clamp(-{c}, {c}), v.clamp(-{c}, {c})\n"
        );
    }
    if a.sinks {
        init += &format!(
            "        self.{} = nn.Parameter(torch.zeros({h}))  # one learned sink logit per head\n",
            n.inside(Role::Sinks)
        );
    }
    fwd += &format!("        q = q.view(B, T, {h}, {hd}).transpose(1, 2)  # [B, {h}, T, {hd}]\n");
    if !shares {
        fwd += &format!("        k = k.view(B, T, {kv}, {hd}).transpose(1, 2)  # [B, {kv}, T, {hd}]\n        v = v.view(B, T, {kv}, {vhd}).transpose(1, 2)\n");
    }
    if a.v_norm && !shares {
        fwd += &format!("        v = (v.float() * torch.rsqrt(v.float().pow(2).mean(-1, keepdim=True) + {})).type_as(v)  # each value head RMS-normed, no weight\n", spec.norm.eps);
    }
    if a.v_scale != 1.0 {
        fwd += &format!("        v = v * {}  # the values scaled\n", a.v_scale);
    }
    if a.dynamic_mask.is_some() {
        let (dt, da) = (n.inside(Role::DynDt), n.inside(Role::DynA));
        init += &format!(
            "        self.{dt} = {}  # scores each key from all heads' values\n        self.{da} = nn.Parameter(torch.zeros({kv}))\n",
            linear(spec, &format!("{kv} * {vhd}"), &kv.to_string(), a.qkv_bias)
        );
        fwd += &format!("        delta = torch.exp(self.{da} * F.softplus(self.{dt}(v.transpose(1, 2).reshape(B, T, {kv} * {vhd})))).transpose(1, 2)  # [B, {kv}, T]\n");
    }
    if a.qk_norm == QkNorm::PerHead && shares {
        fwd += &format!("        q = self.{qn}(q)\n");
    } else if a.qk_norm == QkNorm::Unit {
        fwd += &format!(
            "        q, k = self.{qn}(q), self.{kn}(k)  # unit length: a score is a cosine\n"
        );
    } else if a.qk_norm == QkNorm::PerHead {
        fwd += &format!("        q, k = self.{qn}(q), self.{kn}(k)\n");
    } else if a.qk_norm == QkNorm::HeadWeights && crate::naming::qk_norm_per_head(spec.layout) {
        fwd += &format!("        q = torch.cat([norm(q[:, i : i + 1]) for i, norm in enumerate(self.{qn})], dim=1)  # each head through its own LayerNorm\n        k = torch.cat([norm(k[:, i : i + 1]) for i, norm in enumerate(self.{kn})], dim=1)\n");
    } else if a.qk_norm == QkNorm::HeadWeights {
        let eps = spec.norm.eps;
        fwd += &format!("        # LayerNorm over each head's {hd} dims, no shift, each head its own weight\n        q = (F.layer_norm(q.float(), ({hd},), eps={eps}) * self.{qn}.weight[:, None, :].float()).type_as(q)\n        k = (F.layer_norm(k.float(), ({hd},), eps={eps}) * self.{kn}.weight[:, None, :].float()).type_as(k)\n");
    }
    if matches!(spec.position, Position::Rope(_)) && shares {
        fwd += "        if self.use_rope:\n            cos, sin = rope\n            q = apply_rope(q, cos, sin)\n";
    } else if matches!(spec.position, Position::Rope(_)) {
        fwd += "        if self.use_rope:\n            cos, sin = rope\n            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n";
        if a.qk_norm == QkNorm::L2 {
            let eps = spec.norm.eps;
            fwd += &format!("            # weightless RMS normalization of each rotated head\n            q = (q.float() * torch.rsqrt(q.float().pow(2).mean(-1, keepdim=True) + {eps})).type_as(q)\n            k = (k.float() * torch.rsqrt(k.float().pow(2).mean(-1, keepdim=True) + {eps})).type_as(k)\n");
        }
    }
    if a.qk_norm == QkNorm::PerHeadPostRope {
        fwd += &format!("        q, k = self.{qn}(q), self.{kn}(k)  # normed after RoPE\n");
    }
    // Inkling: each query's relative state mixes the bank's distance profiles into its bias.
    if let Some(rl) = a.rel_logits {
        let (rp, bank) = (n.inside(Role::RelProj), n.inside(Role::RelBank));
        let bank = bank.split('.').next().unwrap_or_default().to_string();
        init += &format!(
            "        self.{rp} = {}\n        self.{bank} = RelativeLogits({}, {})\n",
            linear(spec, &d.to_string(), &format!("{h} * {}", rl.d_rel), false),
            rl.d_rel,
            rl.extent
        );
        fwd += &format!(
            "        rel = self.{bank}(self.{rp}(x).view(B, T, {h}, {}).transpose(1, 2), T)  # [B, {h}, T, T]\n",
            rl.d_rel
        );
    }
    if let Some(qs) = a.query_scale {
        let when = if qs.nope_only {
            "        if not self.use_rope:  # queries grow with position in the layers without RoPE\n    "
        } else {
            "        # queries grow with position\n"
        };
        let pos = format!(
            "(torch.arange(T, device=x.device).float() + {}) / {}",
            qs.shift, qs.length
        );
        let factor = match qs.form {
            ScaleForm::Stepped => format!("(1 + {} * torch.log1p(torch.floor({pos})))", qs.beta),
            ScaleForm::Power => format!("torch.exp({} * torch.log1p({pos}))", qs.beta),
            ScaleForm::Floored => format!("(1 + {} * torch.log(({pos}).clamp(min=1.0)))", qs.beta),
        };
        fwd += &format!("{when}        q = q * {factor}[None, None, :, None].to(q.dtype)\n");
        if a.rel_logits.is_some() {
            fwd += &format!(
                "        rel = rel * {factor}[None, None, :, None]  # scaled with the queries\n"
            );
        }
    }
    if let Some(g) = spec.ngpt {
        let sq = n.inside(Role::NgptQueryScale);
        init += &format!(
            "        self.{sq} = nn.Parameter(torch.full(({h} * {hd},), {}))  # the queries' learned scale\n",
            fmt_f(g.init)
        );
        fwd += &format!(
            "        q = q * (self.{sq} * ({hd} ** 0.5 / {})).view({h}, 1, {hd}).square()  # sets how sharp each head attends\n",
            fmt_f(g.init)
        );
    }
    if shares {
        fwd += "        k, v = SHARED_KV[self.span[0]]  # the last layer of this kind's that projects its own\n";
    } else if store {
        fwd += "        SHARED_KV[self.span[0]] = k, v  # for the later layers that share them\n";
    }
    if a.differential {
        let half = kv / 2;
        fwd += &format!("        pair = torch.arange({kv}) % {half}  # K/V head j offers heads j mod {half} and {half} + j mod {half}\n        v = torch.cat([v[:, pair], v[:, {half} + pair]], dim=-1)  # [B, {kv}, T, 2 * {hd}]\n");
    }
    if h != kv {
        let g = h / kv;
        fwd += &format!("        k = k.repeat_interleave({g}, dim=1)  # each K/V head serves {g} query heads\n        v = v.repeat_interleave({g}, dim=1)\n");
    }
    // MiniMax-M3's lightning indexer: each query group attends only in the blocks it chose.
    let keep = a.block_index.map(|bi| {
        let index = n.inside(Role::BlockIndexQ);
        let index = index.split('.').next().unwrap_or("indexer").to_string();
        init += &format!("        self.{index} = BlockIndexer()  # which blocks of keys each query group attends to\n");
        fwd += &format!(
            "        keep = self.{index}(x, rope).repeat_interleave({}, dim=1)  # [B, {h}, T, T]: each query group's blocks\n",
            h / bi.heads
        );
        "keep"
    });
    // Qwen4-Exp's QSA indexer: every head attends only where it keeps.
    let keep = keep.or_else(|| {
        a.qsa.map(|_| {
            let index = n.inside(Role::QsaQk);
            let index = index.split('.').next().unwrap_or("indexer").to_string();
            init += &format!(
                "        self.{index} = QsaIndexer()  # which keys each query attends to\n"
            );
            fwd += &format!("        keep = self.{index}(x, rope)[:, None]  # [B, 1, T, T]\n");
            "keep"
        })
    });
    let vd = if a.differential { 2 * hd } else { vhd };
    fwd += &attend(spec, h, vd, keep);
    if a.differential {
        let p = h / 2;
        for name in ["lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"] {
            init += &format!("        self.{name} = nn.Parameter(torch.zeros({hd}))\n");
        }
        init += "        self.lambda_init = 0.8 - 0.6 * math.exp(-0.3 * layer_idx)\n";
        fwd += &format!("        lam = torch.exp((self.lambda_q1 * self.lambda_k1).sum()) - torch.exp((self.lambda_q2 * self.lambda_k2).sum()) + self.lambda_init\n        d = out.view(B, T, 2, {p}, 2 * {hd})\n        d = d[:, :, 0] - lam * d[:, :, 1]  # the first {p} heads minus λ times the other {p}\n        d = d * torch.rsqrt(d.pow(2).mean(-1, keepdim=True) + {})  # each pair RMS-normed, no weight\n        out = ((1 - self.lambda_init) * d).reshape(B, T, {h} * {hd})\n", spec.norm.eps);
    }
    if let Some(gate) = a.out_gate.filter(|g| g.in_query() || g.before_qkv()) {
        fwd += &format!(
            "        out = out * {}  # each head feature gated, the gate projected with the queries\n",
            if gate.softplus {
                "F.softplus(gate.float()).to(out.dtype)"
            } else {
                "torch.sigmoid(gate)"
            }
        );
    } else if let Some(gate) = a.out_gate {
        let g = n.inside(Role::AttnGate);
        let width = if gate.per_head {
            h.to_string()
        } else {
            format!("{h} * {vhd}")
        };
        init += &format!(
            "        self.{g} = {}  # the output gate\n",
            linear(spec, &d.to_string(), &width, false)
        );
        let (bias_init, mut z) = gate_logits(n, gate, h, vhd);
        init += &bias_init;
        if let Some(ng) = spec.ngpt {
            let sg = n.inside(Role::NgptGateScale);
            init += &format!(
                "        self.{sg} = nn.Parameter(torch.full(({h} * {vhd},), {}))  # the gate's learned scale\n",
                fmt_f(ng.init)
            );
            z = format!(
                "({z} * (self.{sg} * ({d} ** 0.25 / {})).square())",
                fmt_f(ng.init)
            );
        }
        let f = if gate.softplus {
            format!("F.softplus({z}.float()).to(out.dtype)")
        } else {
            format!("torch.sigmoid({z})")
        };
        fwd += &if gate.per_head {
            format!("        out = (out.view(B, T, {h}, {vhd}) * {f}.unsqueeze(-1)).view(B, T, {h} * {vhd})  # each head gated by the input\n")
        } else {
            format!("        out = out * {f}  # each head feature gated by the input\n")
        };
    }
    if a.sub_norm {
        let s = n.inside(Role::AttnSubNorm);
        init += &format!(
            "        self.{s} = Norm({h} * {vhd})  # over the heads, before the output projection\n"
        );
        fwd += &format!("        out = self.{s}(out)\n");
    }
    if a.o_bias_last {
        let bias = n.inside(Role::DenseBias);
        let last = spec.layers.saturating_sub(1);
        init += &format!("        self.{bias} = nn.Parameter(torch.zeros({d})) if layer_idx == {last} else None  # the last layer's own output bias\n");
        fwd += &format!("        y = self.{o}(out)\n        return y if self.{bias} is None else y + self.{bias}  # [B, T, {d}]\n");
    } else {
        fwd += &format!("        return self.{o}(out)  # [B, T, {d}]\n");
    }
    // Tensors one module further down (EXAONE's `attn.attention.q_proj`) get that module first.
    let mut holders: Vec<String> = [Role::Q, Role::Qkv, Role::O]
        .iter()
        .filter_map(|r| Some(n.inside(*r).rsplit_once('.')?.0.to_string()))
        .collect();
    holders.sort();
    holders.dedup();
    let holders: String = holders
        .iter()
        .map(|h| format!("        self.{h} = nn.Module()\n"))
        .collect();
    let init = holders + &init;
    let indexer = a
        .block_index
        .map_or(String::new(), |bi| block_indexer(spec, n, bi) + "\n\n\n")
        + &a.qsa.map_or(String::new(), |q| {
            let names = [Role::QsaQk, Role::QsaQNorm, Role::QsaKNorm].map(|r| n.attr(r));
            super::torch_gated::qsa_class(q, spec.hidden, names) + "\n\n\n"
        });
    indexer
        + fill(
            r#"class ${class}(nn.Module):
    def __init__(self, span=("full", 0), use_rope=True${idx}):
        super().__init__()
        self.span, self.use_rope = span, use_rope
${init}
    def forward(self, x, rope=None):  # x: [B, T, ${d}]
${fwd}"#,
            &[
                ("class", class.to_string()),
                ("init", init),
                ("fwd", fwd),
                ("d", d.to_string()),
                (
                    "idx",
                    if needs_layer_index(spec) {
                        ", layer_idx=0".into()
                    } else {
                        String::new()
                    },
                ),
            ],
        )
        .trim_end()
}

/// ZAYA's compressed convolutional attention as the module `class`, its tensors named as the
/// checkpoint's (`qkv_proj.q_proj` …).
fn cca_attention(spec: &Spec, class: &str, cca: crate::spec::Cca) -> String {
    let a = &spec.attn;
    let (h, kv, hd) = (a.heads, a.kv_heads, a.head_dim);
    let rope = if matches!(spec.position, Position::Rope(_)) {
        "        if self.use_rope:\n            cos, sin = rope\n            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n"
    } else {
        ""
    };
    let repeat = if h != kv {
        format!("        k, v = k.repeat_interleave({g}, dim=1), v.repeat_interleave({g}, dim=1)  # each K/V head serves {g} query heads\n", g = h / kv)
    } else {
        String::new()
    };
    fill(
        r#"class ${class}(nn.Module):
    """ZAYA's compressed convolutional attention: Q and K mixed along time by two causal
    convolutions (${k0} taps per channel, then ${k1} across each head's channels), each with a
    residual path; half the values from the token before; Q and K scaled to length sqrt(${hd})."""

    def __init__(self, span=("full", 0), use_rope=True):
        super().__init__()
        self.span, self.use_rope = span, use_rope
        self.qkv_proj = p = nn.Module()
        p.q_proj = nn.Linear(${d}, ${h} * ${hd}, bias=${bias})
        p.k_proj = nn.Linear(${d}, ${kv} * ${hd}, bias=${bias})
        p.v_proj_current = nn.Linear(${d}, ${half}, bias=${bias})
        p.v_proj_delayed = nn.Linear(${d}, ${half}, bias=${bias})
        p.conv_qk_depthwise = nn.Conv1d(${c}, ${c}, ${k0}, groups=${c})
        p.conv_qk_grouped = nn.Conv1d(${c}, ${c}, ${k1}, groups=${heads})
        self.qk_norm = nn.Module()
        self.qk_norm.temp = nn.Parameter(torch.zeros(${kv}))  # each K/V head's key scale
        self.o_proj = nn.Linear(${h} * ${hd}, ${d}, bias=${bias})

    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
        p = self.qkv_proj
        q, k = p.q_proj(x), p.k_proj(x)
        # the residual paths: each query head's mean with its K/V head's key, and its mean per K/V head
        q_res = (q.view(B, T, ${h}, ${hd}) + k.view(B, T, ${kv}, ${hd}).repeat_interleave(${g}, dim=2)) / 2
        k_res = q_res.view(B, T, ${kv}, ${g}, ${hd}).mean(3)
        qk = F.pad(torch.cat([q, k], dim=-1).transpose(1, 2), (${reach}, 0))  # causal: zeros before the first token
        qk = p.conv_qk_grouped(p.conv_qk_depthwise(qk)).transpose(1, 2)  # [B, T, ${c}]
        q = qk[..., : ${h} * ${hd}].view(B, T, ${h}, ${hd}) + q_res
        k = qk[..., ${h} * ${hd} :].view(B, T, ${kv}, ${hd}) + k_res
        # half of the values from this token, half from the one before (the first reads the projection of zeros)
        delayed = p.v_proj_delayed(x)
        first = p.v_proj_delayed(x.new_zeros(B, 1, ${d}))
        v = torch.cat([p.v_proj_current(x), torch.cat([first, delayed[:, :-1]], dim=1)], dim=-1).view(B, T, ${kv}, ${hd})
        unit = lambda t: t * ${hd} ** 0.5 / t.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(t.dtype).eps)
        q, k = unit(q), unit(k) * self.qk_norm.temp[None, None, :, None]
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
${rope}${repeat}${attend}        return self.o_proj(out)  # [B, T, ${d}]"#,
        &[
            ("class", class.to_string()),
            ("d", spec.hidden.to_string()),
            ("h", h.to_string()),
            ("kv", kv.to_string()),
            ("hd", hd.to_string()),
            ("g", (h / kv).to_string()),
            ("half", (kv * hd / 2).to_string()),
            ("c", ((h + kv) * hd).to_string()),
            ("heads", (h + kv).to_string()),
            ("k0", cca.depthwise.to_string()),
            ("k1", cca.grouped.to_string()),
            ("reach", cca.reach().to_string()),
            ("bias", py_bool(a.qkv_bias)),
            ("rope", rope.into()),
            ("repeat", repeat),
            ("attend", attend(spec, h, a.v_head_dim, None)),
        ],
    )
}

/// MiniMax-M3's lightning indexer, as a module returning the keys each index head's group keeps.
fn block_indexer(spec: &Spec, n: &Names, bi: crate::spec::BlockIndex) -> String {
    fill(
        r#"class BlockIndexer(nn.Module):
    """The lightning indexer: ${ih} heads of ${id} score every earlier key (q · k, unscaled); each
    query keeps its ${local} latest blocks of ${block} keys and the best-scored others, ${top_k}
    blocks in all, for the query heads of its index head's group. Its keys are cached."""

    def __init__(self):
        super().__init__()
        self.${q} = nn.Linear(${d}, ${ih} * ${id}, bias=False)
        self.${k} = nn.Linear(${d}, ${id}, bias=False)
        self.${qn} = Norm(${id})
        self.${kn} = Norm(${id})

    def forward(self, x, rope):  # -> [B, ${ih}, T, T] bool, True at the keys each group keeps
        B, T, _ = x.shape
        cos, sin = rope  # the attention's RoPE, on the first dims of each head
        q = apply_rope(self.${qn}(self.${q}(x).view(B, T, ${ih}, ${id})).transpose(1, 2), cos, sin)
        k = apply_rope(self.${kn}(self.${k}(x)).view(B, 1, T, ${id}), cos, sin)
        scores = (q.float() @ k.float().transpose(-1, -2)).masked_fill(~attention_mask(T, ("full", 0)).to(x.device), float("-inf"))
        blocks = -(-T // ${block})
        scores = F.pad(scores, (0, blocks * ${block} - T), value=float("-inf"))
        best = scores.view(B, ${ih}, T, blocks, ${block}).amax(-1)  # [B, ${ih}, T, blocks]: each block's best score
        latest = torch.arange(T, device=x.device) // ${block}
        for back in range(${local}):  # the query's latest blocks always stay
            best[..., torch.arange(T, device=x.device), (latest - back).clamp(min=0)] = float("inf")
        top = best.topk(min(${top_k}, blocks), dim=-1)
        chosen = torch.zeros_like(best, dtype=torch.bool).scatter(-1, top.indices, top.values > float("-inf"))
        return chosen.repeat_interleave(${block}, dim=-1)[..., :T]"#,
        &[
            ("ih", bi.heads.to_string()),
            ("id", bi.head_dim.to_string()),
            ("block", bi.block.to_string()),
            ("top_k", bi.top_k.to_string()),
            ("local", bi.local.to_string()),
            ("d", spec.hidden.to_string()),
            ("q", n.attr(Role::BlockIndexQ)),
            ("k", n.attr(Role::BlockIndexK)),
            ("qn", n.attr(Role::BlockIndexQNorm)),
            ("kn", n.attr(Role::BlockIndexKNorm)),
        ],
    )
}

/// The attention needs its layer's index: differential attention's λ_init, a bias of the last
/// layer alone, a first layer without its attention norm.
fn needs_layer_index(spec: &Spec) -> bool {
    spec.attn.differential || spec.attn.o_bias_last || spec.skip_first_attn_norm
}

/// Qwen4-Exp's n-gram embeddings' modules, with each PLE layer's shards' rows.
fn ngram_code(spec: &Spec) -> String {
    let p = spec.ngram_ple.as_ref().expect("n-gram embeddings");
    let shards: Vec<(u64, Vec<u64>)> = (p.layers.iter().enumerate())
        .map(|(i, b)| {
            let rows = p.rows(i as u64);
            let (size, count) = p.shards(rows);
            (b, (0..count).map(|s| size.min(rows - s * size)).collect())
        })
        .collect();
    super::torch_gated::ngram_classes(p, spec.hidden, spec.norm.eps, &shards)
}

/// The MoE block is made with its layer's index: ZAYA's router carries state from the layer
/// before; Ling's clips are the layer's own.
fn moe_needs_index(spec: &Spec) -> bool {
    spec.moe
        .as_ref()
        .is_some_and(|m| m.router_mlp.is_some() || m.act_clips.is_some())
}

/// The decoder layer needs its index: for the attention, or to pick its attention's class.
fn layer_needs_index(spec: &Spec) -> bool {
    needs_layer_index(spec)
        || moe_needs_index(spec)
        || !spec.layer_attn.is_empty()
        || !spec.mlp_widths.is_empty()
        || spec.rwkv.is_some()
        || spec.depth_scaled
        || spec.ngram_ple.is_some()
}

/// Latent attention as the module `class`.
fn mla(spec: &Spec, n: &Names, class: &str) -> String {
    let a = &spec.attn;
    let m = a.mla.as_ref().expect("MLA");
    let (d, h, vd) = (spec.hidden, a.heads, a.v_head_dim);
    let (nope, rd, kvl) = (m.qk_nope_head_dim, m.qk_rope_head_dim, m.kv_lora_rank);
    let qk = nope + rd;
    let eps = fmt_f(m.latent_eps);
    let index = n.inside(Role::IndexQ);
    let index = index.split('.').next().unwrap_or("indexer");
    // dots.3 Note's indexer reads the query latent scaled, as its query is.
    let index_in = match m.lora_scales {
        Some((q, _)) => format!("q_latent * {}", fmt_f(q)),
        None => "q_latent".into(),
    };
    let (q_init, q_fwd) = match m.q_lora_rank {
        Some(ql) if m.indexer.is_some() => {
            let (qa, qan, qb) = (n.attr(Role::QA), n.attr(Role::QANorm), n.attr(Role::QB));
            let (make, choose) = if own_indexers(spec).is_some() {
                (
                    format!("        self.{index} = Indexer() if own_indexer else None  # picks the keys each query attends to\n"),
                    format!("        if self.{index} is not None:  # the other layers reuse the last indexer's choice\n            Attention.chosen = self.{index}(x, {index_in}, rope)\n        keep = Attention.chosen  # [B, T, T]\n"),
                )
            } else {
                (
                    format!("        self.{index} = Indexer()  # picks the keys each query attends to\n"),
                    format!("        keep = self.{index}(x, {index_in}, rope)  # [B, T, T]\n"),
                )
            };
            if m.q_gate {
                // A.X-K2: the query and its gate from the normed and the raw latent.
                let vd = a.v_head_dim;
                (
                    format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear(2 * {ql}, {h} * ({qk} + {vd}), bias=False)  # each head's query, then its gate\n{make}", py_bool(m.bias)),
                    format!("        raw = self.{qa}(x)\n        q_latent = self.{qan}(raw)\n{choose}        qg = self.{qb}(torch.cat([q_latent, raw], dim=-1)).view(B, T, {h}, {qk} + {vd})\n        q, gate = qg[..., :{qk}].reshape(B, T, -1), qg[..., {qk}:].reshape(B, T, -1)\n"),
                )
            } else {
                (
                    format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear({ql}, {h} * {qk}, bias=False)\n{make}", py_bool(m.bias)),
                    format!("        q_latent = self.{qan}(self.{qa}(x))\n{choose}        q = self.{qb}(q_latent)\n"),
                )
            }
        }
        Some(ql) => {
            let (qa, qan, qb) = (n.attr(Role::QA), n.attr(Role::QANorm), n.attr(Role::QB));
            (
                format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear({ql}, {h} * {qk}, bias=False)\n", py_bool(m.bias)),
                format!("        q = self.{qb}(self.{qan}(self.{qa}(x)))\n"),
            )
        }
        None => {
            let q = n.attr(Role::Q);
            (
                format!("        self.{q} = nn.Linear({d}, {h} * {qk}, bias=False)\n"),
                format!("        q = self.{q}(x)\n"),
            )
        }
    };
    let (kva, kvan, kvb, o) = (
        n.attr(Role::KvA),
        n.attr(Role::KvANorm),
        n.attr(Role::KvB),
        n.attr(Role::O),
    );
    // LongCat-Flash scales the query and the normed KV latent (so keys and values both).
    let (q_fwd, kv_scale) = match m.lora_scales {
        Some((q, kv)) => (
            q_fwd + &format!("        q = q * {}  # sqrt(hidden / q_lora)\n", fmt_f(q)),
            format!(" * {}", fmt_f(kv)),
        ),
        None => (q_fwd, String::new()),
    };
    let indexer = match (&m.indexer, m.q_lora_rank) {
        (Some(ix), Some(ql)) => indexer(ix, ql, d, rd, n) + "\n\n\n",
        _ => String::new(),
    };
    let keep = m.indexer.as_ref().map(|_| "keep[:, None]");
    indexer
        + &fill(
            r#"class ${class}(nn.Module):
    """Multi-head latent attention: the cache holds c_kv (${kvl}) and k_pe (${rd}) per token."""

    def __init__(self, span=("full", 0), use_rope=True${own_param}):
        super().__init__()
        self.span, self.use_rope = span, use_rope
${q_init}        self.${kva} = nn.Linear(${d}, ${kvl} + ${rd}, bias=${bias})  # latent + one shared ${shared} key
        self.${kvan} = Norm(${kvl}, eps=${eps})
${k_pe_norm_init}        self.${kvb} = nn.Linear(${kvl}, ${h} * (${nope} + ${vd}), bias=False)
        self.${o} = nn.Linear(${h} * ${vd}, ${d}, bias=${o_bias})
${gate_init}
    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
${q_fwd}        q = q.view(B, T, ${h}, ${qk}).transpose(1, 2)  # [B, ${h}, T, ${qk}]
        q_nope, q_pe = q.split([${nope}, ${rd}], dim=-1)
        c_kv, k_pe = self.${kva}(x).split([${kvl}, ${rd}], dim=-1)
        kv = self.${kvb}(self.${kvan}(c_kv)${kv_scale}).view(B, T, ${h}, ${nope} + ${vd}).transpose(1, 2)
        k_nope, v = kv.split([${nope}, ${vd}], dim=-1)
${position}        q = torch.cat([q_nope, q_pe], dim=-1)
        k = torch.cat([k_nope, k_pe], dim=-1)
${attend}${gate}        return self.${o}(out)  # [B, T, ${d}]"#,
            &[
                ("class", class.to_string()),
                ("kvl", kvl.to_string()),
                ("rd", rd.to_string()),
                ("eps", eps.clone()),
                (
                    "k_pe_norm_init",
                    if m.rope_key_norm {
                        format!(
                            "        self.{} = Norm({rd})  # the shared rotary key's own norm\n",
                            n.attr(Role::KPeNorm)
                        )
                    } else {
                        String::new()
                    },
                ),
                ("q_init", q_init),
                ("q_fwd", q_fwd),
                ("kva", kva),
                ("kvan", kvan),
                ("kvb", kvb),
                ("kv_scale", kv_scale),
                ("o", o),
                ("d", d.to_string()),
                ("h", h.to_string()),
                ("nope", nope.to_string()),
                ("vd", vd.to_string()),
                ("qk", qk.to_string()),
                ("attend", attend(spec, h, vd, keep)),
                ("gate_init", {
                    let sinks = if a.sinks {
                        format!(
                            "        self.{} = nn.Parameter(torch.zeros({h}))  # one learned sink logit per head\n",
                            n.inside(Role::Sinks)
                        )
                    } else {
                        String::new()
                    };
                    sinks
                        + &match a.out_gate {
                            // A.X-K2's gate comes with the query.
                            Some(g) if g.in_query() => String::new(),
                            Some(g) => format!(
                                "        self.{} = {}  # the output gate\n{}",
                                n.inside(Role::AttnGate),
                                linear(
                                    spec,
                                    &d.to_string(),
                                    &if g.per_head {
                                        h.to_string()
                                    } else {
                                        format!("{h} * {vd}")
                                    },
                                    false
                                ),
                                gate_logits(n, g, h, vd).0
                            ),
                            None => String::new(),
                        }
                }),
                ("gate", {
                    match a.out_gate {
                        Some(g) if g.in_query() => {
                            "        out = out * torch.sigmoid(gate)  # gated by the query projection's gate rows\n".to_string()
                        }
                        Some(g) => {
                            let z = gate_logits(n, g, h, vd).1;
                            let f = if g.softplus {
                                format!("F.softplus({z}.float()).to(out.dtype)")
                            } else {
                                format!("torch.sigmoid({z})")
                            };
                            if g.per_head {
                                format!("        out = (out.view(B, T, {h}, {vd}) * {f}.unsqueeze(-1)).view(B, T, {h} * {vd})  # each head gated by the input\n")
                            } else {
                                format!("        out = out * {f}  # gated by the input\n")
                            }
                        }
                        None => String::new(),
                    }
                }),
                (
                    "position",
                    if matches!(spec.position, Position::Rope(_)) {
                        let normed = if m.rope_key_norm {
                            format!(
                                "        k_pe = self.{}(k_pe)  # normed, then rotated\n",
                                n.attr(Role::KPeNorm)
                            )
                        } else {
                            String::new()
                        };
                        format!("{normed}        cos, sin = rope\n        q_pe = apply_rope(q_pe, cos, sin)\n        k_pe = apply_rope(k_pe.view(B, 1, T, {rd}), cos, sin).expand(B, {h}, T, {rd})\n")
                    } else {
                        format!("        k_pe = k_pe.view(B, 1, T, {rd}).expand(B, {h}, T, {rd})  # no positions: the shared part as it is\n")
                    },
                ),
                (
                    "shared",
                    if matches!(spec.position, Position::Rope(_)) {
                        "rotary"
                    } else {
                        "position-free"
                    }
                    .into(),
                ),
                (
                    "own_param",
                    if own_indexers(spec).is_some() {
                        ", own_indexer=True".into()
                    } else {
                        String::new()
                    },
                ),
                ("bias", py_bool(m.bias)),
                ("o_bias", py_bool(a.o_bias)),
            ],
        )
}

/// ZAYA's router: an MLP over the FFN input that carries its state from layer to layer.
fn router_mlp(spec: &Spec, width: u64) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    fill(
        r#"ROUTER = {}  # the router state each layer carries on to the next, within a pass


class RouterMLP(nn.Module):
    """ZAYA's router: the FFN input down to ${r} features, plus (after the first layer) the last
    layer's state scaled, carried on; normed, two GELU layers, logits over ${e} experts and a
    class that computes nothing."""

    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.down_proj = nn.Linear(${d}, ${r})
        if layer_idx > 0:  # the first layer has no state to read
            self.router_states_scale = nn.Parameter(torch.ones(${r}))
        self.register_buffer("balancing_biases", torch.zeros(${classes}))
        self.router_mlp = nn.Module()
        self.router_mlp.norm = Norm(${r})
        self.router_mlp.fc1 = nn.Linear(${r}, ${r})
        self.router_mlp.fc2 = nn.Linear(${r}, ${r})
        self.router_mlp.out_proj = nn.Linear(${r}, ${classes}, bias=False)

    def forward(self, x):  # [tokens, ${d}] -> [tokens, ${classes}]
        r = self.down_proj(x)
        if self.layer_idx > 0 and "state" in ROUTER:
            r = r + ROUTER["state"] * self.router_states_scale
        ROUTER["state"] = r
        mlp = self.router_mlp
        return mlp.out_proj(F.gelu(mlp.fc2(F.gelu(mlp.fc1(mlp.norm(r))))))"#,
        &[
            ("r", width.to_string()),
            ("d", spec.hidden.to_string()),
            ("e", m.experts.to_string()),
            ("classes", (m.experts + 1).to_string()),
        ],
    )
}

/// The shared expert's attribute on the layer, where it sits beside the MoE module rather than
/// inside it (GraniteMoE-Shared's `shared_mlp`).
fn shared_beside(spec: &Spec, n: &Names) -> Option<String> {
    let m = spec.moe.as_ref()?;
    (m.shared_experts > 0 && n.sublayer(Role::SharedDown) != n.sublayer(Role::Router))
        .then(|| n.sublayer(Role::SharedDown))
}

/// The layers that run an indexer of their own, where only some do (GLM-5's shared layers).
fn own_indexers(spec: &Spec) -> Option<&crate::layers::LayerSet> {
    let ix = spec.attn.mla.as_ref()?.indexer.as_ref()?;
    (!spec.indexer_reusers().is_empty()).then_some(&ix.own)
}

/// DeepSeek sparse attention's indexer, as a module returning the keys each query keeps.
fn indexer(ix: &crate::spec::Indexer, ql: u64, d: u64, rd: u64, n: &Names) -> String {
    let attr = |r| n.attr(r);
    fill(
        r#"class Indexer(nn.Module):
    """DeepSeek sparse attention: ${ih} light heads score every earlier token, and each query keeps
    its ${top_k} best. Its keys (${id} per token) are cached beside the latent."""

    def __init__(self):
        super().__init__()
        self.${wq} = nn.Linear(${ql}, ${ih} * ${id}, bias=False)
        self.${wk} = nn.Linear(${d}, ${id}, bias=False)
        self.${k_norm} = nn.LayerNorm(${id}, eps=${key_eps})
        self.${weights} = nn.Linear(${d}, ${ih}, bias=False)

    def forward(self, x, q_latent, rope):  # -> [B, T, T] bool, True at the keys each query keeps
        B, T, _ = x.shape
        cos, sin = rope

${rotate}
        q = rotate(self.${wq}(q_latent).view(B, T, ${ih}, ${id}).transpose(1, 2))  # [B, ${ih}, T, ${id}]
        k = rotate(self.${k_norm}(self.${wk}(x)))  # [B, T, ${id}], one key per token
        dots = F.relu(q @ k[:, None].transpose(-1, -2) / math.sqrt(${id}))  # [B, ${ih}, T, T]
        w = self.${weights}(x) / math.sqrt(${ih})  # [B, T, ${ih}]
        scores = torch.einsum("bth,bhts->bts", w, dots)
        scores = scores.masked_fill(~attention_mask(T, ("full", 0)).to(x.device), float("-inf"))
        top = scores.topk(min(${top_k}, T), dim=-1).indices
        return torch.zeros_like(scores, dtype=torch.bool).scatter(-1, top, True)"#,
        // The rotation first: it holds placeholders of its own.
        &[
            (
                "rotate",
                if ix.rope_last && ix.interleaved {
                    "        def rotate(t):  # RoPE on the last ${rd} dims, interleaved pairs
            rest, rot = t[..., :-${rd}], t[..., -${rd}:]
            a, b = rot[..., 0::2], rot[..., 1::2]
            c, s = cos[..., :${half}], sin[..., :${half}]
            rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
            return torch.cat((rest, rot), dim=-1)
"
                    .to_string()
                } else if ix.rope_last {
                    "        def rotate(t):  # rotate-half on the last ${rd} dims
            rest, rot = t[..., :-${rd}], t[..., -${rd}:]
            half = torch.cat((-rot[..., ${half}:], rot[..., :${half}]), dim=-1)
            return torch.cat((rest, rot * cos + half * sin), dim=-1)
"
                    .to_string()
                } else if ix.interleaved {
                    "        def rotate(t):  # RoPE on the first ${rd} dims, interleaved pairs
            rot, rest = t[..., :${rd}], t[..., ${rd}:]
            a, b = rot[..., 0::2], rot[..., 1::2]
            c, s = cos[..., :${half}], sin[..., :${half}]
            rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
            return torch.cat((rot, rest), dim=-1)
"
                    .to_string()
                } else {
                    "        def rotate(t):  # rotate-half on the first ${rd} dims (the attention itself pairs differently)
            rot, rest = t[..., :${rd}], t[..., ${rd}:]
            half = torch.cat((-rot[..., ${half}:], rot[..., :${half}]), dim=-1)
            return torch.cat((rot * cos + half * sin, rest), dim=-1)
".to_string()
                },
            ),
            ("ih", ix.heads.to_string()),
            ("key_eps", fmt_f(ix.key_eps)),
            ("id", ix.head_dim.to_string()),
            ("top_k", ix.top_k.to_string()),
            ("ql", ql.to_string()),
            ("d", d.to_string()),
            ("rd", rd.to_string()),
            ("half", (rd / 2).to_string()),
            ("wq", attr(Role::IndexQ)),
            ("wk", attr(Role::IndexK)),
            ("k_norm", attr(Role::IndexKNorm)),
            ("weights", attr(Role::IndexWeights)),
        ],
    )
}

// ---- feed-forward -------------------------------------------------------------------------------

pub(super) fn act_expr(act: Act, x: &str) -> String {
    match act {
        Act::Silu => format!("F.silu({x})"),
        Act::Gelu => format!("F.gelu({x})"),
        Act::GeluTanh => format!("F.gelu({x}, approximate=\"tanh\")"),
        Act::QuickGelu => format!("({x}) * torch.sigmoid(1.702 * ({x}))"),
        Act::Relu => format!("F.relu({x})"),
        Act::Relu2 => format!("F.relu({x}).square()"),
        Act::Xielu => format!("self.act_fn({x})"),
    }
}

/// xIELU as a module holding its learned parameters and stored constants (Apertus).
const XIELU: &str = r#"class XIELU(nn.Module):
    """xIELU: alpha_p x^2 + beta x above zero, alpha_n (expm1(min(x, eps)) - x) + beta x below,
    with alpha_p = softplus(stored alpha_p) and alpha_n = beta + softplus(stored alpha_n)."""

    def __init__(self):
        super().__init__()
        self.alpha_p = nn.Parameter(torch.zeros(1))
        self.alpha_n = nn.Parameter(torch.zeros(1))
        self.register_buffer("beta", torch.tensor(0.5))
        self.register_buffer("eps", torch.tensor(-1e-6))

    def forward(self, x):
        alpha_p = F.softplus(self.alpha_p)
        alpha_n = self.beta + F.softplus(self.alpha_n)
        below = (torch.expm1(torch.min(x, self.eps)) - x) * alpha_n + self.beta * x
        return torch.where(x > 0, alpha_p * x * x + self.beta * x, below)"#;

#[derive(Clone, Copy, PartialEq)]
enum Ffn {
    Dense,
    Expert,
    Shared,
}

/// A two- or three-matrix MLP: the dense FFN, one routed expert, or the shared expert(s).
/// The dense MLP's class, and a class for each width some layers have of their own (Gemma 4's
/// double-wide MLPs) with the layers that use it.
fn mlp_classes(spec: &Spec, n: &Names) -> String {
    let mut out = vec![mlp(spec, n, "MLP", Ffn::Dense)];
    for (i, (set, width)) in spec.mlp_widths.iter().enumerate() {
        let mut own = spec.clone();
        own.mlp.intermediate = *width;
        out.push(mlp(&own, n, &format!("MLP{}", i + 2), Ffn::Dense));
        out.push(format!(
            "# The layers whose MLP is MLP{}, {width} wide.\nMLP{}_LAYERS = {{{}}}",
            i + 2,
            i + 2,
            set.iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.join("\n\n\n")
}

fn mlp(spec: &Spec, n: &Names, class: &str, which: Ffn) -> String {
    let d = spec.hidden;
    let moe = spec.moe.as_ref();
    let (f, bias, roles) = match which {
        Ffn::Dense => (
            spec.mlp.intermediate,
            spec.mlp.bias,
            [Role::Gate, Role::Up, Role::Down, Role::GateUp],
        ),
        Ffn::Expert => {
            let m = moe.expect("MoE");
            (
                m.expert_intermediate,
                m.expert_bias,
                [
                    Role::ExpertGate,
                    Role::ExpertUp,
                    Role::ExpertDown,
                    Role::ExpertGateUp,
                ],
            )
        }
        Ffn::Shared => {
            let m = moe.expect("MoE");
            (
                m.shared_intermediate,
                m.shared_bias,
                [
                    Role::SharedGate,
                    Role::SharedUp,
                    Role::SharedDown,
                    Role::SharedGateUp,
                ],
            )
        }
    };
    let [mut gate, mut up, mut down, gate_up] = roles.map(|r| n.attr(r));
    // Up and down under sublayers of their own (BERT's `intermediate.dense`, `output.dense`):
    // the layer is the MLP, holding both by their paths.
    let mut holders = String::new();
    // A gated MLP a level further down than its sublayer (CPM-Ant's `ffn.w_in.w_0` and
    // `ffn.w_out` inside the layer's `ffn`): the class holds the projections by those paths.
    // (LongCat-Flash's `mlps.{s}` is a list of MLPs, each holding its own by name.)
    let inner = n.inside(Role::Down);
    let nested = which == Ffn::Dense
        && spec.mlp.gated
        && !spec.mlp.fused_gate_up
        && spec.mlp.clamp.is_none()
        && inner.contains('.')
        && !inner.contains('{');
    if nested {
        [gate, up, down] = [Role::Gate, Role::Up, Role::Down].map(|r| n.inside(r));
        holders = holders_of(&[gate.clone(), up.clone(), down.clone()]);
    }
    if which == Ffn::Dense && split_mlp(spec, n) {
        (up, down) = (n.path(Role::Up), n.path(Role::Down));
        for p in [&up, &down] {
            if let Some((h, _)) = p.split_once('.') {
                holders += &format!("self.{h} = nn.Module()\n        ");
            }
        }
    }
    let act = spec.mlp.act;
    let lin = |i: &str, o: &str| linear(spec, i, o, bias);
    // BitNet's norm over the activation, before the down projection.
    let sub = (which == Ffn::Dense && spec.mlp.sub_norm).then(|| n.attr(Role::FfnSubNorm));
    let sub_init = sub.as_ref().map_or(String::new(), |s| {
        format!("\n        self.{s} = Norm({f})  # over the activation, before the down projection")
    });
    let normed = |e: String| match &sub {
        Some(s) => format!("self.{s}({e})"),
        None => e,
    };
    // A checkpoint naming the projections by position (CTRL's `ffn.0`, `ffn.2`) holds an
    // nn.Sequential: up, the activation, down.
    if !spec.mlp.gated && up == "0" && down == "2" {
        return fill(
            r#"class ${class}(nn.Sequential):
    """Up, the activation, down: modules 0, 1 and 2, as the checkpoint numbers them."""

    def __init__(self):
        super().__init__(${up_l}, Activation(), ${down_l})


class Activation(nn.Module):
    def forward(self, x):
        return ${act}"#,
            &[
                ("class", class.into()),
                ("up_l", lin(&d.to_string(), &f.to_string())),
                ("down_l", lin(&f.to_string(), &d.to_string())),
                ("act", act_expr(act, "x")),
            ],
        );
    }
    if !spec.mlp.gated {
        let (pre, act_init) = if act == Act::Xielu {
            (
                format!("{XIELU}\n\n\n"),
                "\n        self.act_fn = XIELU()".to_string(),
            )
        } else {
            (String::new(), String::new())
        };
        return pre
            + &fill(
                r#"class ${class}(nn.Module):
    def __init__(self):
        super().__init__()
        ${holders}self.${up} = ${up_l}
        self.${down} = ${down_l}${act_init}${sub_init}

    def forward(self, x):  # [B, T, ${d}]
        return self.${down}(${act})"#,
                &[
                    ("class", class.into()),
                    ("holders", holders),
                    ("up", up.clone()),
                    ("down", down.clone()),
                    ("up_l", lin(&d.to_string(), &f.to_string())),
                    ("down_l", lin(&f.to_string(), &d.to_string())),
                    ("act_init", act_init),
                    ("sub_init", sub_init),
                    ("d", d.to_string()),
                    ("act", normed(act_expr(act, &format!("self.{up}(x)")))),
                ],
            );
    }
    // Ling's experts: the layer's clip after the activation, given by the MoE block.
    if which != Ffn::Dense && moe.is_some_and(|m| m.act_clips.is_some()) {
        return fill(
            r#"class ${class}(nn.Module):
    def __init__(self):
        super().__init__()
        self.${gate} = ${lin}
        self.${up} = ${lin}
        self.${down} = ${down_l}

    def forward(self, x, limit):  # [B, T, ${d}]; limit: the layer's clip (0: none)
        gate, up = ${act}, self.${up}(x)
        if limit:
            gate, up = gate.clamp(max=limit), up.clamp(-limit, limit)  # after the activation
        return self.${down}(gate * up)"#,
            &[
                ("class", class.into()),
                ("gate", gate.clone()),
                ("up", up.clone()),
                ("down", down.clone()),
                ("lin", lin(&d.to_string(), &f.to_string())),
                ("down_l", lin(&f.to_string(), &d.to_string())),
                ("d", d.to_string()),
                ("act", act_expr(act, &format!("self.{gate}(x)"))),
            ],
        );
    }
    let fused = match which {
        Ffn::Dense => spec.mlp.fused_gate_up,
        Ffn::Shared => moe.is_some_and(|m| m.shared_fused),
        Ffn::Expert => false,
    };
    // MiniMax-M3's dense MLP and shared experts: gpt-oss's clamped SwiGLU.
    if let Some(l) = spec.mlp.clamp.filter(|_| which != Ffn::Expert) {
        let (init, split) = if fused {
            (
                format!(
                    "        self.{gate_up} = {}  # gate and up stacked\n",
                    lin(&d.to_string(), &format!("2 * {f}"))
                ),
                format!("        gate, up = self.{gate_up}(x).chunk(2, dim=-1)\n"),
            )
        } else {
            (
                format!(
                    "        self.{gate} = {}\n        self.{up} = {}\n",
                    lin(&d.to_string(), &f.to_string()),
                    lin(&d.to_string(), &f.to_string())
                ),
                format!("        gate, up = self.{gate}(x), self.{up}(x)\n"),
            )
        };
        return fill(
            r#"class ${class}(nn.Module):
    def __init__(self):
        super().__init__()
${init}        self.${down} = ${down_l}${sub_init}

    def forward(self, x):  # [B, T, ${d}]
${split}        gate, up = gate.clamp(max=${l}), up.clamp(-${l}, ${l})
        return self.${down}(${h})  # clamped SwiGLU"#,
            &[
                ("class", class.into()),
                ("init", init),
                ("split", split),
                ("l", fmt_f(l)),
                ("down", down),
                ("down_l", lin(&f.to_string(), &d.to_string())),
                ("d", d.to_string()),
                ("sub_init", sub_init),
                (
                    "h",
                    normed("(up + 1) * gate * torch.sigmoid(1.702 * gate)".into()),
                ),
            ],
        );
    }
    if fused {
        return fill(
            r#"class ${class}(nn.Module):
    def __init__(self):
        super().__init__()
        self.${gate_up} = ${gu_l}  # gate and up stacked
        self.${down} = ${down_l}${sub_init}

    def forward(self, x):  # [B, T, ${d}]
        gate, up = self.${gate_up}(x).chunk(2, dim=-1)
        return self.${down}(${h})"#,
            &[
                ("class", class.into()),
                ("gate_up", gate_up),
                ("down", down),
                ("gu_l", lin(&d.to_string(), &format!("2 * {f}"))),
                ("down_l", lin(&f.to_string(), &d.to_string())),
                ("d", d.to_string()),
                ("sub_init", sub_init),
                ("h", normed(format!("{} * up", act_expr(act, "gate")))),
            ],
        );
    }
    fill(
        r#"class ${class}(nn.Module):
    def __init__(self):
        super().__init__()
${holders}        self.${gate} = ${gate_l}
        self.${up} = ${up_l}
        self.${down} = ${down_l}${sub_init}

    def forward(self, x):  # [B, T, ${d}]
        return ${out}"#,
        &[
            ("class", class.into()),
            ("holders", holders),
            ("gate_l", lin(&d.to_string(), &f.to_string())),
            ("up_l", lin(&d.to_string(), &f.to_string())),
            ("down_l", lin(&f.to_string(), &d.to_string())),
            ("out", {
                // Falcon-H1's μP multipliers: the gate before its activation, the output.
                let (mut gm, dm) = match spec.mup {
                    Some(m) if which == Ffn::Dense => (
                        format!(" * {}", fmt_f(m.mlp_gate)),
                        format!(" * {}", fmt_f(m.mlp_down)),
                    ),
                    _ => (String::new(), String::new()),
                };
                // nGPT's learned scales on the gate and up (Dory).
                let mut um = String::new();
                if spec.ngpt.is_some() && which == Ffn::Dense {
                    let uv = format!("{d} ** 0.5");
                    gm = format!(" * (self.{} * {uv})", n.attr(Role::NgptGateUvScale));
                    um = format!(" * (self.{} * {uv})", n.attr(Role::NgptUpUvScale));
                }
                let h = normed(format!(
                    "{} * self.{up}(x){um}",
                    act_expr(act, &format!("self.{gate}(x){gm}"))
                ));
                if spec.mlp.scalar && which == Ffn::Dense {
                    format!("self.{down}({h}) * self.{}", n.attr(Role::MlpScalar))
                } else {
                    format!("self.{down}({h}){dm}")
                }
            }),
            ("sub_init", match spec.ngpt.filter(|_| which == Ffn::Dense) {
                _ if spec.mlp.scalar && which == Ffn::Dense => format!(
                    "{sub_init}\n        self.{} = nn.Parameter(torch.ones(1))  # a learned scalar on the output",
                    n.attr(Role::MlpScalar)
                ),
                Some(_) => format!(
                    "{sub_init}\n        self.{} = nn.Parameter(torch.ones({f}))  # learned scales on the gate and up\n        self.{} = nn.Parameter(torch.ones({f}))",
                    n.attr(Role::NgptGateUvScale),
                    n.attr(Role::NgptUpUvScale)
                ),
                None => sub_init,
            }),
            ("gate", gate),
            ("up", up),
            ("down", down),
            ("d", d.to_string()),
        ],
    )
}

/// The routed experts stored one tensor per projection for all of them ([E, in, out]).
/// Every expert in one tensor per projection, experts first, gate and up fused; `out_in`:
/// each expert stored [out, in]; `interleaved`: gate and up alternate column by column.
fn stacked_experts(spec: &Spec, n: &Names, out_in: bool, interleaved: bool) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (d, e, f) = (spec.hidden, m.experts, m.expert_intermediate);
    let gu = n.attr(Role::ExpertGateUp);
    let down = n.attr(Role::ExpertDown);
    // GraniteMoE keeps each stacked tensor as the `weight` of a module of that name.
    let (holders, gu, down) = if names(spec.layout, Role::ExpertGateUp, false)
        .0
        .ends_with(".weight")
    {
        (
            format!("        self.{gu}, self.{down} = nn.Module(), nn.Module()\n"),
            format!("{gu}.weight"),
            format!("{down}.weight"),
        )
    } else {
        (String::new(), gu, down)
    };
    let (mut init, t) = if out_in {
        (format!(
            "        self.{gu} = nn.Parameter(torch.empty({e}, 2 * {f}, {d}))  # every expert's gate and up, [out, in]\n        self.{down} = nn.Parameter(torch.empty({e}, {d}, {f}))\n"
        ), ".T")
    } else {
        (format!(
            "        self.{gu} = nn.Parameter(torch.empty({e}, {d}, 2 * {f}))  # every expert's gate and up, [in, out]\n        self.{down} = nn.Parameter(torch.empty({e}, {f}, {d}))\n"
        ), "")
    };
    init = holders + &init;
    let mut gate_up = format!("        gate_up = x @ self.{gu}[e]{t}\n");
    let mut out = format!("        return h @ self.{down}[e]{t}");
    if m.expert_bias {
        init += &format!("        self.{gu}_bias = nn.Parameter(torch.zeros({e}, 2 * {f}))\n        self.{down}_bias = nn.Parameter(torch.zeros({e}, {d}))\n");
        gate_up = format!("        gate_up = x @ self.{gu}[e] + self.{gu}_bias[e]\n");
        out += &format!(" + self.{down}_bias[e]");
    }
    let split = if interleaved {
        "        gate, up = gate_up[..., 0::2], gate_up[..., 1::2]  # gate and up alternate column by column\n"
    } else {
        "        gate, up = gate_up.chunk(2, dim=-1)\n"
    };
    let h = match m.swiglu_limit {
        Some(l) if m.swiglu_plain => format!(
            "        gate = gate.clamp(max={l})\n        up = up.clamp(-{l}, {l})\n        h = {} * up  # of the clamped inputs\n",
            act_expr(spec.mlp.act, "gate")
        ),
        Some(l) => format!("        gate = gate.clamp(max={l})\n        up = up.clamp(-{l}, {l})\n        h = (up + 1) * gate * torch.sigmoid(1.702 * gate)  # clamped SwiGLU\n"),
        None => format!("        h = {} * up\n", act_expr(spec.mlp.act, "gate")),
    };
    fill(
        r#"class Experts(nn.Module):
    """All ${e} routed experts, each projection stored as one tensor."""

    def __init__(self):
        super().__init__()
${init}
    def forward(self, x, e):  # x: [tokens, ${d}] -> [tokens, ${d}], expert e
${gate_up}${split}${h}${out}"#,
        &[
            ("e", e.to_string()),
            ("init", init),
            ("d", d.to_string()),
            ("gate_up", gate_up),
            ("split", split.into()),
            ("h", h),
            ("out", out),
        ],
    )
}

/// Every expert's rows in one 2-D tensor per projection (DBRX), held where the checkpoint has
/// them (`experts.mlp.w1`).
fn flat_experts(spec: &Spec, n: &Names) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (d, e, f) = (spec.hidden, m.experts, m.expert_intermediate);
    let path = |role| {
        let p = n.inside(role);
        p.split_once('.')
            .map_or(p.clone(), |(_, rest)| rest.to_string())
    };
    let (gate, up, down) = (
        path(Role::ExpertGate),
        path(Role::ExpertUp),
        path(Role::ExpertDown),
    );
    let holders = holders_of(&[gate.clone(), up.clone(), down.clone()]);
    fill(
        r#"class Experts(nn.Module):
    """All ${e} routed experts, each projection one tensor of their rows, expert after expert."""

    def __init__(self):
        super().__init__()
${holders}        self.${gate} = nn.Parameter(torch.empty(${e} * ${f}, ${d}))  # gate, [out, in] per expert
        self.${up} = nn.Parameter(torch.empty(${e} * ${f}, ${d}))  # up, [out, in]
        self.${down} = nn.Parameter(torch.empty(${e} * ${f}, ${d}))  # down, [in, out]

    def forward(self, x, e):  # x: [tokens, ${d}] -> [tokens, ${d}], expert e
        rows = slice(e * ${f}, (e + 1) * ${f})  # expert e's rows
        h = ${act} * (x @ self.${up}[rows].T)
        return h @ self.${down}[rows]"#,
        &[
            ("e", e.to_string()),
            ("f", f.to_string()),
            ("d", d.to_string()),
            ("holders", holders),
            ("gate", gate.clone()),
            ("up", up),
            ("down", down),
            (
                "act",
                act_expr(spec.mlp.act, &format!("(x @ self.{gate}[rows].T)")),
            ),
        ],
    )
}

fn moe_classes(spec: &Spec, n: &Names) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let mut out = Vec::new();
    if let Some(c) = &m.act_clips {
        let pairs: Vec<String> = (c.routed.iter().zip(&c.shared))
            .map(|(r, s)| format!("({}, {})", fmt_f(*r), fmt_f(*s)))
            .collect();
        out.push(format!(
            "# Per layer: the clips after the activation, act(gate) <= L and |up| <= L, of the routed\n# and the shared experts (0: none).\nCLIPS = [{}]",
            pairs.join(", ")
        ));
    }
    match (m.storage, m.swiglu_limit) {
        (
            ExpertStorage::Stacked {
                out_in,
                interleaved,
            },
            _,
        ) => out.push(stacked_experts(spec, n, out_in, interleaved)),
        (ExpertStorage::Flat, _) => out.push(flat_experts(spec, n)),
        (ExpertStorage::PerExpert, Some(l)) => {
            out.push(format!("# experts use the clamped SwiGLU (limit {l})"));
            out.push(mlp(spec, n, "ExpertMLP", Ffn::Expert));
        }
        (ExpertStorage::PerExpert, None) => out.push(mlp(spec, n, "ExpertMLP", Ffn::Expert)),
    }
    if m.scoring == Scoring::SigmoidSink {
        out.push(sink_moe(spec));
        return out.join("\n\n\n");
    }
    if m.shared_experts > 0 {
        out.push(mlp(spec, n, "SharedMLP", Ffn::Shared));
    }
    if m.router_norm {
        // Gemma 4: the router and the experts sit on the layer itself, beside its MLP.
        out.push(scaled_router(spec, n));
        out.push(experts_beside(spec));
        return out.join("\n\n\n");
    }
    out.push(router(spec, n));
    out.push(moe(spec, n));
    out.join("\n\n\n")
}

/// Inkling's router, shared experts and MoE block: the router scores the routed and the shared
/// experts, the chosen and the shared are weighted by their sigmoids normalized together.
fn sink_moe(spec: &Spec) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (d, e, k, s, f) = (
        spec.hidden,
        m.experts,
        m.top_k,
        m.shared_experts,
        m.shared_intermediate,
    );
    fill(
        r#"class Router(nn.Module):
    """Scores each token against the ${e} routed experts and the ${s} shared ones; the correction bias only steers the choice."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(${e} + ${s}, ${d}))
        self.global_scale = nn.Parameter(torch.ones(1))  # a learned scalar on every weight
        self.register_buffer("e_score_correction_bias", torch.zeros(${e}))


class SharedExperts(nn.Module):
    """${s} shared experts, each a gated MLP of width ${f}, their projections stacked."""

    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Parameter(torch.empty(${s}, ${f}, ${d}))
        self.up_proj = nn.Parameter(torch.empty(${s}, ${f}, ${d}))
        self.down_proj = nn.Parameter(torch.empty(${s}, ${d}, ${f}))

    def forward(self, x, weights):  # x: [tokens, ${d}], weights: [tokens, ${s}]
        out = torch.zeros_like(x)
        for j in range(${s}):
            h = ${act} * (x @ self.up_proj[j].T)
            out = out + weights[:, j, None].to(x.dtype) * (h @ self.down_proj[j].T)
        return out


class MoE(nn.Module):
    """${e} routed experts, ${k} active per token, plus ${s} shared, all weighted by one router."""

    def __init__(self):
        super().__init__()
        self.gate = Router()
        self.experts = Experts()
        self.shared_experts = SharedExperts()

    def forward(self, x):  # [B, T, ${d}]
        shape = x.shape
        x = x.reshape(-1, ${d})  # one row per token
        probs = F.linear(x.float(), self.gate.weight.float()).sigmoid()  # [tokens, ${e} + ${s}]
        idx = (probs[:, :${e}] + self.gate.e_score_correction_bias).topk(${k}, dim=-1).indices
        weights = torch.cat([probs[:, :${e}].gather(1, idx), probs[:, ${e}:]], 1)  # the chosen, then the shared
        weights = weights / weights.sum(-1, keepdim=True) * ${scale} * self.gate.global_scale
        out = torch.zeros_like(x)
        for slot in range(${k}):
            for e in range(${e}):
                rows = idx[:, slot] == e
                if not rows.any():
                    continue
                out[rows] += weights[rows, slot, None].to(x.dtype) * self.experts(x[rows], e)
        out = out + self.shared_experts(x, weights[:, ${k}:])
        return out.reshape(shape)"#,
        &[
            ("e", e.to_string()),
            ("k", k.to_string()),
            ("s", s.to_string()),
            ("f", f.to_string()),
            ("d", d.to_string()),
            ("scale", fmt_f(m.routed_scaling)),
            ("act", act_expr(spec.mlp.act, "(x @ self.gate_proj[j].T)")),
        ],
    )
}

/// Gemma 4's router: its input RMS-normed without a weight, scaled by a vector and 1/√hidden; a
/// softmax's top k, renormalized, each times its expert's own scale.
fn scaled_router(spec: &Spec, n: &Names) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (proj, scale, per) = (
        n.attr(Role::Router),
        n.attr(Role::RouterScale),
        n.attr(Role::RouterExpertScale),
    );
    fill(
        r#"class Router(nn.Module):
    """Chooses each token's ${k} experts of ${e} and weighs them."""

    def __init__(self):
        super().__init__()
        self.${proj} = nn.Linear(${d}, ${e}, bias=False)
        self.${scale} = nn.Parameter(torch.ones(${d}))
        self.${per} = nn.Parameter(torch.ones(${e}))

    def forward(self, x):  # x: [tokens, ${d}] -> weights, experts: [tokens, ${k}]
        h = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + ${eps})  # no weight
        logits = self.${proj}((h * self.${scale}.float() * ${d} ** -0.5).type_as(x))
        weights, idx = logits.float().softmax(dim=-1).topk(${k}, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        return weights * self.${per}[idx], idx  # each times its expert's scale"#,
        &[
            ("proj", proj),
            ("scale", scale),
            ("per", per),
            ("d", spec.hidden.to_string()),
            ("e", m.experts.to_string()),
            ("k", m.top_k.to_string()),
            ("eps", spec.norm.eps.to_string()),
        ],
    )
}

/// Gemma 4's experts as the layer runs them: chosen by the router from the stream, reading their
/// own norm of it.
fn experts_beside(spec: &Spec) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    fill(
        r#"def run_experts(router, experts, x, stream):  # [B, T, ${d}] each -> [B, T, ${d}]
    """The experts' weighted sum: the router reads the stream, the experts x."""
    shape = x.shape
    x, stream = x.reshape(-1, ${d}), stream.reshape(-1, ${d})
    weights, idx = router(stream)
    out = torch.zeros_like(x)
    for slot in range(${k}):
        for e in range(${e}):
            rows = idx[:, slot] == e
            if rows.any():
                out[rows] += weights[rows, slot, None].to(x.dtype) * experts(x[rows], e)
    return out.reshape(shape)"#,
        &[
            ("d", spec.hidden.to_string()),
            ("e", m.experts.to_string()),
            ("k", m.top_k.to_string()),
        ],
    )
}

/// The router as its own module when the checkpoint stores a buffer beside its weight.
fn router(spec: &Spec, n: &Names) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (d, e) = (spec.hidden, m.experts);
    if !m.correction_bias || own_correction(n) || layer_correction(spec, n).is_some() {
        return format!("# The router is one linear map: {d} features to {e} expert scores.");
    }
    let buf = n.path(Role::CorrectionBias);
    let buf = buf.rsplit('.').next().unwrap_or(&buf).to_string();
    fill(
        r#"class Router(nn.Module):
    """Scores each token against the ${e} experts; the correction bias only steers the choice."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(${e}, ${d}))
        self.register_buffer("${buf}", torch.zeros(${e}))

    def forward(self, x):
        return F.linear(x.float(), self.weight.float())"#,
        &[("e", e.to_string()), ("d", d.to_string()), ("buf", buf)],
    )
}

/// The correction bias's path below a layer when the checkpoint keeps it outside the MoE block
/// (Kolibri's `moe.router.expert_bias` beside `mlp`): the layer holds it and hands it to the MoE.
fn layer_correction(spec: &Spec, n: &Names) -> Option<String> {
    let m = spec.moe.as_ref()?;
    (m.correction_bias && n.sublayer(Role::CorrectionBias) != n.sublayer(Role::Router))
        .then(|| n.path(Role::CorrectionBias))
}

/// The correction bias is a buffer of the MoE block itself (MiniMax-M2) or of a module of its
/// own (ERNIE 4.5's `moe_statics`), not of its router.
fn own_correction(n: &Names) -> bool {
    let path = n.inside(Role::CorrectionBias);
    match path.rsplit_once('.') {
        None => true,
        Some((holder, _)) => holder != n.inside(Role::Router),
    }
}

fn moe(spec: &Spec, n: &Names) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (d, e, k) = (spec.hidden, m.experts, m.top_k);
    // The router scores the zero-computation experts after the routed ones.
    let (z, scored) = (m.zero_experts, m.experts + m.zero_experts);
    let router_attr = n.inside(Role::Router);
    // A router one module down (GraniteMoE's `router.layer`) gets that module first.
    let holder = match router_attr.rsplit_once('.') {
        Some((h, _)) => format!("        self.{h} = nn.Module()\n"),
        None => String::new(),
    };
    let held = layer_correction(spec, n).is_some();
    let own_corr = m.correction_bias && !held && own_correction(n);
    // ZAYA's router MLP, a module of its own under the router's first name.
    let router_attr = match m.router_mlp {
        Some(_) => router_attr.split('.').next().unwrap_or("gate").to_string(),
        None => router_attr,
    };
    let holder = if m.router_mlp.is_some() {
        String::new()
    } else {
        holder
    };
    let mut init = holder
        + &if m.router_mlp.is_some() {
            format!(
                "        self.{router_attr} = RouterMLP(layer_idx)
"
            )
        } else if m.correction_bias && !own_corr && !held {
            format!("        self.{router_attr} = Router()\n")
        } else {
            format!(
                "        self.{router_attr} = nn.Linear({d}, {scored}, bias={})  # the router\n",
                py_bool(m.router_bias)
            )
        };
    let experts_path = n.inside(Role::ExpertDown);
    let experts_attr = experts_path
        .split('.')
        .next()
        .unwrap_or("experts")
        .to_string();
    // Stacked tensors held by the MoE module itself (GraniteMoE's `input_linear`): MoE is an
    // Experts, so the parameters sit where the checkpoint has them.
    let grouped = m.storage.grouped();
    let own_experts = grouped && !experts_path.contains('.');
    if grouped && !own_experts {
        init += &format!("        self.{experts_attr} = Experts()\n");
    } else if !grouped {
        init += &format!(
            "        self.{experts_attr} = nn.ModuleList(ExpertMLP() for _ in range({e}))\n"
        );
    }
    // Ling: the layer's clips after the activation, routed and shared (0: none).
    let (clip, shared_clip) = match &m.act_clips {
        Some(_) => {
            init += "        self.clips = CLIPS[layer_idx]  # (routed, shared)\n";
            (", self.clips[0]", ", self.clips[1]")
        }
        None => ("", ""),
    };
    let mut shared = String::new();
    if m.shared_experts > 0 && shared_beside(spec, n).is_none() {
        let s = n.inside(Role::SharedDown);
        let s = s.split('.').next().unwrap_or("shared_experts").to_string();
        init += &format!("        self.{s} = SharedMLP()\n");
        shared = if m.shared_average {
            format!("        out = (out + self.{s}(x)) / 2  # routed and shared averaged\n")
        } else {
            format!("        out = out + self.{s}(x{shared_clip})\n")
        };
        if m.shared_gate {
            let g = n.inside(Role::SharedExpertGate);
            init += &format!(
                "        self.{g} = nn.Linear({}, 1, bias=False)  # one gate score per token\n",
                spec.hidden
            );
            shared = format!("        out = out + torch.sigmoid(self.{g}(x)) * self.{s}(x)\n");
        }
    }
    if m.out_bias {
        let b = n.inside(Role::MoeBlock);
        let owner = if b == n.sublayer(Role::MoeBlock) {
            "self".to_string()
        } else {
            format!("self.{b}")
        };
        init += &format!(
            "        {owner}.bias = nn.Parameter(torch.zeros({d}))  # the block's own bias\n"
        );
        shared += &format!("        out = out + {owner}.bias\n");
    }
    let corr = if own_corr {
        let path = n.inside(Role::CorrectionBias);
        let shape: Vec<String> = spec
            .layout
            .correction_shape(scored)
            .iter()
            .map(|d| d.to_string())
            .collect();
        let (module, buf) = match path.rsplit_once('.') {
            Some((holder, buf)) => {
                // Held by the experts' own module (Laguna's `experts.e_score_correction_bias`),
                // or by a module of its own.
                // (LongCat-Flash's `router` holds it beside the classifier, made above.)
                let router_holder = router_attr.rsplit_once('.').map(|(h, _)| h);
                if holder != experts_attr && Some(holder) != router_holder {
                    init += &format!("        self.{holder} = nn.Module()\n");
                }
                (format!("self.{holder}"), buf.to_string())
            }
            None => ("self".to_string(), path.clone()),
        };
        init += &format!(
            "        {module}.register_buffer(\"{buf}\", torch.zeros({}))  # steers the choice only\n",
            shape.join(", ")
        );
        format!("self.{path}")
    } else if held {
        "correction".to_string()
    } else {
        format!("self.{router_attr}.{}", n.attr(Role::CorrectionBias))
    };
    let groups = if m.n_group > 1 {
        let per = e / m.n_group;
        let rank = if m.scoring == Scoring::Sigmoid {
            "topk(2, dim=-1).values.sum(-1)"
        } else {
            "max(dim=-1).values"
        };
        format!(
            "        group_scores = choice.view(-1, {g}, {per}).{rank}  # rank the {g} groups\n        keep = torch.zeros_like(group_scores).scatter_(1, group_scores.topk({tg}, dim=-1).indices, 1.0)\n        choice = choice.masked_fill(~keep.bool().repeat_interleave({per}, dim=1), float(\"-inf\"))  # other groups' experts out\n",
            g = m.n_group,
            tg = m.topk_group
        )
    } else {
        String::new()
    };
    let select = match m.scoring {
        // ZAYA: the best class after the balancing biases; the last class computes nothing.
        _ if m.router_mlp.is_some() => format!(
            "        probs = logits.float().softmax(dim=-1)  # over the experts and the class that computes nothing\n        idx = (probs + self.{router_attr}.balancing_biases).argmax(-1, keepdim=True)\n        weights = probs.gather(1, idx)  # class {e} matches no expert below: it adds nothing\n"
        ),
        Scoring::Softmax if m.correction_bias => format!(
            "        probs = logits.float().softmax(dim=-1)\n        choice = probs + {corr}\n{groups}        idx = choice.topk({k}, dim=-1).indices\n        weights = probs.gather(1, idx)\n{}",
            if m.norm_topk_prob {
                "        weights = weights / weights.sum(-1, keepdim=True)\n"
            } else {
                ""
            }
        ),
        Scoring::Softmax => format!(
            "        probs = logits.float().softmax(dim=-1)\n        choice = probs\n{groups}        weights, idx = choice.topk({k}, dim=-1)\n{}",
            if m.norm_topk_prob {
                "        weights = weights / weights.sum(-1, keepdim=True)\n"
            } else {
                ""
            }
        ),
        Scoring::Sigmoid => format!(
            "        probs = logits.float().sigmoid()\n        choice = probs{}\n{groups}        idx = choice.topk({k}, dim=-1).indices\n        weights = probs.gather(1, idx)\n{}",
            if m.correction_bias {
                format!(" + {corr}")
            } else {
                String::new()
            },
            if m.norm_topk_prob {
                format!(
                    "        weights = weights / (weights.sum(-1, keepdim=True) + {})\n",
                    fmt_f(m.renorm_eps)
                )
            } else {
                String::new()
            }
        ),
        Scoring::SparseMixer { eps } => format!(
            "        # SparseMixer: the best expert, then the best of the rest, each weighted by a softmax\n        # over the logits within a relative {t} of its own\n        weights, idx, masked = [], [], logits.float()\n        for _ in range(2):\n            m, e = masked.max(dim=-1, keepdim=True)\n            far = (m - logits.float()) / logits.float().abs().clamp(min=m) > {t}\n            weights.append(masked.masked_fill(far, float(\"-inf\")).softmax(dim=-1).gather(1, e))\n            idx.append(e)\n            masked = masked.scatter(1, e, float(\"-inf\"))  # the chosen one is out\n        weights, idx = torch.cat(weights, 1), torch.cat(idx, 1)\n",
            t = 2.0 * eps
        ),
        Scoring::SigmoidBiasedLogits => format!(
            "        probs = logits.float().sigmoid()\n        idx = (logits.float() + {corr}).topk({k}, dim=-1).indices  # the bias joins the logits\n        weights = probs.gather(1, idx)\n{}",
            if m.norm_topk_prob {
                "        weights = weights / weights.sum(-1, keepdim=True)\n"
            } else {
                ""
            }
        ),
        Scoring::TopkSoftmax => format!(
            "        top, idx = logits.topk({k}, dim=-1)\n        weights = top.float().softmax(dim=-1)\n"
        ),
        Scoring::TopkSigmoid => format!(
            "        top, idx = logits.topk({k}, dim=-1)\n        weights = top.float().sigmoid()  # scales each chosen expert's input\n"
        ),
        Scoring::SigmoidSink => unreachable!("written by sink_moe"),
        Scoring::SqrtSoftplus => format!(
            "        probs = F.softplus(logits.float()).sqrt()\n        idx = (probs + {corr}).topk({k}, dim=-1).indices\n        weights = probs.gather(1, idx)\n        weights = weights / (weights.sum(-1, keepdim=True) + {})\n",
            fmt_f(m.renorm_eps)
        ),
    };
    let scale = if m.routed_scaling != 1.0 {
        format!("        weights = weights * {}\n", m.routed_scaling)
    } else {
        String::new()
    };
    let run = if own_experts {
        "Experts.forward(self, xs, e)".to_string()
    } else if grouped {
        format!("self.{experts_attr}(xs, e)")
    } else {
        format!("self.{experts_attr}[e](xs{clip})")
    };
    let apply = if m.scoring == Scoring::TopkSigmoid {
        format!("                xs = x[rows] * weights[rows, slot, None].to(x.dtype)\n                out[rows] += {run}\n")
    } else {
        format!("                xs = x[rows]\n                out[rows] += weights[rows, slot, None].to(x.dtype) * {run}\n")
    };
    let zero = if z > 0 {
        format!("        # a chosen zero-computation expert (index {e} or more) returns its input, weighted\n        out += (weights * (idx >= {e})).sum(-1, keepdim=True).to(x.dtype) * x\n")
    } else {
        String::new()
    };
    let router_class = m
        .router_mlp
        .map_or(String::new(), |width| router_mlp(spec, width) + "\n\n\n");
    router_class
        + &fill(
            r#"class MoE(${base}):
    """${e} routed experts, ${k} active per token${shared_note}."""

    def __init__(self${layer_idx}):
        super().__init__()
${init}
    def forward(self, x${held}):  # [B, T, ${d}]
        shape = x.shape
        x = x.reshape(-1, ${d})  # one row per token
        logits = self.${router}(x)  # [tokens, ${scored}]
${softcap}${select}${scale}        out = torch.zeros_like(x)
        for slot in range(${k}):
            for e in range(${e}):
                rows = idx[:, slot] == e
                if not rows.any():
                    continue
${apply}${zero}${shared}        return out.reshape(shape)"#,
            &[
                ("e", e.to_string()),
                (
                    "layer_idx",
                    if moe_needs_index(spec) {
                        ", layer_idx=0".into()
                    } else {
                        String::new()
                    },
                ),
                (
                    "scored",
                    (scored + u64::from(m.router_mlp.is_some())).to_string(),
                ),
                ("k", k.to_string()),
                (
                    "shared_note",
                    if m.shared_experts > 0 {
                        format!(", plus {} shared", m.shared_experts)
                    } else if z > 0 {
                        format!(", among {z} more that compute nothing")
                    } else {
                        String::new()
                    },
                ),
                ("zero", zero),
                (
                    "base",
                    if own_experts { "Experts" } else { "nn.Module" }.into(),
                ),
                ("init", init),
                ("d", d.to_string()),
                ("router", router_attr),
                (
                    "held",
                    if held {
                        ", correction".into()
                    } else {
                        String::new()
                    },
                ),
                ("select", select),
                (
                    "softcap",
                    match m.router_softcap {
                        Some(c) => format!(
                        "        logits = {c} * torch.tanh(logits.float() / {c})  # softcapped\n"
                    ),
                        None => String::new(),
                    },
                ),
                ("scale", scale),
                ("apply", apply),
                ("shared", shared),
            ],
        )
}

// ---- the block and the model --------------------------------------------------------------------

fn residual(spec: &Spec) -> String {
    let m = spec.residual_mult;
    let add = if m == 1.0 {
        "x + delta".to_string()
    } else {
        format!("x + {m} * delta  # the sublayer's output, scaled")
    };
    format!("def residual(x, delta):\n    \"\"\"The residual stream: each sublayer adds its output to what came in.\"\"\"\n    return {add}")
}

pub(super) fn plan_list(spec: &Spec) -> String {
    format!(
        "[\n    {},\n]",
        crate::render::numpy::python_plan(spec).join(",\n    ")
    )
}

fn layer(spec: &Spec, n: &Names) -> String {
    if spec
        .plan
        .iter()
        .any(|l| l.ffn == crate::spec::Ffn::Shortcut)
    {
        return pair_layer(spec, n);
    }
    // Every layer one sublayer: a mixer alone or an FFN alone.
    if spec
        .plan
        .iter()
        .all(|l| (l.mixer == crate::spec::Mixer::None) != (l.ffn == crate::spec::Ffn::None))
    {
        return single_layer(spec, n);
    }
    if spec.recurrent_place.is_some() {
        return split_place_layer(spec, n);
    }
    if spec.rwkv.is_some() {
        return rwkv_layer(spec, n);
    }
    let place = spec.norm.place;
    let d = spec.hidden;
    let attn = attn_sublayer(spec, n);
    let ffn = n.sublayer(if spec.plan.iter().any(|l| l.dense()) {
        Role::Down
    } else {
        Role::Router
    });
    // Gemma 4's experts sit on the layer beside the MLP, not in the FFN's module.
    let beside = spec
        .plan
        .iter()
        .all(|l| l.ffn == crate::spec::Ffn::DenseAndMoe);
    let norm_attr = |r: Role| n.path(r);
    let mut init = String::new();
    // Gated streams are normed in their mix: the sublayers read it as it is.
    let gated = spec.gated_streams.is_some();
    let attn_in = if place.before() && !gated {
        let a = norm_attr(Role::AttnNorm);
        // A.X-K2: the norm is one module with its gate (`input_layernorm.norm`, `.W_down` …).
        let a = match (&spec.gated_norm, a.strip_suffix(".norm")) {
            (None, _) => a,
            (Some(_), Some(holder)) => holder.to_string(),
            (Some(_), None) => unreachable!("a gated norm's weight is its module's `norm`"),
        };
        if spec.gated_norm.is_some() {
            init += &format!(
                "        self.{a} = GatedNorm()  # the norm, then a gate from its output\n"
            );
        } else if spec.skip_first_attn_norm {
            init += &format!("        self.{a} = Norm({d}) if layer_idx > 0 else nn.Identity()  # layer 0 reads the embeddings as they are\n");
        } else {
            init += &format!("        self.{a} = Norm({d})\n");
        }
        format!("self.{a}(x)")
    } else {
        "x".to_string()
    };
    let own = own_indexers(spec).is_some();
    init += &if own {
        format!("        self.{attn} = Attention(span, use_rope, own_indexer)\n")
    } else if needs_layer_index(spec) {
        format!("        self.{attn} = Attention(span, use_rope, layer_idx)  # it depends on the layer\n")
    } else if !spec.layer_attn.is_empty() {
        format!("        self.{attn} = ATTENTION[layer_idx](span, use_rope)  # this layer's own class\n")
    } else {
        format!("        self.{attn} = Attention(span, use_rope)\n")
    };
    let mut a_out = format!("self.{attn}({attn_in}, rope)");
    let recurrent = match (&spec.ssm, &spec.s6, &spec.short_conv, &spec.delta) {
        (Some(_), _, _, _) => Some(("mamba2", "Mamba2")),
        (None, Some(_), _, _) => Some(("mamba", "Mamba")),
        (None, None, Some(_), _) => Some(("conv", "ShortConv")),
        (None, None, None, Some(d)) => Some(("delta", delta_class(d).0)),
        (None, None, None, None) if spec.lightning.is_some() => {
            Some(("lightning", "LightningAttention"))
        }
        (None, None, None, None) if spec.rg_lru.is_some() => Some(("rglru", "RecurrentBlock")),
        (None, None, None, None) => None,
    };
    // Falcon-H1: attention and Mamba2 side by side, both reading the normed input.
    let mut mixed_in = String::new();
    let recurrent = if let Some(m) = spec.mup {
        let mamba = n.sublayer(Role::SsmIn);
        init += &format!("        self.{mamba} = Mamba2()  # beside the attention\n");
        mixed_in = format!("        h = {attn_in}  # both mixers read it\n");
        a_out = format!(
            "{} * self.{attn}(h * {}, rope) + {} * self.{mamba}(h * {})",
            fmt_f(m.attn_out),
            fmt_f(m.attn_in),
            fmt_f(m.ssm_out),
            fmt_f(m.ssm_in)
        );
        None
    } else {
        recurrent
    };
    if let Some((kind, class)) = recurrent {
        // A hybrid: each layer holds the one mixer it runs.
        let anchor = spec.delta.map_or(Role::SsmIn, |d| delta_class(&d).1);
        let mamba = n.sublayer(anchor);
        let made = init.lines().last().unwrap_or_default().trim().to_string();
        init = init.replace(
            &format!("        {made}\n"),
            &format!("        self.span = span\n        if span[0] == \"{kind}\":\n            self.{mamba} = {class}()\n        else:\n            {made}\n"),
        );
        a_out = format!("(self.{mamba}({attn_in}) if self.span[0] == \"{kind}\" else {a_out})");
    }
    if place.after() {
        let p = norm_attr(Role::PostAttnNorm);
        init += &format!("        self.{p} = Norm({d})  # on the attention's output\n");
        a_out = format!("self.{p}({a_out})");
    }
    let shared = spec.block == Block::Parallel { shared_norm: true };
    let ffn_in = if !place.before() || gated {
        "x".to_string()
    } else if shared {
        "h".to_string()
    } else {
        let f = norm_attr(Role::FfnNorm);
        let note = if spec.block == Block::Sequential
            && place == NormPlace::Pre
            && f.contains("post_attention")
        {
            "  # before the FFN, despite its name"
        } else {
            ""
        };
        if spec.gated_norm.is_some() {
            init += &format!("        self.{f} = GatedNorm() if ffn == \"moe\" else Norm({d})  # gated in the MoE layers\n");
        } else {
            init += &format!("        self.{f} = Norm({d}){note}\n");
        }
        format!("self.{f}(x)")
    };
    let has_dense = spec.plan.iter().any(|l| l.dense());
    // An MLP whose projections sit on the layer itself (OPT's `fc1`, `fc2`): the layer is an MLP.
    let own_mlp = !spec.is_moe() && (!n.path(Role::Down).contains('.') || split_mlp(spec, n));
    init += &match (has_dense, spec.is_moe()) {
        _ if own_mlp => String::new(),
        _ if beside => format!("        self.{ffn} = MLP()\n"),
        // Gemma 4's wider MLPs in some layers.
        _ if !spec.mlp_widths.is_empty() => {
            let mut pick = String::new();
            for i in 0..spec.mlp_widths.len() {
                pick += &format!("MLP{n}() if layer_idx in MLP{n}_LAYERS else ", n = i + 2);
            }
            format!("        self.{ffn} = {pick}MLP()\n")
        }
        (true, true) if moe_needs_index(spec) => {
            format!("        self.{ffn} = MoE(layer_idx) if ffn == \"moe\" else MLP()\n")
        }
        (true, true) => format!("        self.{ffn} = MoE() if ffn == \"moe\" else MLP()\n"),
        (false, true) if moe_needs_index(spec) => format!("        self.{ffn} = MoE(layer_idx)\n"),
        (false, true) => format!("        self.{ffn} = MoE()\n"),
        _ => format!("        self.{ffn} = MLP()\n"),
    };
    let mut f_out = if own_mlp {
        format!("MLP.forward(self, {ffn_in})")
    } else {
        format!("self.{ffn}({ffn_in})")
    };
    // Gemma 4: the MLP and the experts side by side, each normed after; the router reads the
    // stream x, the experts their own norm of it.
    if spec
        .plan
        .iter()
        .any(|l| l.ffn == crate::spec::Ffn::DenseAndMoe)
    {
        let (p1, pe, p2) = (
            norm_attr(Role::MlpPostNorm),
            norm_attr(Role::ExpertsNorm),
            norm_attr(Role::ExpertsPostNorm),
        );
        let (router, experts) = (n.sublayer(Role::Router), n.sublayer(Role::ExpertDown));
        init += &format!("        self.{p1} = Norm({d})  # after the MLP\n        self.{router} = Router()\n        self.{experts} = Experts()\n        self.{pe} = Norm({d})  # before the experts\n        self.{p2} = Norm({d})  # after them\n");
        f_out = format!("(self.{p1}({f_out}) + self.{p2}(run_experts(self.{router}, self.{experts}, self.{pe}(x), x)))");
    }
    if let Some(path) = layer_correction(spec, n) {
        // The checkpoint keeps the router's correction bias outside the MoE block. (Only
        // Kolibri stores it so, and every Kolibri layer routes: no dense layer to skip.)
        let parts: Vec<&str> = path.split('.').collect();
        let (holders, buf) = parts.split_at(parts.len() - 1);
        for i in 1..=holders.len() {
            init += &format!("        self.{} = nn.Module()\n", holders[..i].join("."));
        }
        let e = spec.moe.as_ref().map_or(0, |m| m.experts);
        init += &format!(
            "        self.{}.register_buffer(\"{}\", torch.zeros({e}))  # the MoE's correction bias, stored here\n",
            holders.join("."),
            buf[0]
        );
        f_out = format!("self.{ffn}({ffn_in}, self.{path})");
    }
    // A shared MLP beside the MoE module reads the same normed input, its output added to the
    // experts'.
    let mut ffn_line = String::new();
    if let Some(s) = shared_beside(spec, n) {
        init += &format!("        self.{s} = SharedMLP()  # beside the experts\n");
        ffn_line = format!("        h = {ffn_in}\n");
        f_out = format!("(self.{ffn}(h) + self.{s}(h))");
    }
    if spec.moe.as_ref().is_some_and(|m| m.post_norm) {
        let p = norm_attr(Role::MoePostNorm);
        init += &format!("        self.{p} = Norm({d}) if ffn == \"moe\" else nn.Identity()  # on the MoE's output, MoE layers only\n");
        f_out = format!("self.{p}({f_out})");
    }
    if place.after() {
        let p = norm_attr(Role::PostFfnNorm);
        init += &format!("        self.{p} = Norm({d})  # on the FFN's output\n");
        f_out = format!("self.{p}({f_out})");
    }
    // Inkling: each sublayer's output through a residual convolution over time.
    if let Some(c) = spec.out_conv {
        let (taps, scaled) = (c.taps, py_bool(c.scaled));
        let (ac, fc) = (n.sublayer(Role::AttnOutConv), n.sublayer(Role::FfnOutConv));
        init += &format!("        self.{ac} = ResidualConv({d}, {taps}, {scaled})  # on the attention's output\n        self.{fc} = ResidualConv({d}, {taps}, {scaled})  # on the FFN's output\n");
        a_out = format!("self.{ac}({a_out})");
        f_out = format!("self.{fc}({f_out})");
    }
    if spec.residual_mult != 1.0 {
        // Each sublayer's output is scaled before it joins the stream.
        a_out = format!("{} * {a_out}", spec.residual_mult);
        f_out = format!("{} * {f_out}", spec.residual_mult);
    }
    let body = match spec.block {
        // nGPT: the normed stream moves towards each normed output at a learned rate (Dory).
        Block::Sequential if place == NormPlace::Sphere => {
            let Some(g) = spec.ngpt else {
                unreachable!("a block on the unit sphere has its scalings")
            };
            let (l1, l2) = (n.path(Role::NgptRateAttn), n.path(Role::NgptRateFfn));
            init += &format!(
                "        self.{l1} = nn.Parameter(torch.full(({d},), {i}))  # the rates towards the attention's output\n        self.{l2} = nn.Parameter(torch.full(({d},), {i}))  # and towards the MLP's\n",
                i = fmt_f(g.init)
            );
            let f = format!("({} / {})", fmt_f(g.alpha), fmt_f(g.init));
            format!(
                "        x = {attn_in}  # the stream, normed in place\n        x = x + (self.{l1} * {f}).abs() * ({} - x)\n        x = {ffn_in}\n        x = x + (self.{l2} * {f}).abs() * ({} - x)\n        return x",
                a_out.replace(&attn_in, "x"),
                f_out.replace(&ffn_in, "x")
            )
        }
        // The normed input takes the stream's place in each add (MiniMax).
        Block::Sequential if place == NormPlace::Normed => {
            let Some(m) = spec.stream_mix else {
                unreachable!("a normed-stream block has its factors")
            };
            init += &format!(
                "        # x <- alpha * n(x) + beta * f(n(x)): each sublayer adds to its normed input\n        self.alpha, self.beta = {} if span[0] == \"lightning\" else {}\n",
                py_pair(m.linear),
                py_pair(m.attn)
            );
            format!(
                "        h = {attn_in}\n        x = self.alpha * h + self.beta * {}\n        h = {ffn_in}\n        return {} * h + {} * {}",
                a_out.replace(&attn_in, "h"),
                fmt_f(m.mlp.0),
                fmt_f(m.mlp.1),
                f_out.replace(&ffn_in, "h")
            )
        }
        // Post-residual: each add is followed by a norm of the stream itself.
        Block::Sequential if place.on_stream() => {
            let (n1, n2) = (norm_attr(Role::AttnNorm), norm_attr(Role::FfnNorm));
            init += &format!("        self.{n1} = Norm({d})  # after the attention's add\n        self.{n2} = Norm({d})  # after the FFN's add\n");
            format!("        x = self.{n1}(x + {a_out})\n        x = self.{n2}(x + {f_out})\n        return x")
        }
        // Gated streams: each sublayer reads the streams' gated mean, and its output joins
        // every stream by that stream's injection weight.
        Block::Sequential if gated => {
            let mixes = [Role::GsAttnNorm, Role::GsFfnNorm].map(|r| {
                let p = n.path(r);
                p.rsplit_once('.').map_or(p.clone(), |(m, _)| m.to_string())
            });
            init += &holders_of(&mixes);
            init += &format!(
                "        self.{} = GatedMix()  # before the attention\n        self.{} = GatedMix()  # before the FFN\n",
                mixes[0], mixes[1]
            );
            let a = a_out.replace("(x,", "(h,").replace("(x)", "(h)");
            let f = f_out.replace("(x,", "(h,").replace("(x)", "(h)");
            let ple = if spec.ngram_ple.is_some() {
                let p = n.sublayer(Role::NgramKey);
                init += &format!("        self.{p} = NgramPle(NGRAM_SHARDS[layer_idx]) if layer_idx in NGRAM_SHARDS else None\n");
                format!("        if self.{p} is not None:  # the n-gram embeddings, before the mixer\n            x = x + self.{p}(x, ids)\n")
            } else {
                String::new()
            };
            format!(
                "{ple}        h, g = self.{}(x)  # h: [B, T, {d}], g: [B, T, N]\n        x = x + g.unsqueeze(-1) * {a}.unsqueeze(-2)  # [B, T, N, {d}]\n        h, g = self.{}(x)\n        x = x + g.unsqueeze(-1) * {f}.unsqueeze(-2)\n        return x",
                mixes[0], mixes[1]
            )
        }
        // Hyper-connections: each sublayer reads the streams weighed into one, and writes its
        // output back to every stream by that stream's post gate.
        Block::Sequential if spec.hyper.is_some() => {
            let mut made = Vec::new();
            let mut mixes = Vec::new();
            for (role, note) in [
                (Role::HcAttnFn, "before the attention"),
                (Role::HcFfnFn, "before the FFN"),
            ] {
                let (module, prefix) = super::torch_hyper::split(&n.path(role));
                made.push(format!(
                    "        self.{module} = StreamMix(\"{prefix}\")  # {note}\n"
                ));
                mixes.push(module);
            }
            init += &holders_of(&mixes);
            init += &made.concat();
            let a = a_out.replace(&attn_in, &attn_in.replace("(x)", "(h)"));
            let f = f_out.replace(&ffn_in, &ffn_in.replace("(x)", "(h)"));
            format!(
                "        h, post = self.{}(x)  # h: [B, T, {d}], post: [B, T, N]\n        x = x + post.unsqueeze(-1) * {a}.unsqueeze(-2)  # [B, T, N, {d}]\n        h, post = self.{}(x)\n        x = x + post.unsqueeze(-1) * {f}.unsqueeze(-2)\n        return x",
                mixes[0], mixes[1]
            )
        }
        Block::Sequential if spec.depth_scaled => {
            init += "        self.k = 2 * layer_idx + 2  # this layer's first add is the model's k-th, its second the (k + 1)-th\n";
            format!("{mixed_in}        # each add keeps the stream's scale, whatever the depth\n        x = math.sqrt((self.k - 1) / self.k) * x + {a_out} / math.sqrt(self.k)\n{ffn_line}        x = math.sqrt(self.k / (self.k + 1)) * x + {f_out} / math.sqrt(self.k + 1)\n        return x")
        }
        Block::Sequential if spec.residual_affine => {
            let (ra, rf) = (n.path(Role::ResidAttnScale), n.path(Role::ResidFfnScale));
            let (ra, rf) = (
                ra.split('.')
                    .next()
                    .unwrap_or("post_attention_residual_scale")
                    .to_string(),
                rf.split('.')
                    .next()
                    .unwrap_or("post_mlp_residual_scale")
                    .to_string(),
            );
            init += &format!("        self.{ra} = ResidualScale({d})  # where the attention joins the stream\n        self.{rf} = ResidualScale({d})  # where the FFN does\n");
            format!("{mixed_in}        x = self.{ra}({a_out}, x)\n{ffn_line}        x = self.{rf}({f_out}, x)\n        return x")
        }
        Block::Sequential if spec.residual_scales => {
            let (ra, rf) = (n.path(Role::ResidScaleAttn), n.path(Role::ResidScaleFfn));
            init += &format!("        self.{ra} = nn.Parameter(torch.ones({d}))  # scales the stream where the attention joins it\n        self.{rf} = nn.Parameter(torch.ones({d}))  # and where the FFN does\n");
            format!("        x = self.{ra} * x + {a_out}\n{ffn_line}        x = self.{rf} * x + {f_out}\n        return x")
        }
        Block::Sequential => {
            format!("{mixed_in}        x = x + {a_out}\n{ffn_line}        x = x + {f_out}\n        return x")
        }
        // Attention and FFN both read the layer's input, and both add to it.
        Block::Parallel { shared_norm: true } => format!(
            "        h = {attn_in}  # one norm for both sublayers\n        return x + {} + {f_out}",
            a_out.replace(&attn_in, "h")
        ),
        Block::Parallel { shared_norm: false } => {
            format!("        return x + {a_out} + {f_out}  # both sublayers read the layer's input")
        }
    };
    // Gemma 4: each layer's per-layer input gated in, then its output scaled.
    let mut body = body;
    let mut ple_param = if spec.ngram_ple.is_some() {
        ", ids"
    } else {
        ""
    };
    if spec.per_layer_input.is_some() || spec.layer_scalar {
        let kept = body
            .strip_suffix("\n        return x")
            .expect("a layer that ends on its stream");
        let mut tail = String::new();
        if let Some(p) = spec.per_layer_input {
            let (g, u, pn) = (
                n.path(Role::PleGate),
                n.path(Role::PleUp),
                n.path(Role::PleNorm),
            );
            let w = p.width;
            init += &format!("        self.{g} = nn.Linear({d}, {w}, bias=False)\n        self.{u} = nn.Linear({w}, {d}, bias=False)\n        self.{pn} = Norm({d})\n");
            tail += &format!(
                "        x = x + self.{pn}(self.{u}({} * ple))  # this layer's per-layer input, gated by the stream\n",
                act_expr(spec.mlp.act, &format!("self.{g}(x)"))
            );
            ple_param = ", ple";
        }
        if spec.layer_scalar {
            let s = n.path(Role::LayerScalar);
            init += &format!("        self.register_buffer(\"{s}\", torch.ones(1))  # the layer's output scalar\n");
            tail += &format!("        x = x * self.{s}\n");
        }
        body = format!("{kept}\n{tail}        return x");
    }
    // ZAYA's residual adds: each term shifted and scaled by learned vectors.
    let residual_class = if spec.residual_affine {
        "class ResidualScale(nn.Module):\n    \"\"\"ZAYA's residual add: (out + out_shift) * out_scale + (stream + stream_shift) * stream_scale.\"\"\"\n\n    def __init__(self, d):\n        super().__init__()\n        self.hidden_states_scale = nn.Parameter(torch.ones(d))\n        self.hidden_states_bias = nn.Parameter(torch.zeros(d))\n        self.residual_scale = nn.Parameter(torch.ones(d))\n        self.residual_bias = nn.Parameter(torch.zeros(d))\n\n    def forward(self, out, stream):\n        return (out + self.hidden_states_bias) * self.hidden_states_scale + (stream + self.residual_bias) * self.residual_scale\n\n\n"
    } else {
        ""
    };
    residual_class.to_string()
        + &fill(
        r#"# Per layer: (mixer and its span, RoPE on, FFN kind).
PLAN = ${plan}
${own_list}

class DecoderLayer(${base}):
    def __init__(self, span, use_rope, ffn${own_param}):
        super().__init__()
${init}
    def forward(self, x, rope${ple}):  # [B, T, ${d}]
${body}"#,
        &[
            ("plan", plan_list(spec)),
            (
                "own_list",
                match own_indexers(spec) {
                    Some(set) => format!(
                        "# The layers that run an indexer of their own; the others reuse the last one's choice.\nOWN_INDEXER = {{{}}}\n",
                        set.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ")
                    ),
                    None => String::new(),
                },
            ),
            (
                "own_param",
                if own {
                    ", own_indexer".into()
                } else if layer_needs_index(spec) {
                    ", layer_idx".into()
                } else {
                    String::new()
                },
            ),
            ("base", if own_mlp { "MLP" } else { "nn.Module" }.into()),
            ("init", modules_first(&init, &[&attn, &ffn])),
            ("d", d.to_string()),
            ("body", body),
            ("ple", ple_param.into()),
        ],
    )
}

/// LongCat-Flash's checkpoint layer: two sublayers (attention, then a dense MLP), each of the
/// model's layers, held in lists of two, and the experts beside the first MLP, their output
/// added after the second.
fn pair_layer(spec: &Spec, n: &Names) -> String {
    let d = spec.hidden;
    let list = |role: Role| {
        let p = n.path(role);
        p.split_once(".{s}")
            .map_or(p.clone(), |(l, _)| l.to_string())
    };
    let (an, attn, fnorm, mlp, moe) = (
        list(Role::AttnNorm),
        list(Role::O),
        list(Role::FfnNorm),
        list(Role::Down),
        n.sublayer(Role::Router),
    );
    fill(
        r#"# Per layer: (mixer and its span, RoPE on, FFN kind). A checkpoint layer holds two of them:
# layer 2i runs the experts beside its MLP ("shortcut"), layer 2i + 1 adds their output.
PLAN = ${plan}


class DecoderLayer(nn.Module):
    """Two sublayers, each attention then an MLP; the experts read the first MLP's input and their
    output joins the stream after the second."""

    def __init__(self, span, use_rope, ffn):
        super().__init__()
        self.${an} = nn.ModuleList(Norm(${d}) for _ in range(2))
        self.${attn} = nn.ModuleList(Attention(span, use_rope) for _ in range(2))
        self.${fnorm} = nn.ModuleList(Norm(${d}) for _ in range(2))  # before each MLP
        self.${mlp} = nn.ModuleList(MLP() for _ in range(2))
        self.${moe} = MoE()  # the shortcut

    def forward(self, x, rope):  # [B, T, ${d}]
        x = x + self.${attn}[0](self.${an}[0](x), rope)
        h = self.${fnorm}[0](x)
        shortcut = self.${moe}(h)  # the experts read the first MLP's input
        x = x + self.${mlp}[0](h)
        x = x + self.${attn}[1](self.${an}[1](x), rope)
        return x + self.${mlp}[1](self.${fnorm}[1](x)) + shortcut"#,
        &[
            ("plan", plan_list(spec)),
            ("d", d.to_string()),
            ("an", an),
            ("attn", attn),
            ("fnorm", fnorm),
            ("mlp", mlp),
            ("moe", moe),
        ],
    )
}

/// A hybrid whose recurrent layers norm before each sublayer and whose attention layers norm
/// after (OLMo hybrid): each layer holds the norms of its kind.
fn split_place_layer(spec: &Spec, n: &Names) -> String {
    debug_assert!(
        spec.norm.place == NormPlace::Post
            && spec.recurrent_place == Some(NormPlace::Pre)
            && spec.block == Block::Sequential,
        "the one split placement loaders give"
    );
    let Some(delta) = spec.delta else {
        unreachable!("only DeltaNet hybrids place their norms apart")
    };
    let (class, anchor) = delta_class(&delta);
    let p = |r: Role| n.path(r);
    let (ffn, make_ffn) = if spec.is_moe() {
        (
            n.sublayer(Role::Router),
            "MoE() if ffn == \"moe\" else MLP()",
        )
    } else {
        (n.sublayer(Role::Down), "MLP()")
    };
    fill(
        r#"# Per layer: (mixer and its span, RoPE on, FFN kind).
PLAN = ${plan}


class DecoderLayer(nn.Module):
    def __init__(self, span, use_rope, ffn):
        super().__init__()
        self.span = span
        if span[0] == "delta":  # normed before each sublayer
            self.${mixer} = ${class}()
            self.${pre_attn} = Norm(${d})
            self.${pre_ffn} = Norm(${d})
        else:  # normed after each sublayer
            self.${attn} = Attention(span, use_rope)
            self.${post_attn} = Norm(${d})
            self.${post_ffn} = Norm(${d})
        self.${ffn} = ${make_ffn}

    def forward(self, x, rope):  # [B, T, ${d}]
        if self.span[0] == "delta":
            x = x + self.${mixer}(self.${pre_attn}(x))
            return x + self.${ffn}(self.${pre_ffn}(x))
        x = x + self.${post_attn}(self.${attn}(x, rope))
        return x + self.${post_ffn}(self.${ffn}(x))"#,
        &[
            ("plan", plan_list(spec)),
            ("mixer", n.sublayer(anchor)),
            ("class", class.into()),
            ("attn", attn_sublayer(spec, n)),
            ("pre_attn", p(Role::AttnNorm)),
            ("pre_ffn", p(Role::FfnNorm)),
            ("post_attn", p(Role::PostAttnNorm)),
            ("post_ffn", p(Role::PostFfnNorm)),
            ("ffn", ffn),
            ("make_ffn", make_ffn.into()),
            ("d", spec.hidden.to_string()),
        ],
    )
}

/// A layer of one sublayer, pre-normed and added to the stream (Mamba2's mixer alone;
/// Nemotron-H's Mamba2, attention, MLP or experts): it holds the one it runs.
fn single_layer(spec: &Spec, n: &Names) -> String {
    use crate::spec::{Ffn as F, Mixer as M};
    let d = spec.hidden;
    let mut kinds: Vec<(&'static str, String, String)> = Vec::new();
    let mut add = |kind: &'static str, attr: String, make: String, call: String| {
        if !kinds.iter().any(|(k, _, _)| *k == kind) {
            kinds.push((
                kind,
                format!("self.{attr} = {make}"),
                call.replace("ATTR", &attr),
            ));
        }
    };
    for l in &spec.plan {
        match (l.mixer, l.ffn) {
            (M::Mamba2, _) => add(
                "mamba2",
                n.sublayer(Role::SsmIn),
                "Mamba2()".into(),
                "self.ATTR(h)".into(),
            ),
            (M::Mamba, _) => add(
                "mamba",
                n.sublayer(Role::SsmIn),
                "Mamba()".into(),
                "self.ATTR(h)".into(),
            ),
            (M::ShortConv, _) => add(
                "conv",
                n.sublayer(Role::SsmIn),
                "ShortConv()".into(),
                "self.ATTR(h)".into(),
            ),
            (M::DeltaNet, _) => add(
                "delta",
                n.sublayer(spec.delta.map_or(Role::SsmIn, |d| delta_class(&d).1)),
                format!(
                    "{}()",
                    spec.delta.map_or("GatedDeltaNet", |d| delta_class(&d).0)
                ),
                "self.ATTR(h)".into(),
            ),
            (M::Rwkv, _) => unreachable!("RWKV's layers hold both mixings: drawn by rwkv_layer()"),
            (M::MLstm, _) => unreachable!("xLSTM's layers are drawn by torch_mlstm::layer()"),
            (M::RgLru, _) => add(
                "rglru",
                n.sublayer(Role::SsmIn),
                "RecurrentBlock()".into(),
                "self.ATTR(h)".into(),
            ),
            (M::Lightning, _) => add(
                "lightning",
                n.sublayer(Role::SsmIn),
                "LightningAttention()".into(),
                "self.ATTR(h)".into(),
            ),
            (M::Attention(_), _) => add(
                "attention",
                attn_sublayer(spec, n),
                "Attention(span, use_rope)".into(),
                "self.ATTR(h, rope)".into(),
            ),
            (M::None, F::Moe) => add(
                "moe",
                n.sublayer(Role::Router),
                "MoE()".into(),
                "self.ATTR(h)".into(),
            ),
            (M::None, F::Dense) => add(
                "dense",
                n.sublayer(Role::Down),
                "MLP()".into(),
                "self.ATTR(h)".into(),
            ),
            (M::None, F::None) => {}
            (M::None, F::ChannelMix) => unreachable!("channel mixing follows RWKV's time mixing"),
            (M::None, F::Shortcut | F::DenseAndMoe) => {
                unreachable!("a layer of an MLP and experts has its attention")
            }
            (M::Parallel(_), _) => unreachable!("a parallel layer has its FFN: drawn by layer()"),
            (M::CrossAttention, _) => {
                unreachable!("cross-attention layers sit among attention layers: drawn by layer()")
            }
        }
    }
    let norm = n.path(Role::AttnNorm);
    let mut init = format!("        self.{norm} = Norm({d})\n");
    let mut fwd = format!("        h = self.{norm}(x)\n");
    if let [(_, make, call)] = kinds.as_slice() {
        init += &format!("        {make}\n");
        fwd += &format!("        return x + {call}");
    } else {
        init += "        # the one sublayer this layer runs\n        self.kind = \"mamba2\" if span[0] == \"mamba2\" else ffn if span[0] == \"none\" else \"attention\"\n";
        for (i, (kind, make, call)) in kinds.iter().enumerate() {
            let word = if i == 0 { "if" } else { "elif" };
            init += &format!("        {word} self.kind == \"{kind}\":\n            {make}\n");
            fwd += &format!(
                "        {word} self.kind == \"{kind}\":\n            return x + {call}\n"
            );
        }
        fwd += "        raise AssertionError(self.kind)";
    }
    fill(
        r#"# Per layer: (mixer and its span, RoPE on, FFN kind).
PLAN = ${plan}


class DecoderLayer(nn.Module):
    def __init__(self, span, use_rope, ffn):
        super().__init__()
${init}
    def forward(self, x, rope):  # [B, T, ${d}]
${fwd}"#,
        &[
            ("plan", plan_list(spec)),
            ("init", init),
            ("fwd", fwd.trim_end().to_string()),
            ("d", d.to_string()),
        ],
    )
}

/// LFM2's short gated convolution.
fn short_conv_class(spec: &Spec, n: &Names) -> String {
    let Some(c) = spec.short_conv.as_ref() else {
        unreachable!("only models with a short convolution draw one")
    };
    let d = spec.hidden;
    fill(
        r#"class ShortConv(nn.Module):
    """B, C and x from one projection; B * x convolved over the last ${k} positions, gated by C."""

    def __init__(self):
        super().__init__()
        self.${in_proj} = nn.Linear(${d}, ${three_d}, bias=${bias})  # B | C | x
        self.${conv} = nn.Conv1d(${d}, ${d}, ${k}, groups=${d}, padding=${pad}, bias=${bias})
        self.${out_proj} = nn.Linear(${d}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
        b, c, xs = self.${in_proj}(x).chunk(3, dim=-1)
        u = causal_conv(b * xs, self.${conv}.weight, self.${conv}.bias, state_of(self))  # the last ${k} positions
        return self.${out_proj}(c * u)"#,
        &[
            ("d", d.to_string()),
            ("three_d", (3 * d).to_string()),
            ("k", c.kernel.to_string()),
            ("pad", (c.kernel - 1).to_string()),
            ("bias", py_bool(c.bias)),
            ("in_proj", n.attr(Role::SsmIn)),
            ("conv", n.attr(Role::SsmConv)),
            ("out_proj", n.attr(Role::SsmOut)),
        ],
    )
}

/// A DeltaNet's PyTorch class and the role whose module holds it.
fn delta_class(s: &DeltaNet) -> (&'static str, Role) {
    match s.store {
        DeltaStore::Grouped | DeltaStore::Separate | DeltaStore::Fused => {
            ("GatedDeltaNet", Role::SsmIn)
        }
        DeltaStore::Olmo => ("GatedDeltaNet", Role::SsmQ),
        DeltaStore::Kimi | DeltaStore::Bailing => ("KimiDeltaAttention", Role::SsmQ),
    }
}

fn py_pair((a, b): (f64, f64)) -> String {
    format!("({}, {})", fmt_f(a), fmt_f(b))
}

/// RWKV's layer: LayerNorm'd time mixing and channel mixing, each added to the stream, layer 0
/// holding the embeddings' norm; in inference the stream halved after every few layers.
fn rwkv_layer(spec: &Spec, n: &Names) -> String {
    let Some(r) = spec.rwkv else {
        unreachable!("only RWKV draws its layer")
    };
    let p = |role: Role| n.path(role);
    let (tm, cm) = (n.sublayer(Role::TmKey), n.sublayer(Role::Up));
    let pre = p(Role::EmbedNorm);
    let pre = pre.rsplit('.').next().unwrap_or("pre_ln").to_string();
    let (scale, halve) = if r.rescale_every > 0 {
        (
            format!("        # In inference transformers divides layer b's output projections by 2^(b // {k}) and\n        # halves the stream after every {k}th layer: the same up to the norms' eps.\n        self.scale = 0.5 ** (layer_idx // {k})\n        self.halve = (layer_idx + 1) % {k} == 0\n", k = r.rescale_every),
            "        return x / 2 if self.halve else x",
        )
    } else {
        (
            "        self.scale, self.halve = 1.0, False\n".to_string(),
            "        return x",
        )
    };
    fill(
        r#"# Per layer: (mixer and its span, RoPE on, FFN kind).
PLAN = ${plan}


class DecoderLayer(nn.Module):
    def __init__(self, span, use_rope, ffn, layer_idx):
        super().__init__()
        if layer_idx == 0:
            self.${pre} = Norm(${d})  # the embeddings' norm, kept in layer 0
        self.${ln1} = Norm(${d})
        self.${tm} = TimeMix()
        self.${ln2} = Norm(${d})
        self.${cm} = ChannelMix()
${scale}
    def forward(self, x, rope):  # [B, T, ${d}]
        x = x + self.scale * self.${tm}(self.${ln1}(x))
        x = x + self.scale * self.${cm}(self.${ln2}(x))
${halve}"#,
        &[
            ("plan", plan_list(spec)),
            ("pre", pre),
            ("d", spec.hidden.to_string()),
            ("ln1", p(Role::AttnNorm)),
            ("ln2", p(Role::FfnNorm)),
            ("tm", tm),
            ("cm", cm),
            ("scale", scale),
            ("halve", halve.into()),
        ],
    )
}

/// RWKV's time and channel mixing, the WKV sums written as the recurrence, token after token.
fn rwkv_classes(spec: &Spec, n: &Names) -> String {
    let Some(r) = spec.rwkv else {
        unreachable!("only RWKV draws its mixings")
    };
    let a = |role: Role| n.attr(role);
    fill(
        r#"def shifted(x, st):  # [B, T, C]: each token's predecessor, zeros before the first
    prev = torch.cat([st.get("last", torch.zeros_like(x[:, :1])), x[:, :-1]], dim=1)  # decoding: the previous call's last
    st["last"] = x[:, -1:]
    return prev


def token_mix(x, prev, mu):  # [B, T, C]: each token blended per channel with the one before it
    return x * mu + prev * (1 - mu)


class TimeMix(nn.Module):
    """RWKV time mixing: ${a} channels, each a decayed average of exp(key)-weighted values."""

    def __init__(self):
        super().__init__()
        self.${key} = nn.Linear(${d}, ${a}, bias=False)
        self.${value} = nn.Linear(${d}, ${a}, bias=False)
        self.${rec} = nn.Linear(${d}, ${a}, bias=False)
        self.${out} = nn.Linear(${a}, ${d}, bias=False)
        self.${decay} = nn.Parameter(torch.zeros(${a}))  # w: the sums fade by exp(-exp(w)) per token
        self.${first} = nn.Parameter(torch.zeros(${a}))  # u: the current token's bonus
        self.${mk} = nn.Parameter(torch.zeros(1, 1, ${d}))
        self.${mv} = nn.Parameter(torch.zeros(1, 1, ${d}))
        self.${mr} = nn.Parameter(torch.zeros(1, 1, ${d}))

    def forward(self, x):  # [B, T, ${d}], normed
        st = state_of(self)  # decoding: the last token and the sums of earlier calls
        prev = shifted(x, st)
        k, v = self.${key}(token_mix(x, prev, self.${mk})), self.${value}(token_mix(x, prev, self.${mv}))
        r = torch.sigmoid(self.${rec}(token_mix(x, prev, self.${mr})))
        w, u = -torch.exp(self.${decay}), self.${first}
        B_, T, _ = k.shape
        # num, den: the sums, scaled by exp(-top); top: the largest exponent so far
        num, den, top = st.get("wkv", (x.new_zeros(B_, ${a}), x.new_zeros(B_, ${a}), x.new_full((B_, ${a}), -1e38)))
        outs = []
        for t in range(T):
            kt, vt = k[:, t], v[:, t]
            m = torch.maximum(top, u + kt)
            e1, e2 = torch.exp(top - m), torch.exp(u + kt - m)
            outs.append((e1 * num + e2 * vt) / (e1 * den + e2))
            m = torch.maximum(top + w, kt)
            e1, e2 = torch.exp(top + w - m), torch.exp(kt - m)
            num, den, top = e1 * num + e2 * vt, e1 * den + e2, m
        st["wkv"] = num, den, top
        return self.${out}(r * torch.stack(outs, dim=1))


class ChannelMix(nn.Module):
    """RWKV channel mixing: sigma(r) * W_v relu(W_k x)^2, x blended with the previous token."""

    def __init__(self):
        super().__init__()
        self.${ck} = nn.Linear(${d}, ${f}, bias=False)
        self.${cr} = nn.Linear(${d}, ${d}, bias=False)
        self.${cv} = nn.Linear(${f}, ${d}, bias=False)
        self.${cmk} = nn.Parameter(torch.zeros(1, 1, ${d}))
        self.${cmr} = nn.Parameter(torch.zeros(1, 1, ${d}))

    def forward(self, x):  # [B, T, ${d}], normed
        prev = shifted(x, state_of(self))
        h = torch.square(torch.relu(self.${ck}(token_mix(x, prev, self.${cmk}))))
        return torch.sigmoid(self.${cr}(token_mix(x, prev, self.${cmr}))) * self.${cv}(h)"#,
        &[
            ("a", r.attn.to_string()),
            ("f", spec.mlp.intermediate.to_string()),
            ("d", spec.hidden.to_string()),
            ("key", a(Role::TmKey)),
            ("value", a(Role::TmValue)),
            ("rec", a(Role::TmReceptance)),
            ("out", a(Role::TmOutput)),
            ("decay", a(Role::TmDecay)),
            ("first", a(Role::TmFirst)),
            ("mk", a(Role::TmMixK)),
            ("mv", a(Role::TmMixV)),
            ("mr", a(Role::TmMixR)),
            ("ck", a(Role::Up)),
            ("cr", a(Role::CmReceptance)),
            ("cv", a(Role::Down)),
            ("cmk", a(Role::CmMixK)),
            ("cmr", a(Role::CmMixR)),
        ],
    )
}

/// Griffin's recurrent block, its RG-LRU written as the recurrence, token after token.
fn rg_lru_class(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.rg_lru.as_ref() else {
        unreachable!("only models with an RG-LRU draw it")
    };
    let a = |r: Role| n.attr(r);
    let lru = n.path(Role::LruParam);
    let lru = lru.rsplit('.').nth(1).unwrap_or("rg_lru").to_string();
    fill(
        r#"class RGLRU(nn.Module):
    """The real-gated linear recurrent unit: one state per channel, gated per block of ${bw}."""

    def __init__(self):
        super().__init__()
        self.recurrent_param = nn.Parameter(torch.zeros(${w}))  # Lambda
        self.input_gate_weight = nn.Parameter(torch.zeros(${h}, ${bw}, ${bw}))  # per block, [in, out]
        self.input_gate_bias = nn.Parameter(torch.zeros(${h}, ${bw}))
        self.recurrent_gate_weight = nn.Parameter(torch.zeros(${h}, ${bw}, ${bw}))
        self.recurrent_gate_bias = nn.Parameter(torch.zeros(${h}, ${bw}))

    def forward(self, x):  # [B, T, ${w}], the convolved input
        B_, T, _ = x.shape
        xb = x.view(B_, T, ${h}, ${bw})
        gate = lambda w, b: torch.sigmoid(torch.einsum("bthi,hio->btho", xb, w) + b).reshape(B_, T, ${w})
        i, r = gate(self.input_gate_weight, self.input_gate_bias), gate(self.recurrent_gate_weight, self.recurrent_gate_bias)
        log_a = -8.0 * r * F.softplus(self.recurrent_param)  # [B, T, ${w}]
        a = torch.exp(log_a)
        scale = torch.sqrt(1 - torch.exp(2 * log_a))
        st = state_of(self)  # decoding: the state after earlier calls
        if "h" not in st:
            scale[:, 0] = 1.0  # position 0: the state resets and the input enters whole
            a[:, 0] = 0.0
        xn = x * i * scale
        h = st.get("h", x.new_zeros(B_, ${w}))
        outs = []
        for t in range(T):
            h = a[:, t] * h + xn[:, t]
            outs.append(h)
        st["h"] = h
        return torch.stack(outs, dim=1)


class RecurrentBlock(nn.Module):
    """Griffin's recurrent block: a ${act_name} gate branch beside a convolution and the RG-LRU."""

    def __init__(self):
        super().__init__()
        self.${y} = nn.Linear(${d}, ${w})
        self.${x} = nn.Linear(${d}, ${w})
        self.${out} = nn.Linear(${w}, ${d})
        self.${conv} = nn.Conv1d(${w}, ${w}, ${k}, groups=${w}, padding=${pad})
        self.${lru} = RGLRU()

    def forward(self, x):  # [B, T, ${d}]
        y = ${act}
        u = causal_conv(self.${x}(x), self.${conv}.weight, self.${conv}.bias, state_of(self))  # the last ${k} positions
        return self.${out}(self.${lru}(u) * y)"#,
        &[
            ("w", s.width.to_string()),
            ("h", s.heads.to_string()),
            ("bw", s.block().to_string()),
            ("d", spec.hidden.to_string()),
            ("k", s.conv_kernel.to_string()),
            ("pad", (s.conv_kernel - 1).to_string()),
            ("y", a(Role::SsmZ)),
            ("x", a(Role::SsmIn)),
            ("out", a(Role::SsmOut)),
            ("conv", a(Role::SsmConv)),
            ("lru", lru),
            ("act_name", s.act.label().into()),
            (
                "act",
                act_expr(s.act, &format!("self.{}(x)", a(Role::SsmZ))),
            ),
        ],
    )
}

/// MiniMax's lightning attention, its memory written as the recurrence, token after token.
fn lightning_class(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.lightning.as_ref() else {
        unreachable!("only models with lightning attention draw it")
    };
    let a = |r: Role| n.attr(r);
    fill(
        r#"class LightningAttention(nn.Module):
    """Lightning attention: ${h} heads, each carrying a ${hd} x ${hd} memory from key to value that
    fades at a fixed rate per head; no softmax.

    transformers computes a prompt in chunks of ${block} with the stored decay tables; the
    recurrence below is the same sum.
    """

    def __init__(self):
        super().__init__()
        self.${qkv} = nn.Linear(${d}, ${qkv_rows}, bias=False)  # per head: q | k | v
        self.${gate} = nn.Linear(${d}, ${inner}, bias=False)
        self.${norm} = nn.Module()
        self.${norm}.weight = nn.Parameter(torch.ones(${inner}))  # over all heads together
        self.${out_proj} = nn.Linear(${inner}, ${d}, bias=False)
        # Stored with the weights: each head's rate, and the chunked form's decay tables.
        self.${slope} = nn.Parameter(torch.zeros(${h}, 1, 1))
        self.${qd} = nn.Parameter(torch.zeros(${h}, ${block}, 1))
        self.${kd} = nn.Parameter(torch.zeros(${h}, ${block}, 1))
        self.${dd} = nn.Parameter(torch.zeros(1, ${h}, ${block}, ${block}))

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        qkv = ${act}.view(B_, T, ${h}, ${three_hd})
        q, k, v = qkv.split(${hd}, dim=-1)  # each [B, T, ${h}, ${hd}]
        fade = torch.exp(-self.${slope})  # [${h}, 1, 1]
        st = state_of(self)  # decoding: the memory after earlier calls
        state = st.get("memory", x.new_zeros(B_, ${h}, ${hd}, ${hd}))
        outs = []
        for t in range(T):
            state = fade * state + k[:, t, :, :, None] * v[:, t, :, None, :]
            outs.append((state * q[:, t, :, :, None]).sum(-2))  # q . S per head
        st["memory"] = state
        o = torch.stack(outs, dim=1).reshape(B_, T, ${inner})
        o = self.${norm}.weight * (o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + ${eps}))
        return self.${out_proj}(torch.sigmoid(self.${gate}(x)) * o)"#,
        &[
            ("h", s.heads.to_string()),
            ("hd", s.head_dim.to_string()),
            ("three_hd", (3 * s.head_dim).to_string()),
            ("block", s.block.to_string()),
            ("d", spec.hidden.to_string()),
            ("inner", s.inner().to_string()),
            ("qkv_rows", (3 * s.inner()).to_string()),
            ("qkv", a(Role::SsmIn)),
            ("gate", a(Role::SsmZ)),
            ("norm", a(Role::SsmNorm)),
            ("out_proj", a(Role::SsmOut)),
            ("slope", a(Role::LightSlope)),
            ("qd", a(Role::LightQDecay)),
            ("kd", a(Role::LightKDecay)),
            ("dd", a(Role::LightDiagDecay)),
            (
                "act",
                act_expr(s.act, &format!("self.{}(x)", a(Role::SsmIn))),
            ),
            ("eps", fmt_f(s.eps)),
        ],
    )
}

/// Gated DeltaNet, its memory written as the recurrence, token after token.
fn gated_delta_net(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.delta.as_ref() else {
        unreachable!("only models with a Gated DeltaNet draw one")
    };
    if s.channel_decay() {
        return kimi_delta_attention(spec, s, n);
    }
    let (kh, vh, dk, dv, r) = (
        s.key_heads,
        s.value_heads,
        s.key_dim,
        s.value_dim,
        s.ratio(),
    );
    let d = spec.hidden;
    let (inp, conv) = (n.attr(Role::SsmIn), n.attr(Role::SsmConv));
    let (projections, split) = match s.store {
        DeltaStore::Kimi | DeltaStore::Bailing => unreachable!("drawn by kimi_delta_attention"),
        DeltaStore::Grouped => {
            let ba = n.attr(Role::SsmBa);
            (
                format!("        self.{inp} = nn.Linear({d}, {}, bias=False)  # per key head: q, k, its {r} value heads' v, their z\n        self.{ba} = nn.Linear({d}, {}, bias=False)  # per key head: its value heads' beta, then alpha\n", 2 * s.keys() + 2 * s.values(), 2 * vh),
                format!("        p = self.{inp}(x).view(B_, T, {kh}, {})\n        q, k, v, z = p.split([{dk}, {dk}, {rdv}, {rdv}], dim=-1)\n        u = torch.cat([q.reshape(B_, T, -1), k.reshape(B_, T, -1), v.reshape(B_, T, -1)], dim=-1)\n        z = z.reshape(B_, T, {vh}, {dv})\n        beta, alpha = self.{ba}(x).view(B_, T, {kh}, {two_r}).split([{r}, {r}], dim=-1)\n        beta, alpha = beta.reshape(B_, T, {vh}), alpha.reshape(B_, T, {vh})\n", 2 * dk + 2 * r * dv, rdv = r * dv, two_r = 2 * r),
            )
        }
        DeltaStore::Separate => {
            let (z, b, a) = (
                n.attr(Role::SsmZ),
                n.attr(Role::SsmBeta),
                n.attr(Role::SsmAlpha),
            );
            (
                format!("        self.{inp} = nn.Linear({d}, {}, bias=False)  # q | k | v\n        self.{z} = nn.Linear({d}, {}, bias=False)\n        self.{b} = nn.Linear({d}, {vh}, bias=False)\n        self.{a} = nn.Linear({d}, {vh}, bias=False)\n", s.conv_dim(), s.values()),
                format!("        u = self.{inp}(x)\n        z = self.{z}(x).view(B_, T, {vh}, {dv})\n        beta, alpha = self.{b}(x), self.{a}(x)\n"),
            )
        }
        DeltaStore::Fused => (
            format!("        self.{inp} = nn.Linear({d}, {}, bias=False)  # q | k | v | z | beta | alpha\n", s.conv_dim() + s.values() + 2 * vh),
            format!("        u, z, beta, alpha = self.{inp}(x).split([{}, {}, {vh}, {vh}], dim=-1)\n        z = z.reshape(B_, T, {vh}, {dv})\n", s.conv_dim(), s.values()),
        ),
        DeltaStore::Olmo => {
            let a = |r: Role| n.attr(r);
            let (q, k, v, z, b, al) = (
                a(Role::SsmQ),
                a(Role::SsmK),
                a(Role::SsmV),
                a(Role::SsmZ),
                a(Role::SsmBeta),
                a(Role::SsmAlpha),
            );
            (
                format!("        self.{q} = nn.Linear({d}, {keys}, bias=False)\n        self.{k} = nn.Linear({d}, {keys}, bias=False)\n        self.{v} = nn.Linear({d}, {values}, bias=False)\n        self.{z} = nn.Linear({d}, {values}, bias=False)  # the output gate\n        self.{b} = nn.Linear({d}, {vh}, bias=False)\n        self.{al} = nn.Linear({d}, {vh}, bias=False)\n", keys = s.keys(), values = s.values()),
                format!("        u = torch.cat([self.{q}(x), self.{k}(x), self.{v}(x)], dim=-1)\n        z = self.{z}(x).view(B_, T, {vh}, {dv})\n        beta, alpha = self.{b}(x), self.{al}(x)\n"),
            )
        }
    };
    // One convolution over Q, K and V, or one stored for each (their channels side by side).
    let k = s.conv_kernel;
    let (conv_init, convolve) = if s.split_qkv() {
        let (cq, ck, cv) = (
            n.attr(Role::SsmConvQ),
            n.attr(Role::SsmConvK),
            n.attr(Role::SsmConvV),
        );
        (
            format!("        conv = lambda ch: nn.Conv1d(ch, ch, {k}, groups=ch, padding={}, bias=False)\n        self.{cq}, self.{ck}, self.{cv} = conv({keys}), conv({keys}), conv({values})\n", k - 1, keys = s.keys(), values = s.values()),
            format!("        w = torch.cat([self.{cq}.weight, self.{ck}.weight, self.{cv}.weight])  # one convolution over the three\n        u = F.silu(causal_conv(u, w, None, st))  # the last {k} positions\n"),
        )
    } else {
        (
            format!("        self.{conv} = nn.Conv1d({ch}, {ch}, {k}, groups={ch}, padding={}, bias=False)\n", k - 1, ch = s.conv_dim()),
            format!("        u = F.silu(causal_conv(u, self.{conv}.weight, None, st))  # the last {k} positions\n"),
        )
    };
    let beta = if s.beta_scale == 1.0 {
        "torch.sigmoid(beta.float())".to_string()
    } else {
        format!(
            "{} * torch.sigmoid(beta.float())  # past 1, the update overshoots",
            s.beta_scale
        )
    };
    fill(
        r#"class GatedDeltaNet(nn.Module):
    """Gated DeltaNet: ${vh} value heads, each carrying a ${dk} x ${dv} memory from key to value.

    transformers computes a prompt in chunks of 64; the recurrence below is the same sum.
    """

    def __init__(self):
        super().__init__()
${projections}${conv_init}        self.${dt_bias} = nn.Parameter(torch.ones(${vh}))
        self.${a_log} = nn.Parameter(torch.zeros(${vh}))  # decay rates, A = exp(A_log)
        self.${norm} = nn.Module()
        self.${norm}.weight = nn.Parameter(torch.ones(${dv}))  # shared by the heads
        self.${out_proj} = nn.Linear(${values}, ${d}, bias=False)

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        st = state_of(self)  # decoding: the conv inputs and memory of earlier calls
${split}${convolve}        q, k, v = u.float().split([${keys}, ${keys}, ${values}], dim=-1)
        l2 = lambda t: t * torch.rsqrt((t * t).sum(-1, keepdim=True) + 1e-6)  # each head to unit length
        q = l2(q.view(B_, T, ${kh}, ${dk})).repeat_interleave(${r}, dim=2) / ${dk} ** 0.5  # each value head its key head's
        k = l2(k.view(B_, T, ${kh}, ${dk})).repeat_interleave(${r}, dim=2)
        v = v.view(B_, T, ${vh}, ${dv})
        beta = ${beta}  # [B, T, ${vh}]
        g = -torch.exp(self.${a_log}.float()) * F.softplus(alpha.float() + self.${dt_bias})  # log decay
        state = st.get("memory", x.new_zeros(B_, ${vh}, ${dk}, ${dv}, dtype=torch.float32))
        outs = []
        for t in range(T):
            state = state * torch.exp(g[:, t])[..., None, None]
            recall = (state * k[:, t, :, :, None]).sum(-2)  # what each head's memory holds for k
            state = state + k[:, t, :, :, None] * ((v[:, t] - recall) * beta[:, t, :, None])[..., None, :]
            outs.append((state * q[:, t, :, :, None]).sum(-2))
        st["memory"] = state
        o = torch.stack(outs, dim=1)  # [B, T, ${vh}, ${dv}]
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + ${eps})  # RMS per head
        o = self.${norm}.weight * o.to(x.dtype) * ${gate}(z.float()).to(x.dtype)
        return self.${out_proj}(o.reshape(B_, T, ${values}))"#,
        &[
            ("vh", vh.to_string()),
            ("kh", kh.to_string()),
            ("dk", dk.to_string()),
            ("dv", dv.to_string()),
            ("r", r.to_string()),
            ("d", d.to_string()),
            ("keys", s.keys().to_string()),
            ("values", s.values().to_string()),
            ("eps", fmt_f(s.eps)),
            ("projections", projections),
            ("split", split),
            ("conv_init", conv_init),
            ("convolve", convolve),
            ("beta", beta),
            // Qwen4-Exp's "sigmoid" output gate, or SiLU.
            (
                "gate",
                if s.sigmoid_gate {
                    "torch.sigmoid"
                } else {
                    "F.silu"
                }
                .into(),
            ),
            ("dt_bias", n.attr(Role::SsmDtBias)),
            ("a_log", n.attr(Role::SsmALog)),
            ("norm", n.attr(Role::SsmNorm)),
            ("out_proj", n.attr(Role::SsmOut)),
        ],
    )
}

/// Kimi Delta Attention: the delta rule with a decay per key channel and a sigmoid output gate.
fn kimi_delta_attention(spec: &Spec, s: &DeltaNet, n: &Names) -> String {
    let (h, dk, dv) = (s.value_heads, s.key_dim, s.value_dim);
    let a = |r: Role| n.attr(r);
    fill(
        r#"class KimiDeltaAttention(nn.Module):
    """Kimi Delta Attention: ${h} heads, each carrying a ${dk} x ${dv} memory from key to value,
    each key channel of it decaying at its own rate.

    transformers computes a prompt in chunks of 64; the recurrence below is the same sum.
    """

    def __init__(self):
        super().__init__()
        self.${q} = nn.Linear(${d}, ${keys}, bias=False)
        self.${k} = nn.Linear(${d}, ${keys}, bias=False)
        self.${v} = nn.Linear(${d}, ${values}, bias=False)
        conv = lambda ch: nn.Conv1d(ch, ch, ${kernel}, groups=ch, padding=${pad}, bias=False)
        self.${cq}, self.${ck}, self.${cv} = conv(${keys}), conv(${keys}), conv(${values})
${gates_init}        self.${dt_bias} = nn.Parameter(torch.zeros(${keys}))  # one per key channel
        self.${a_log} = nn.Parameter(torch.zeros(${a_shape}))  # decay rates per head, A = exp(A_log)
        self.${b} = nn.Linear(${d}, ${h}, bias=False)
        self.${norm} = nn.Module()
        self.${norm}.weight = nn.Parameter(torch.ones(${dv}))  # shared by the heads
        self.${out_proj} = nn.Linear(${values}, ${d}, bias=False)

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        st = state_of(self)  # decoding: the conv inputs and memory of earlier calls
        conv = lambda c, u, key: F.silu(causal_conv(u, c.weight, None, st, key))  # the last ${kernel} positions
        q = conv(self.${cq}, self.${q}(x), "q").float().view(B_, T, ${h}, ${dk})
        k = conv(self.${ck}, self.${k}(x), "k").float().view(B_, T, ${h}, ${dk})
        v = conv(self.${cv}, self.${v}(x), "v").float().view(B_, T, ${h}, ${dv})
        l2 = lambda t: t / torch.sqrt((t * t).sum(-1, keepdim=True) + 1e-6)  # each head to unit length
        q, k = l2(q) / ${dk} ** 0.5, l2(k)
        beta = torch.sigmoid(self.${b}(x).float())  # [B, T, ${h}]
        f = (${f} + self.${dt_bias}).view(B_, T, ${h}, ${dk})
        g = ${g}  # [B, T, ${h}, ${dk}]: log decay per key channel
        state = st.get("memory", x.new_zeros(B_, ${h}, ${dk}, ${dv}, dtype=torch.float32))
        outs = []
        for t in range(T):
            state = state * torch.exp(g[:, t])[..., None]  # each key channel's row decays apart
            recall = (state * k[:, t, :, :, None]).sum(-2)  # what each head's memory holds for k
            state = state + k[:, t, :, :, None] * ((v[:, t] - recall) * beta[:, t, :, None])[..., None, :]
            outs.append((state * q[:, t, :, :, None]).sum(-2))
        st["memory"] = state
        o = torch.stack(outs, dim=1)  # [B, T, ${h}, ${dv}]
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + ${eps})  # RMS per head
        gate = ${gate}.float().view(B_, T, ${h}, ${dv})
        o = (self.${norm}.weight * o * torch.sigmoid(gate)).to(x.dtype)
        return self.${out_proj}(o.reshape(B_, T, ${values}))"#,
        &[
            ("h", h.to_string()),
            ("dk", dk.to_string()),
            ("dv", dv.to_string()),
            ("d", spec.hidden.to_string()),
            ("kernel", s.conv_kernel.to_string()),
            ("pad", (s.conv_kernel - 1).to_string()),
            ("keys", s.keys().to_string()),
            ("values", s.values().to_string()),
            ("eps", fmt_f(s.eps)),
            ("q", a(Role::SsmQ)),
            ("k", a(Role::SsmK)),
            ("v", a(Role::SsmV)),
            ("cq", a(Role::SsmConvQ)),
            ("ck", a(Role::SsmConvK)),
            ("cv", a(Role::SsmConvV)),
            ("b", a(Role::SsmBeta)),
            (
                "gates_init",
                if s.store == DeltaStore::Kimi {
                    format!("        self.{fa} = nn.Linear({d}, {dk}, bias=False)  # the forget gate, through rank {dk}\n        self.{fb} = nn.Linear({dk}, {keys}, bias=False)\n        self.{ga} = nn.Linear({d}, {dk}, bias=False)  # the output gate, through rank {dk}\n        self.{gb} = nn.Linear({dk}, {values}, bias=False)\n", fa = a(Role::SsmFA), fb = a(Role::SsmFB), ga = a(Role::SsmGA), gb = a(Role::SsmGB), d = spec.hidden, keys = s.keys(), values = s.values())
                } else {
                    format!("        self.{f} = nn.Linear({d}, {keys}, bias=False)  # the forget gate's step\n        self.{g} = nn.Linear({d}, {values}, bias=False)  # the output gate\n", f = a(Role::SsmFB), g = a(Role::SsmGB), d = spec.hidden, keys = s.keys(), values = s.values())
                },
            ),
            (
                "a_shape",
                if s.store == DeltaStore::Kimi {
                    format!("1, 1, {h}, 1")
                } else {
                    h.to_string()
                },
            ),
            (
                "f",
                if s.store == DeltaStore::Kimi {
                    format!("self.{}(self.{}(x)).float()", a(Role::SsmFB), a(Role::SsmFA))
                } else {
                    format!("self.{}(x).float()", a(Role::SsmFB))
                },
            ),
            (
                "gate",
                if s.store == DeltaStore::Kimi {
                    format!("self.{}(self.{}(x))", a(Role::SsmGB), a(Role::SsmGA))
                } else {
                    format!("self.{}(x)", a(Role::SsmGB))
                },
            ),
            (
                "g",
                match s.gate_floor {
                    Some(floor) => format!(
                        "{} * torch.sigmoid(torch.exp(self.{}.float()).view({h}, 1) * f)  # bounded below",
                        fmt_f(floor),
                        a(Role::SsmALog)
                    ),
                    None => format!(
                        "-torch.exp(self.{}.float()).view({h}, 1) * F.softplus(f)",
                        a(Role::SsmALog)
                    ),
                },
            ),
            ("dt_bias", a(Role::SsmDtBias)),
            ("a_log", a(Role::SsmALog)),
            ("norm", a(Role::SsmNorm)),
            ("out_proj", a(Role::SsmOut)),
        ],
    )
}

/// Mamba's selective scan (S6), written as the recurrence, token after token.
fn mamba(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.s6.as_ref() else {
        unreachable!("only models with Mamba's scan draw one")
    };
    let (i, st, r, k) = (s.inner, s.state, s.dt_rank, s.conv_kernel);
    let (norms, norm_init) = match s.bcdt_norm {
        Some(b) if b.weighted => {
            let (dn, bn, cn) = (
                n.attr(Role::SsmDtNorm),
                n.attr(Role::SsmBNorm),
                n.attr(Role::SsmCNorm),
            );
            (
                format!("        step, b, c = self.{dn}(step), self.{bn}(b), self.{cn}(c)\n"),
                format!("        self.{dn} = Norm({r}, eps={eps})  # the step's input, B and C normed\n        self.{bn} = Norm({st}, eps={eps})\n        self.{cn} = Norm({st}, eps={eps})\n", eps = fmt_f(b.eps)),
            )
        }
        Some(b) => (
            format!(
                "        rms = lambda v: v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + {})  # no weight\n        step, b, c = rms(step), rms(b), rms(c)\n",
                fmt_f(b.eps)
            ),
            String::new(),
        ),
        None => (String::new(), String::new()),
    };
    fill(
        r#"class Mamba(nn.Module):
    """Mamba's selective scan: ${i} channels, each carrying a ${st}-wide state from token to token."""

    def __init__(self):
        super().__init__()
        self.${in_proj} = nn.Linear(${d}, ${two_i}, bias=${bias})  # x, then the gate z
        self.${conv1d} = nn.Conv1d(${i}, ${i}, ${k}, groups=${i}, padding=${pad}, bias=${conv_bias})
        self.${x_proj} = nn.Linear(${i}, ${sel}, bias=False)  # the step's input, B, C
        self.${dt_proj} = nn.Linear(${r}, ${i})  # a step per channel
${norm_init}        self.${a_log} = nn.Parameter(torch.zeros(${i}, ${st}))  # decay rates, A = -exp(A_log)
        self.${skip} = nn.Parameter(torch.ones(${i}))
        self.${out_proj} = nn.Linear(${i}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        st = state_of(self)  # decoding: the conv inputs and state of earlier calls
        xs, z = self.${in_proj}(x).chunk(2, dim=-1)
        xs = F.silu(causal_conv(xs, self.${conv1d}.weight, self.${conv1d}.bias, st))  # the last ${k} positions
        step, b, c = self.${x_proj}(xs).split([${r}, ${st}, ${st}], dim=-1)
${norms}        dt = F.softplus(self.${dt_proj}(step)).float()  # [B, T, ${i}]
        a = -torch.exp(self.${a_log}.float())  # [${i}, ${st}]
        xs, b, c = xs.float(), b.float(), c.float()
        state = st.get("ssm", x.new_zeros(B_, ${i}, ${st}, dtype=torch.float32))
        ys = []
        for t in range(T):
            state = torch.exp(dt[:, t, :, None] * a) * state + (dt[:, t] * xs[:, t])[..., None] * b[:, t, None, :]
            ys.append((state * c[:, t, None, :]).sum(-1) + self.${skip} * xs[:, t])
        st["ssm"] = state
        y = torch.stack(ys, dim=1) * F.silu(z.float())  # gated by z
        return self.${out_proj}(y.to(x.dtype))"#,
        &[
            ("i", i.to_string()),
            ("two_i", (2 * i).to_string()),
            ("st", st.to_string()),
            ("r", r.to_string()),
            ("k", k.to_string()),
            ("pad", (k - 1).to_string()),
            ("sel", (r + 2 * st).to_string()),
            ("d", spec.hidden.to_string()),
            ("norms", norms),
            ("norm_init", norm_init),
            ("bias", py_bool(s.bias)),
            ("conv_bias", py_bool(s.conv_bias)),
            ("in_proj", n.attr(Role::SsmIn)),
            ("conv1d", n.attr(Role::SsmConv)),
            ("x_proj", n.attr(Role::SsmX)),
            ("dt_proj", n.attr(Role::SsmDt)),
            ("a_log", n.attr(Role::SsmALog)),
            ("skip", n.attr(Role::SsmD)),
            ("out_proj", n.attr(Role::SsmOut)),
        ],
    )
}

/// Mamba2's mixer, its scan written as the recurrence, token after token.
fn mamba2(spec: &Spec, n: &Names) -> String {
    let Some(s) = spec.ssm.as_ref() else {
        unreachable!("only models with a state-space mixer draw one")
    };
    let (h, p, st, g, k) = (s.heads, s.head_dim, s.state, s.groups, s.conv_kernel);
    let (inner, conv) = (s.inner(), s.conv_dim());
    fill(
        r#"class Mamba2(nn.Module):
    """Mamba2's mixer: ${h} heads, each carrying a ${p} x ${st} state from token to token.

    transformers computes a prompt in chunks (SSD); the recurrence below is the same sum.
    """

    def __init__(self):
        super().__init__()
        self.${in_proj} = nn.Linear(${d}, ${proj}, bias=${bias})  # z, then x | B | C, then a step per head
        self.${conv1d} = nn.Conv1d(${conv}, ${conv}, ${k}, groups=${conv}, padding=${pad}, bias=${conv_bias})
        self.${dt_bias} = nn.Parameter(torch.zeros(${h}))
        self.${a_log} = nn.Parameter(torch.zeros(${h}))  # decay rates, A = -exp(A_log)
        self.${skip} = nn.Parameter(torch.ones(${h}))
${norm_init}        self.${out_proj} = nn.Linear(${inner}, ${d}, bias=${bias})

    def forward(self, x):  # [B, T, ${d}]
        B_, T, _ = x.shape
        p = self.${in_proj}(x)${part_mults}
        z, xbc, dt = p.split([${inner}, ${conv}, ${h}], dim=-1)
        st = state_of(self)  # decoding: the conv inputs and state of earlier calls
        xbc = F.silu(causal_conv(xbc, self.${conv1d}.weight, self.${conv1d}.bias, st))  # the last ${k} positions
        xs, b, c = xbc.split([${inner}, ${gn}, ${gn}], dim=-1)
        xs = xs.view(B_, T, ${h}, ${p}).float()
        b = b.view(B_, T, ${g}, ${st}).float().repeat_interleave(${per_group}, dim=2)  # each head its group's B
        c = c.view(B_, T, ${g}, ${st}).float().repeat_interleave(${per_group}, dim=2)
        dt = F.softplus(dt.float() + self.${dt_bias})${floor}  # [B, T, ${h}]
        a = -torch.exp(self.${a_log}.float())  # [${h}]
        state = st.get("ssm", x.new_zeros(B_, ${h}, ${p}, ${st}, dtype=torch.float32))
        ys = []
        for t in range(T):
            decay = torch.exp(dt[:, t] * a)[..., None, None]  # [B, ${h}, 1, 1]
            state = decay * state + (dt[:, t, :, None] * xs[:, t])[..., None] * b[:, t, :, None, :]
            ys.append((state * c[:, t, :, None, :]).sum(-1) + self.${skip}[:, None] * xs[:, t])
        st["ssm"] = state
        y = torch.stack(ys, dim=1).reshape(B_, T, ${inner})
${gate}        return self.${out_proj}(y)"#,
        &[
            ("h", h.to_string()),
            ("p", p.to_string()),
            ("st", st.to_string()),
            ("g", g.to_string()),
            ("k", k.to_string()),
            ("pad", (k - 1).to_string()),
            ("d", spec.hidden.to_string()),
            ("inner", inner.to_string()),
            ("conv", conv.to_string()),
            ("gn", (g * st).to_string()),
            ("proj", s.in_proj().to_string()),
            ("per_group", (h / g).to_string()),
            ("per_norm", (inner / g).to_string()),
            (
                "norm_init",
                if s.gate.normed() {
                    format!("        self.{norm} = nn.Module()\n        self.{norm}.weight = nn.Parameter(torch.ones({inner}))\n", norm = n.attr(Role::SsmNorm))
                } else {
                    String::new()
                },
            ),
            (
                "part_mults",
                if s.part_mults == [1.0; 5] {
                    String::new()
                } else {
                    let m: Vec<String> = s.part_mults.iter().map(|&x| fmt_f(x)).collect();
                    let gn = g * st;
                    format!(" * torch.tensor([{}]).repeat_interleave(torch.tensor([{inner}, {inner}, {gn}, {gn}, {h}]))  # z, x, B, C, dt scaled (muP)", m.join(", "))
                },
            ),
            ("gate", {
                let rms = format!("        y = y.view(B_, T, {g}, {per})\n        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + {eps})  # RMS per group\n        y = self.{norm}.weight * y.view(B_, T, {inner}).to(x.dtype)\n", per = inner / g, eps = fmt_f(s.eps), norm = n.attr(Role::SsmNorm));
                let gated = "        y = y * F.silu(z.float())  # gated by z\n";
                match s.gate {
                    SsmGate::NormAfter => format!("{gated}{rms}"),
                    SsmGate::NormBefore => format!("{rms}{gated}"),
                    SsmGate::Plain => format!("{gated}        y = y.to(x.dtype)\n"),
                }
            }),
            (
                "floor",
                if s.dt_floor > 0.0 {
                    format!(".clamp(min={})", fmt_f(s.dt_floor))
                } else {
                    String::new()
                },
            ),
            ("bias", py_bool(s.bias)),
            ("conv_bias", py_bool(s.conv_bias)),
            ("in_proj", n.attr(Role::SsmIn)),
            ("conv1d", n.attr(Role::SsmConv)),
            ("dt_bias", n.attr(Role::SsmDtBias)),
            ("a_log", n.attr(Role::SsmALog)),
            ("skip", n.attr(Role::SsmD)),
            ("out_proj", n.attr(Role::SsmOut)),
        ],
    )
}

fn embedding_note(spec: &Spec, n: &Names) -> String {
    let (v, d, w) = (spec.vocab, spec.hidden, spec.embed_width());
    let embed = n.attr(Role::Embed);
    let mut s = format!("# In the model (see the whole module): the token embedding, one row per id.\nembed_tokens = nn.Embedding({v}, {w})  # stored as {}\n", n.path(Role::Embed));
    if spec.embedding.projected.is_some() {
        s += &format!(
            "project_in = nn.Linear({w}, {d}, bias=False)  # the table's width to the hidden size, stored as {}\n",
            n.path(Role::EmbedProjIn)
        );
    }
    if let Some(p) = spec.embedding.learned_positions {
        s += &format!(
            "positions = nn.Embedding({p}, {d})  # learned absolute positions, stored as {}\n",
            n.path(Role::PosEmbed)
        );
    }
    if let Some(p) = spec.prompt {
        s += &format!(
            "segments = nn.Embedding({}, {d})  # one row per segment, stored as {}\n",
            p.segments,
            n.path(Role::SegmentEmbed)
        );
        s += &format!(
            "\n\ndef embed(input_ids):  # [B, T] int64 -> [B, {len} + T, {d}]\n    prompt = torch.arange({first}, {first} + {len}).expand(input_ids.shape[0], {len})  # the learned prompt's rows\n    input_ids = torch.cat([prompt, input_ids], 1)\n    segment = torch.where(torch.arange(input_ids.shape[1]) < {len}, {ps}, {ts})  # the prompt's segment, then the text's\n    x = {embed}(input_ids) + segments(segment)\n",
            len = p.length,
            first = p.row(spec.out_vocab(), 0),
            ps = crate::spec::PROMPT_SEGMENT,
            ts = crate::spec::TEXT_SEGMENT,
        );
    } else {
        s += &format!(
            "\n\ndef embed(input_ids):  # [B, T] int64 -> [B, T, {d}]\n    x = {embed}(input_ids)\n"
        );
    }
    if spec.embedding.projected.is_some() {
        s += &format!("    x = project_in(x)  # [B, T, {w}] -> [B, T, {d}]\n");
    }
    let norm = format!(
        "embed_norm(x)  # a norm right after the lookup, stored as {}",
        n.path(Role::EmbedNorm)
    );
    for line in embed_lines(spec, "positions", "input_ids.shape[1]", &norm) {
        s += &format!("    {line}\n");
    }
    s + "    return x"
}

/// What follows the token lookup, as lines of Python over `x`, in transformers' order: the
/// token embeddings scaled, then positions added (learned, from the module `positions`, or
/// sinusoids), then the embedding norm (`norm`, an expression over x).
fn embed_lines(spec: &Spec, positions: &str, len: &str, norm: &str) -> Vec<String> {
    let d = spec.hidden;
    let mut out = Vec::new();
    if spec.embedding.scale_by_sqrt_hidden {
        out.push(format!(
            "x = x * torch.tensor({d} ** 0.5, dtype=x.dtype)  # scaled by sqrt(d_model)"
        ));
    }
    if spec.embedding.multiplier != 1.0 {
        out.push(format!(
            "x = x * {}  # embedding multiplier",
            spec.embedding.multiplier
        ));
    }
    let offset = match spec.embedding.position_offset {
        0 => String::new(),
        o => format!(" + {o}"),
    };
    if spec.embedding.learned_positions.is_some() {
        out.push(format!(
            "x = x + {positions}(torch.arange({len}, device=x.device){offset})"
        ));
    }
    let from = if offset.is_empty() {
        String::new()
    } else {
        format!(", read from row p{offset}")
    };
    match spec.position {
        Position::Sinusoidal(crate::spec::Sinusoids::Fairseq) => {
            let den = (d / 2).max(2) - 1;
            out.push(format!("# fixed sinusoids: row r = [sin(r w_i) ..., cos(r w_i) ...], w_i = 10000^(-i / {den}){from}"));
            out.push(format!(
                "freqs = torch.exp(torch.arange({}, device=x.device).float() * (-math.log(10000) / {den}))",
                d / 2
            ));
            out.push(format!(
                "ang = (torch.arange({len}, device=x.device).float(){offset})[:, None] * freqs[None, :]"
            ));
            out.push(format!(
                "x = x + F.pad(torch.cat([ang.sin(), ang.cos()], -1), (0, {})).to(x.dtype)",
                d % 2
            ));
        }
        Position::Sinusoidal(crate::spec::Sinusoids::Ctrl) => {
            out.push(format!("# CTRL's fixed sinusoids: row r = [sin(r w_i) ..., cos(r w_i) ...], w_i = 10000^(-2i / {d}){from}"));
            out.push(format!(
                "freqs = 10000.0 ** (-2 * torch.arange({}, device=x.device).float() / {d})",
                d.div_ceil(2)
            ));
            out.push(format!(
                "ang = (torch.arange({len}, device=x.device).float(){offset})[:, None] * freqs[None, :]"
            ));
            out.push(format!(
                "x = x + torch.cat([ang.sin(), ang[:, :{}].cos()], -1).to(x.dtype)",
                d / 2
            ));
        }
        // Learned positions are added above; RoPE, ALiBi and bucketed biases act inside
        // attention.
        Position::Learned
        | Position::Rope(_)
        | Position::Alibi(_)
        | Position::None
        | Position::Buckets(_) => {}
    }
    if spec.embedding.norm {
        out.push(format!("x = {norm}"));
    }
    out
}

fn model(spec: &Spec, n: &Names) -> String {
    let (v, d) = (spec.vocab, spec.hidden);
    // The decoder's own module (`model`, `transformer`) and the attributes in it.
    // (`model.decoder` for OPT, whose module is one level further down).
    // The decoder is the module holding the layers; its tensors are named below it
    // (ModernBERT's `embeddings.tok_embeddings`, one module further down).
    let (mut outer, mut layers) = n.layers.rsplit_once('.').unwrap_or(("model", "layers"));
    // The embedding beside the layers' module rather than in it (GIT's `git.embeddings` beside
    // `git.encoder.layer`): the decoder is the module holding both.
    let embed_path = n.path(Role::Embed);
    if !embed_path.starts_with(&format!("{outer}.")) {
        if let Some((common, _)) = embed_path.split_once('.').filter(|(c, _)| {
            n.layers.starts_with(&format!("{c}.")) && n.layers.matches('.').count() > 1
        }) {
            outer = common;
            layers = &n.layers[common.len() + 1..];
        }
    }
    let inside = |role: Role| -> String {
        let p = n.path(role);
        p.strip_prefix(&format!("{outer}.")).map_or_else(
            || p.rsplit('.').next().unwrap_or(&p).to_string(),
            str::to_string,
        )
    };
    let embed = inside(Role::Embed);
    let final_norm = inside(Role::FinalNorm);
    let outer_init = match outer.rsplit_once('.') {
        Some((holder, _)) => {
            format!("        self.{holder} = nn.Module()\n        self.{outer} = Decoder()")
        }
        None => format!("        self.{outer} = Decoder()"),
    };
    let mut init = match embed.rsplit_once('.') {
        Some((holder, _)) => format!("        self.{holder} = nn.Module()\n"),
        None => String::new(),
    };
    let width = spec.embed_width();
    init += &format!("        self.{embed} = nn.Embedding({v}, {width})\n");
    // OPT-350M's table of its own width: projected in after the lookup, out after the last layer.
    let projections = spec
        .embedding
        .projected
        .map(|_| (inside(Role::EmbedProjIn), inside(Role::EmbedProjOut)));
    if let Some((pin, pout)) = &projections {
        init += &format!("        self.{pin} = nn.Linear({width}, {d}, bias=False)  # the table's width to the hidden size\n        self.{pout} = nn.Linear({d}, {width}, bias=False)  # and back, for the head\n");
    }
    let mut fwd = String::new();
    if let Some(p) = spec.prompt {
        let seg = inside(Role::SegmentEmbed);
        init += &format!(
            "        self.{seg} = nn.Embedding({}, {d})  # one row per segment\n",
            p.segments
        );
        fwd += &format!(
            "        P = {len}  # the learned prompt's tokens, put before the text\n        prompt = torch.arange({first}, {first} + P, device=input_ids.device).expand(input_ids.shape[0], P)  # their rows of the embedding\n        input_ids = torch.cat([prompt, input_ids], 1)  # [B, P + T]\n        T = T + P\n        segment = torch.where(torch.arange(T, device=input_ids.device) < P, {ps}, {ts})  # each position's segment\n",
            len = p.length,
            first = p.row(spec.out_vocab(), 0),
            ps = crate::spec::PROMPT_SEGMENT,
            ts = crate::spec::TEXT_SEGMENT,
        );
    }
    fwd += &format!("        x = self.{embed}(input_ids)  # [B, T, {width}]\n");
    if let Some((pin, _)) = &projections {
        fwd += &format!("        x = self.{pin}(x)  # [B, T, {d}]\n");
    }
    if spec.prompt.is_some() {
        fwd += &format!(
            "        x = x + self.{}(segment)  # + the embedding of each position's segment\n",
            inside(Role::SegmentEmbed)
        );
    }
    let mut pos_attr = String::new();
    if let Some(p) = spec.embedding.learned_positions {
        let pos = inside(Role::PosEmbed);
        init +=
            &format!("        self.{pos} = nn.Embedding({p}, {d})  # learned absolute positions\n");
        pos_attr = format!("self.{pos}");
    }
    let mut norm = String::new();
    if spec.embedding.norm
        && n.path(Role::EmbedNorm)
            .starts_with(&format!("{}.0.", n.layers))
    {
        // Held by layer 0 (RWKV's `pre_ln`).
        let attr = n.path(Role::EmbedNorm);
        let attr = attr.rsplit('.').next().unwrap_or(&attr);
        norm = format!("self.{layers}[0].{attr}(x)");
    } else if spec.embedding.norm {
        let attr = inside(Role::EmbedNorm);
        init += &format!("        self.{attr} = Norm({d})  # right after the lookup\n");
        norm = format!("self.{attr}(x)");
    }
    for line in embed_lines(spec, &pos_attr, "T", &norm) {
        fwd += &format!("        {line}\n");
    }
    if spec.embedding.affine {
        let (s, sh) = (inside(Role::EmbedScale), inside(Role::EmbedShift));
        init += &format!("        self.{s} = nn.Parameter(torch.ones({d}))\n        self.{sh} = nn.Parameter(torch.zeros({d}))\n");
        fwd += &format!(
            "        x = (x + self.{sh}) * self.{s}  # shifted and scaled by learned vectors\n"
        );
    }
    if spec.hyper.is_some() || spec.gated_streams.is_some() {
        fwd += &format!("        x = x.unsqueeze(-2).expand(-1, -1, N, -1)  # [B, T, N, {d}]: every stream starts as the embedding\n");
    }
    // Gemma 4's per-layer embeddings: a table of their own and the embeddings projected.
    if let Some(p) = spec.per_layer_input {
        let (l, w) = (spec.layers, p.width);
        let (table, proj, pnorm) = (
            inside(Role::PleEmbed),
            inside(Role::PleProj),
            inside(Role::PleProjNorm),
        );
        init += &format!(
            "        self.{table} = nn.Embedding({}, {l} * {w})  # per-layer embeddings\n        self.{proj} = nn.Linear({d}, {l} * {w}, bias=False)\n        self.{pnorm} = Norm({w})\n",
            p.vocab
        );
        fwd += &format!("        ple = self.{table}(input_ids).view(*input_ids.shape, {l}, {w}) * {w} ** 0.5  # [B, T, {l}, {w}]\n        proj = self.{proj}(x).view(*x.shape[:-1], {l}, {w}) * {d} ** -0.5\n        ple = (self.{pnorm}(proj) + ple) * 2 ** -0.5  # each layer's input of its own\n");
    }
    let make = if spec
        .plan
        .iter()
        .any(|l| l.ffn == crate::spec::Ffn::Shortcut)
    {
        "DecoderLayer(*p) for p in PLAN[::2]"
    } else if own_indexers(spec).is_some() {
        "DecoderLayer(*p, i in OWN_INDEXER) for i, p in enumerate(PLAN)"
    } else if layer_needs_index(spec) {
        "DecoderLayer(*p, i) for i, p in enumerate(PLAN)"
    } else if spec.plan.iter().any(|l| !l.mixer.runs_on_text()) {
        "CrossAttentionLayer() if p[0][0] == \"cross\" else DecoderLayer(*p) for p in PLAN"
    } else {
        "DecoderLayer(*p) for p in PLAN"
    };
    if let Some((holder, _)) = layers.rsplit_once('.') {
        init += &format!("        self.{holder} = nn.Module()\n");
    }
    init += &format!("        self.{layers} = nn.ModuleList({make})\n");
    if !spec.norm.place.on_stream() && spec.gated_streams.is_none() {
        init += &format!("        self.{final_norm} = Norm({d})\n");
    }
    if let Position::Rope(r) = &spec.position {
        fwd += "        full = rope_cos_sin(rope_frequencies, T, x.dtype)\n";
        if r.sliding.is_some() {
            fwd += "        sliding = rope_cos_sin(sliding_rope_frequencies, T, x.dtype)\n";
        }
        // A hybrid's layer keeps its span itself: its recurrent layers have no attention.
        let holder = if spec.plan.iter().any(|l| l.mixer.recurrent()) {
            "layer".to_string()
        } else {
            format!("layer.{}", attn_sublayer(spec, n))
        };
        let pick = if r.sliding.is_some() {
            format!("sliding if {holder}.span[0] == \"sliding\" else full")
        } else {
            "full".to_string()
        };
        fwd += &if spec.per_layer_input.is_some() {
            format!("        for i, layer in enumerate(self.{layers}):\n            x = layer(x, {pick}, ple[:, :, i])\n")
        } else if spec.ngram_ple.is_some() {
            format!("        for layer in self.{layers}:\n            x = layer(x, {pick}, input_ids)\n")
        } else {
            format!("        for layer in self.{layers}:\n            x = layer(x, {pick})\n")
        };
    } else if let Position::Buckets(b) = spec.position {
        let table = inside(Role::PositionBias);
        init += &holders_of(std::slice::from_ref(&table));
        init += &format!(
            "        self.{table} = nn.Parameter(torch.zeros({}, {}))  # [rows, heads]: one bias per bucket (and pair of segments) and head\n",
            spec.bias_rows(b),
            spec.attn.heads
        );
        let prompt = if spec.prompt.is_some() { "P" } else { "0" };
        fwd += &format!("        bias = position_bias(self.{table}, T, {prompt})  # [1, heads, T, T], for every layer\n        for layer in self.{layers}:\n            x = layer(x, bias)\n");
    } else {
        fwd += &format!("        for layer in self.{layers}:\n            x = layer(x, None)\n");
    }
    if spec.prompt.is_some() {
        fwd += "        x = x[:, P:]  # the prompt's positions dropped\n";
    }
    // Dory: the looped layers run several times, each pass restarting from the input layers'
    // normed output.
    if let (Some(l), Position::Rope(r)) = (spec.looped, &spec.position) {
        let pick = if r.sliding.is_some() {
            format!(
                "sliding if layer.{}.span[0] == \"sliding\" else full",
                attn_sublayer(spec, n)
            )
        } else {
            "full".to_string()
        };
        let plain =
            format!("        for layer in self.{layers}:\n            x = layer(x, {pick})\n");
        let (a, b) = (l.input, l.input + l.recurrent);
        let looped = format!(
            "        for layer in self.{layers}[:{a}]:  # the input layers\n            x = layer(x, {pick})\n        x0 = self.{final_norm}(x)  # their output, normed: every pass restarts from it\n        for _ in range({}):  # the looped layers, {} passes\n            x = self.{final_norm}(x) + x0\n            for layer in self.{layers}[{a}:{b}]:\n                x = layer(x, {pick})\n        for layer in self.{layers}[{b}:]:  # the output layers\n            x = layer(x, {pick})\n",
            l.loops, l.loops
        );
        assert!(
            fwd.contains(&plain),
            "a looped model's layers run in one plain loop"
        );
        fwd = fwd.replace(&plain, &looped);
    }
    if spec.hyper.is_some() {
        let path = inside(Role::HcHeadFn);
        let (module, prefix) = super::torch_hyper::split(&path);
        init += &holders_of(std::slice::from_ref(&module));
        init += &format!("        self.{module} = StreamMix(\"{prefix}\", head=True)  # the streams weighed into one\n");
        fwd += &format!("        x, _ = self.{module}(x)  # [B, T, {d}]\n");
    }
    if spec.gated_streams.is_some() {
        let path = inside(Role::GsHeadNorm);
        let module = path
            .rsplit_once('.')
            .map_or(path.clone(), |(m, _)| m.to_string());
        init += &holders_of(std::slice::from_ref(&module));
        init +=
            &format!("        self.{module} = GatedMix(head=True)  # the streams gated into one\n");
        fwd += &format!("        x, _ = self.{module}(x)  # [B, T, {d}]\n");
    }
    let (z, mut notes) = if spec.gated_streams.is_some() {
        (
            "x".to_string(),
            vec!["no final norm: the head's mix is normed"],
        )
    } else if spec.norm.place.on_stream() {
        (
            "x".to_string(),
            vec!["no final norm: the last layer's ends the stream"],
        )
    } else {
        (format!("self.{final_norm}(x)"), vec![])
    };
    let z = match &projections {
        Some((_, pout)) => {
            notes.push("projected to the table's width");
            format!("self.{pout}({z})")
        }
        None => z,
    };
    fwd += &match notes.is_empty() {
        true => format!("        return {z}\n"),
        false => format!("        return {z}  # {}\n", notes.join("; ")),
    };
    let lm_head = n.path(Role::LmHead);
    let head = match (spec.tied, spec.head_bias) {
        (true, false) => format!(
            "        logits = h @ self.{outer}.{embed}.weight.T  # tied: the embedding matrix\n"
        ),
        (true, true) => format!(
            "        logits = h @ self.{outer}.{embed}.weight.T + self.{lm_head}.bias  # tied: the embedding matrix, and a bias of its own\n"
        ),
        (false, _) => format!("        logits = self.{lm_head}(h)\n"),
    };
    let ov = spec.out_vocab();
    // ModernBERT's prediction head: dense, activation, norm, before the LM head.
    let (transform_init, transform) = match spec.head_transform {
        Some(t) => {
            let (dense, norm) = (n.path(Role::HeadDense), n.path(Role::HeadNorm));
            let holder = dense.rsplit_once('.').map_or(String::new(), |(h, _)| {
                format!("        self.{h} = nn.Module()\n")
            });
            (
                format!(
                    "{holder}        self.{dense} = nn.Linear({d}, {d}, bias={})\n        self.{norm} = Norm({d})\n",
                    py_bool(t.bias)
                ),
                format!(
                    "        h = self.{norm}({})  # the head's own transform\n",
                    act_expr(t.act, &format!("self.{dense}(h)"))
                ),
            )
        }
        None => (String::new(), String::new()),
    };
    let head_init = transform_init
        + &if spec.tied && spec.head_bias {
            format!("        self.{lm_head} = nn.Module()\n        self.{lm_head}.bias = nn.Parameter(torch.zeros({ov}))\n")
        } else if spec.tied {
            String::new()
        } else {
            format!(
                "        self.{lm_head} = nn.Linear({width}, {ov}, bias={})\n",
                py_bool(spec.head_bias)
            )
        };
    let head = transform + &head;
    let mut head_init = head_init;
    let mut cap = String::new();
    if let Some(g) = spec.ngpt {
        let s = n.path(Role::NgptLogitScale);
        if spec.tied && !spec.head_bias {
            // A tied head still holds its logit scale.
            head_init += &format!("        self.{lm_head} = nn.Module()\n");
        }
        head_init += &format!(
            "        self.{s} = nn.Parameter(torch.full(({ov},), {}))  # a learned scale per vocabulary entry\n",
            fmt_f(g.init)
        );
        cap += &format!(
            "        logits = logits.float() * (self.{s}.float() * (1 / {}))\n",
            fmt_f(g.init)
        );
    }
    if spec.logits_mult != 1.0 {
        cap += &format!(
            "        logits = logits * {}  # logit multiplier\n",
            spec.logits_mult
        );
    }
    if let Some(c) = spec.final_softcap {
        cap += &format!("        logits = {c} * torch.tanh(logits / {c})  # final softcap\n");
    }
    if let Some(kept) = spec.logits_kept {
        cap += &format!("        logits = logits[..., :{kept}]  # the rows that pad the head past the real vocabulary dropped\n");
    }
    let mut out = fill(
        r#"class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
${init}
    def forward(self, input_ids):  # [B, T] int64 -> [B, T, ${width}] ${end}
        T = input_ids.shape[1]
${fwd}

class ${lm}(nn.Module):
    def __init__(self):
        super().__init__()
${outer_init}
${head_init}
    def forward(self, input_ids):  # [B, T] int64 -> logits [B, T, ${v}]
        h = self.${outer}(input_ids)
${head}${cap}        return logits"#,
        &[
            ("init", init),
            ("d", d.to_string()),
            ("width", width.to_string()),
            ("v", v.to_string()),
            ("fwd", fwd),
            (
                "end",
                if spec.gated_streams.is_some() {
                    "from the streams' last mix"
                } else if spec.norm.place.on_stream() {
                    "after the last layer's norm"
                } else {
                    "after the final norm"
                }
                .to_string()
                    + if projections.is_some() {
                        ", projected to the table's width"
                    } else {
                        ""
                    },
            ),
            ("outer", outer.to_string()),
            ("outer_init", outer_init),
            ("head_init", head_init),
            ("head", head),
            ("cap", cap),
            (
                "lm",
                if matches!(spec.hf_wrap, HfWrap::Prefix(_)) {
                    "LanguageModel".into()
                } else {
                    "Model".into()
                },
            ),
        ],
    );
    if let HfWrap::Prefix(module) = spec.hf_wrap {
        out += &fill(
            r#"


class Model(nn.Module):
    """The language model of a multimodal checkpoint, under its prefix."""

    def __init__(self):
        super().__init__()
        self.${prefix} = LanguageModel()

    def forward(self, input_ids):
        return self.${prefix}(input_ids)"#,
            &[("prefix", module.to_string())],
        );
    }
    if !spec.not_drawn.is_empty() {
        let parts: Vec<String> = spec
            .not_drawn
            .iter()
            .map(|p| format!("{:?}", p.prefix))
            .collect();
        out += &fill(
            r#"


def language_model_only(state_dict):
    """The checkpoint without its parts this module does not hold (${parts})."""
    return {k: v for k, v in state_dict.items() if not k.startswith((${parts},))}"#,
            &[("parts", parts.join(", "))],
        );
    }
    out
}

fn mtp(spec: &Spec) -> String {
    let d = spec.hidden;
    fill(
        r#"class MultiTokenPrediction(nn.Module):
    """Predicts the token after next from the last hidden state and the next token's embedding.
    Not used in ordinary decoding; stored in the checkpoint as layer ${layer}."""

    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(${v}, ${d})  # a stored copy of the embedding
        self.enorm, self.hnorm = Norm(${d}), Norm(${d})
        self.eh_proj = nn.Linear(2 * ${d}, ${d}, bias=False)
        self.block = DecoderLayer(("full", 0), True, True)
        self.shared_head_norm = Norm(${d})
        self.shared_head = nn.Linear(${d}, ${v}, bias=False)  # a stored copy of the LM head

    def forward(self, hidden, next_ids, rope):  # hidden: [B, T, ${d}] before the final norm
        e = self.enorm(self.embed_tokens(next_ids))
        x = self.eh_proj(torch.cat([e, self.hnorm(hidden)], dim=-1))
        return self.shared_head(self.shared_head_norm(self.block(x, rope)))"#,
        &[
            ("layer", spec.layers.to_string()),
            ("v", spec.vocab.to_string()),
            ("d", d.to_string()),
        ],
    )
}

/// Mllama's layers that cross-attend to the image: their modules as the checkpoint names them,
/// and a forward pass that a prompt without an image skips.
fn cross_layer(spec: &Spec) -> String {
    let n = Names::new(spec);
    let a = &spec.attn;
    let (d, h, kv, hd) = (spec.hidden, a.heads, a.kv_heads, a.head_dim);
    let sub = n.sublayer(Role::CrossQ);
    let attr = |r| n.attr(r);
    fill(
        r#"class CrossAttentionLayer(nn.Module):
    """A layer that cross-attends to the image: queries from the text, keys and values from the
    vision encoder's states (projected to the text width), each head's queries and keys
    RMS-normed; the attention's output, then the MLP's, join the stream through tanh gates.
    A prompt without an image skips the layer whole, as transformers does. (With a cross-
    attention mask, transformers also hides tiles from some positions and zeroes the MLP's
    output where a position sees none; here every position sees the whole image.)"""

    def __init__(self):
        super().__init__()
        self.${sub} = nn.Module()
        self.${sub}.${q} = nn.Linear(${d}, ${h} * ${hd}, bias=False)
        self.${sub}.${k} = nn.Linear(${d}, ${kv} * ${hd}, bias=False)
        self.${sub}.${v} = nn.Linear(${d}, ${kv} * ${hd}, bias=False)
        self.${sub}.${o} = nn.Linear(${h} * ${hd}, ${d}, bias=False)
        self.${sub}.${qn} = Norm(${hd})
        self.${sub}.${kn} = Norm(${hd})
        self.${gate_a} = nn.Parameter(torch.zeros(1))  # 0 when trained from scratch: the identity
        self.${attn_norm} = Norm(${d})
        self.${mlp} = MLP()
        self.${ffn_norm} = Norm(${d})
        self.${gate_m} = nn.Parameter(torch.zeros(1))

    def forward(self, x, rope=None, image=None):  # x: [B, T, ${d}], image: [B, N, ${d}] or None
        if image is None:
            return x  # text alone: the layer is skipped
        B, T, _ = x.shape
        a = self.${sub}
        q = a.${qn}(a.${q}(self.${attn_norm}(x)).view(B, T, ${h}, ${hd})).transpose(1, 2)
        k = a.${kn}(a.${k}(image).view(B, -1, ${kv}, ${hd})).transpose(1, 2)
        v = a.${v}(image).view(B, -1, ${kv}, ${hd}).transpose(1, 2)
        k, v = k.repeat_interleave(${groups}, dim=1), v.repeat_interleave(${groups}, dim=1)
        out = torch.softmax(q @ k.transpose(-1, -2) / ${hd} ** 0.5, dim=-1) @ v  # every image state, no mask
        x = x + self.${gate_a}.tanh() * a.${o}(out.transpose(1, 2).reshape(B, T, ${h} * ${hd}))
        return x + self.${gate_m}.tanh() * self.${mlp}(self.${ffn_norm}(x))"#,
        &[
            ("sub", sub.clone()),
            ("q", attr(Role::CrossQ)),
            ("k", attr(Role::CrossK)),
            ("v", attr(Role::CrossV)),
            ("o", attr(Role::CrossO)),
            ("qn", attr(Role::CrossQNorm)),
            ("kn", attr(Role::CrossKNorm)),
            ("gate_a", n.path(Role::CrossAttnGate)),
            ("gate_m", n.path(Role::CrossMlpGate)),
            ("attn_norm", n.path(Role::AttnNorm)),
            ("ffn_norm", n.path(Role::FfnNorm)),
            ("mlp", n.sublayer(Role::Down)),
            ("d", d.to_string()),
            ("h", h.to_string()),
            ("kv", kv.to_string()),
            ("hd", hd.to_string()),
            ("groups", (h / kv.max(1)).to_string()),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_checkpoint() {
        let spec = crate::source::load("mixtral-8x7b-v0.1", false)
            .unwrap()
            .spec;
        let n = Names::new(&spec);
        assert_eq!(n.layers, "model.layers");
        assert_eq!(n.path(Role::Q), "self_attn.q_proj");
        assert_eq!(n.inside(Role::ExpertGate), "experts.w1");
        assert_eq!(n.inside(Role::Router), "gate");
        let gpt2 = crate::source::load("gpt-2", false).unwrap().spec;
        let n = Names::new(&gpt2);
        assert_eq!(n.layers, "transformer.h");
        assert_eq!(n.path(Role::Qkv), "attn.c_attn");
        assert_eq!(n.path(Role::Embed), "transformer.wte");
    }

    #[test]
    fn the_module_holds_only_what_the_model_uses() {
        let llama = module(&crate::source::load("llama-3.1-8b", false).unwrap().spec);
        assert!(!llama.contains("class MoE"), "{llama}");
        assert!(!llama.contains("Conv1D"));
        assert!(llama.contains("llama3"));
        let mixtral = module(
            &crate::source::load("mixtral-8x7b-v0.1", false)
                .unwrap()
                .spec,
        );
        assert!(mixtral.contains("class MoE") && !mixtral.contains("class MLP("));
    }
}
