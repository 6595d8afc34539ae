//! The PyTorch reference: one module per model, written with its sizes, whose parameters are
//! named as its checkpoint names them, so `Model().load_state_dict(load_file(path))` takes the
//! published safetensors as they are (stacked experts, fused projections, Conv1D and router
//! buffers included). The page shows each part's piece of it.
//!
//! The Python is written as templates (`${name}` placeholders) and holds only what this model
//! uses; every attribute name comes from the layout's checkpoint names (`naming`).

mod altup;
mod attention;
mod blt;
mod cca;
mod decode;
mod delta;
mod draft;
mod ffn;
mod gated;
mod hierarchy;
mod hyper;
mod image;
mod indexer;
mod inkling2;
mod layer;
mod lightning;
mod mla;
mod mlstm;
mod moa;
mod model;
mod norm;
mod position;
mod rel_logits;
mod rglru;
mod rwkv;
mod shared;
mod ssm;
mod v4;

use crate::fmt::float as fmt_f;
use crate::naming::{names, Role};
use crate::render::html::parts::{Kind, Part};
use crate::spec::{
    Act, AttnSpan, Block, DeltaNet, DeltaStore, ExpertStorage, HfWrap, NormKind, NormPlace,
    OutGate, Position, QkNorm, Qkv, Residual, Rope, RopeFreqs, RopeScaling, ScaleForm, Scoring,
    Spec, SsmGate, Stream,
};
use attention::*;
use cca::*;
use delta::*;
use ffn::*;
use indexer::*;
use layer::*;
use lightning::*;
use mla::*;
use moa::*;
use model::*;
use norm::*;
use position::*;
use rel_logits::*;
use rglru::*;
use rwkv::*;
use ssm::*;

/// The imports `body` uses: `math` and `F` only where it calls them, so that a linter finds none
/// unused.
fn imports(body: &str) -> String {
    let mut lines = Vec::new();
    if body.contains("math.") {
        lines.push("import math\n");
    }
    lines.push("import torch\nimport torch.nn as nn");
    if body.contains("F.") {
        lines.push("import torch.nn.functional as F");
    }
    lines.join("\n")
}

/// `${name}` → value, for each pair.
pub(super) fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut out = template.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("${{{k}}}"), v);
    }
    assert!(!out.contains("${"), "unfilled placeholder in {out}");
    out
}

pub(super) fn py_bool(b: bool) -> String {
    if b { "True" } else { "False" }.into()
}

/// The snippet shown for `part`: imports, the helpers it uses, and its classes.
pub fn snippet(spec: &Spec, part: &Part) -> String {
    if let Some(bl) = spec.bytes() {
        let body = blt::snippet(spec, bl, part.kind);
        return format!("{}\n\n{}\n", imports(&body), body.trim_end());
    }
    let n = Names::new(spec);
    let body = match part.kind {
        Kind::Embedding => embedding_note(spec, &n),
        Kind::Norm => norm(spec),
        // Inkling 2: its attention, experts and layers are its own.
        Kind::Attention if spec.attn_res().is_some() => inkling2::attention(spec),
        Kind::Moe if spec.attn_res().is_some() => inkling2::moe(spec),
        Kind::Head | Kind::HeadInput | Kind::PerLayer | Kind::Residual
            if spec.attn_res().is_some() =>
        {
            inkling2::model(spec)
        }
        // DeepSeek-V4: likewise.
        Kind::Attention if spec.attn.v4.is_some() => v4::attention(spec),
        Kind::Moe if spec.attn.v4.is_some() => {
            format!("HIDDEN = {}\n\n{}", spec.hidden, v4::moe(spec))
        }
        Kind::Head | Kind::HeadInput | Kind::Residual if spec.attn.v4.is_some() => v4::model(spec),
        Kind::Attention => [rope(spec), mask(spec), attention(spec, &n)].join("\n\n\n"),
        Kind::Mixer if spec.s6().is_some_and(|s| s.heads > 1) => shared::mamba_heads(spec),
        Kind::Mixer if spec.s6().is_some() => mamba(spec, &n),
        Kind::Mixer if spec.mlstm().is_some() => mlstm::mlstm(spec),
        Kind::Mlp | Kind::Head if spec.mlstm().is_some() => mlstm::model(spec),
        Kind::Mixer if spec.short_conv().is_some() => short_conv_class(spec, &n),
        Kind::Mixer if spec.delta().is_some() => gated_delta_net(spec, &n),
        Kind::Mixer if spec.lightning().is_some() => lightning_class(spec, &n),
        Kind::Mixer if spec.rg_lru().is_some() => rg_lru_class(spec, &n),
        Kind::Mixer | Kind::Mlp if spec.rwkv().is_some() => rwkv_classes(spec, &n),
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
            Some(s) => [shared::block_classes(spec, s), shared::model(spec, s)].join("\n\n\n"),
            None => unreachable!("a shared-block part comes from shared blocks"),
        },
        Kind::Residual => residual(spec),
        Kind::Head | Kind::HeadInput | Kind::Hierarchy | Kind::Loop => match spec.hierarchy() {
            Some(h) => hierarchy::model(spec, h),
            None => model(spec, &n),
        },
        Kind::Aux => mtp(spec),
        Kind::CrossAttention | Kind::CrossGate => cross_layer(spec),
        Kind::Stack(_) => unreachable!("a stack's part is BLT's, answered above"),
    };
    format!("{}\n\n{}\n", imports(&body), body.trim_end())
}

/// The module that mixes a layer's residual streams into its sublayers' inputs, where the
/// stream is several: gated streams' or hyper-connections'.
fn stream_mix(spec: &Spec, n: &Names) -> Option<String> {
    match &spec.stream {
        Stream::Gated(g) => Some(gated::gated_mix_class(
            *g,
            spec.hidden,
            spec.norm.eps,
            [
                Role::GsAttnNorm,
                Role::GsAttnDown,
                Role::GsAttnUp,
                Role::GsAttnInject,
            ]
            .map(|r| n.path(r).rsplit('.').next().unwrap_or_default().to_string()),
        )),
        Stream::Hyper(h) => Some(hyper::stream_mix_class(*h, spec.hidden, spec.norm.eps)),
        Stream::Plain
        | Stream::AltUp(_)
        | Stream::Hierarchy(_)
        | Stream::Bytes(_)
        | Stream::Looped(_)
        | Stream::AttnRes(_) => None,
    }
}

/// The code of the repeated decoder layer, for the page's box of the block: the layer class, or
/// where a model's layers are classes of its own (Inkling 2, DeepSeek-V4, xLSTM, Gemma 3n, Zamba)
/// those; BLT's latent layers are its module's.
pub fn layer_snippet(spec: &Spec) -> String {
    let n = Names::new(spec);
    let body = if let Some(bl) = spec.bytes() {
        // BLT: the layer classes its four stacks share, sized by each stack.
        blt::snippet(spec, bl, crate::render::html::parts::Kind::Mlp)
    } else if spec.attn_res().is_some() {
        inkling2::model(spec)
    } else if spec.attn.v4.is_some() {
        v4::model(spec)
    } else if spec.mlstm().is_some() {
        mlstm::model(spec)
    } else if spec.altup().is_some() {
        altup::classes(spec)
    } else if let Some(s) = spec.shared.as_ref().filter(|s| !s.layers.is_empty()) {
        shared::block_classes(spec, s) + "\n\n\n" + &shared::model(spec, s)
    } else if let Some(s) = &spec.shared {
        shared::model(spec, s)
    } else {
        // The layer, after the module that mixes its streams where it has several.
        let mut pieces: Vec<String> = stream_mix(spec, &n).into_iter().collect();
        pieces.push(layer(spec, &n));
        pieces.join("\n\n\n")
    };
    format!("{}\n\n{}\n", imports(&body), body.trim_end())
}

/// The whole model as one runnable module.
pub fn module(spec: &Spec) -> String {
    if let Some(d) = spec.draft {
        // A draft model: its layers' module, turned to run a step from its target's state.
        let plain = Spec {
            draft: None,
            ..spec.clone()
        };
        return decode::decoding(spec, draft::module(spec, d, &module(&plain)));
    }
    let body = decode::decoding(spec, assemble(spec));
    format!("{}\n\n\n{}\n\n\n{body}", docstring(spec), imports(&body))
}

/// The module's classes and functions, after its docstring and imports: the model's, and the
/// loader's filter of a checkpoint's towers where it holds the language model alone.
fn assemble(spec: &Spec) -> String {
    let classes = classes(spec);
    match model::language_model_only(spec) {
        Some(filter) => format!("{}\n\n\n{filter}\n", classes.trim_end()),
        None => classes,
    }
}

/// The model's classes and functions.
fn classes(spec: &Spec) -> String {
    if let Some(bl) = spec.bytes() {
        return blt::module(spec, bl);
    }
    let n = Names::new(spec);
    let mut parts = vec![norm(spec)];
    if spec.attn_res().is_some() {
        // Inkling 2: its attention, experts and layers are its own.
        parts.push(inkling2::attention(spec));
        parts.push(inkling2::moe(spec));
        parts.push(inkling2::model(spec));
        return parts.join("\n\n\n") + "\n";
    }
    if spec.attn.v4.is_some() {
        // DeepSeek-V4: its attention, experts and layers are its own.
        parts.push(v4::attention(spec));
        parts.push(v4::moe(spec));
        parts.push(v4::model(spec));
        return parts.join("\n\n\n") + "\n";
    }
    if matches!(spec.position, Position::Rope(_)) {
        parts.push(rope(spec));
    }
    parts.extend(decode::helpers(spec));
    if !spec.attn_variants().is_empty() {
        parts.push(mask(spec));
        parts.push(attention(spec, &n));
    }
    if spec.ssm().is_some() {
        parts.push(mamba2(spec, &n));
    }
    match spec.s6() {
        Some(s) if s.heads > 1 => parts.push(shared::mamba_heads(spec)),
        Some(_) => parts.push(mamba(spec, &n)),
        None => {}
    }
    if spec.short_conv().is_some() {
        parts.push(short_conv_class(spec, &n));
    }
    if spec.delta().is_some() {
        parts.push(gated_delta_net(spec, &n));
    }
    if spec.lightning().is_some() {
        parts.push(lightning_class(spec, &n));
    }
    if spec.rg_lru().is_some() {
        parts.push(rg_lru_class(spec, &n));
    }
    if spec.rwkv().is_some() {
        parts.push(rwkv_classes(spec, &n));
    }
    if spec.mlstm().is_some() {
        // xLSTM: its mixer, blocks and model are its own.
        parts.push(mlstm::mlstm(spec));
        parts.push(mlstm::model(spec));
        return parts.join("\n\n\n") + "\n";
    }
    if spec.altup().is_some() {
        // Gemma 3n: its layers and model are its own.
        parts.push(altup::classes(spec));
        return parts.join("\n\n\n") + "\n";
    }
    if let Some(s) = &spec.shared {
        // Zamba's and Zamba2's layers and model are their own; the block's classes where a
        // layer runs it.
        if !s.layers.is_empty() {
            parts.push(shared::block_classes(spec, s));
        }
        parts.push(shared::model(spec, s));
        return parts.join("\n\n\n") + "\n";
    }
    if spec.layout.stores_in_out() {
        parts.push(CONV1D.to_string());
    }
    if let Some(image) = &spec.image {
        parts.push(image::classes(image));
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
    let mix = stream_mix(spec, &n);
    if spec.gated_streams().is_some() {
        parts.extend(mix.clone());
    }
    if spec.ngram_ple.is_some() {
        parts.push(ngram_code(spec));
    }
    if spec.hyper().is_some() {
        parts.extend(mix);
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
    parts.push(match spec.hierarchy() {
        Some(h) => hierarchy::model(spec, h),
        None => model(spec, &n),
    });
    parts.join("\n\n\n") + "\n"
}

fn docstring(spec: &Spec) -> String {
    let load = if spec.towers.is_empty() || spec.image.is_some() {
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
    /// A wrapper that moves the language model inside its own `model` (Qwen3.5's
    /// `model.language_model.`, Idefics2's `model.text_model.`), else `HfWrap::None`.
    wrap: HfWrap,
    /// The layer list's path (`model.layers`, `transformer.h`).
    layers: String,
}

impl Names {
    fn new(spec: &Spec) -> Names {
        let wrap = match spec.hf_wrap {
            w @ (HfWrap::Nested | HfWrap::Module { .. }) => w,
            HfWrap::None | HfWrap::Prefix(_) => HfWrap::None,
        };
        let hf = wrap.apply(&names(spec.layout, Role::AttnNorm, false).0);
        let layers = layer_split(&hf).map_or(hf.as_str(), |(l, _)| l).to_string();
        Names {
            layout: spec.layout,
            wrap,
            layers,
        }
    }

    /// The module path of `role`'s tensor (without `.weight`), below a layer for layer roles.
    fn path(&self, role: Role) -> String {
        let hf = self.wrap.apply(&names(self.layout, role, false).0);
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

    /// The module holding `role`'s tensor (its path below a layer) and the tensor's name in it:
    /// `weight` where the stored name ends so, else the name's last part (Ergo's
    /// `post_attention_residual.scale`: `scale` in `post_attention_residual`).
    fn held_as(&self, role: Role) -> (String, String) {
        let p = self.path(role);
        if names(self.layout, role, false).0.ends_with(".weight") {
            return (p, "weight".into());
        }
        match p.rsplit_once('.') {
            Some((m, t)) => (m.into(), t.into()),
            None => (String::new(), p),
        }
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

/// A linear layer's constructor: nn.Linear, or GPT-2's Conv1D stored [in, out].
fn linear(spec: &Spec, inp: &str, out: &str, bias: bool) -> String {
    if spec.layout.stores_in_out() {
        format!("Conv1D({inp}, {out})")
    } else {
        format!("nn.Linear({inp}, {out}, bias={})", py_bool(bias))
    }
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
