//! What each part is, in words, with this model's numbers: a one-line summary for hover, an
//! explanation, and the subtleties worth knowing. Generated from the Spec and the part's sums.

mod attention;
mod blt;
mod delta;
mod ffn;
mod lightning;
mod mlstm;
mod ngram;
mod per_layer;
mod rglru;
mod rwkv;
mod shared;
mod ssm;

use attention::*;
use delta::*;
use ffn::*;
use lightning::*;
use mlstm::*;
use ngram::*;
use per_layer::*;
use rglru::*;
use rwkv::*;
use shared::*;
use ssm::*;

use crate::fmt::{grouped, short};
use crate::graph::Graph;
use crate::render::html::parts::{Kind, Part};
use crate::spec::{
    AttnKind, AttnSpan, GateStore, Mixer, NormKind, NormPlace, Position, QkNorm, Qkv, Residual,
    ScaleForm, Scoring, Spec, SsmGate,
};

pub struct Text {
    pub summary: String,
    pub explanation: String,
    pub subtleties: Vec<String>,
}

/// Which layers use which attention span, in words (`sliding 4096 in 0, 2, 4 … 40; full in …`).
pub fn spans(spec: &Spec) -> String {
    let mut kinds: Vec<AttnSpan> = spec.plan.iter().filter_map(|l| l.span()).collect();
    kinds.sort();
    kinds.dedup();
    if let (true, Some(s)) = (
        kinds.is_empty(),
        spec.shared.as_ref().filter(|s| !s.layers.is_empty()),
    ) {
        return format!(
            "full causal attention in the shared block, in layers {}",
            s.layers
        );
    }
    if kinds.is_empty() {
        return "no attention layers".into();
    }
    if kinds.len() == 1 && spec.plan.iter().all(|l| l.span().is_some()) {
        return match kinds[0] {
            AttnSpan::Full => "full causal attention in every layer".into(),
            other => format!("{} in every layer", other.describe()),
        };
    }
    kinds
        .iter()
        .map(|k| {
            format!(
                "{} in layers {}",
                k.describe(),
                spec.layers_where(|l| l.span() == Some(*k))
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn rope_words(spec: &Spec) -> String {
    match &spec.position {
        Position::Learned => "learned absolute position embeddings".into(),
        Position::Sinusoidal(_) => "fixed sinusoidal position embeddings".into(),
        Position::Alibi(_) => "ALiBi (a linear distance penalty on attention scores)".into(),
        // Inkling: relative logits and short convolutions in every attention layer.
        Position::None if spec.attn.rel_logits.is_some() => {
            "none: each attention layer learns a bias by distance (its relative logits), and short convolutions mix each token with the few before it".into()
        }
        Position::None => "none: order comes from the recurrence itself".into(),
        Position::Buckets(b) => format!(
            "a learned bias per head on each attention score, by bucket of the distance between query and key ({} buckets, logarithmic up to {} positions)",
            b.buckets, b.max_distance
        ),
        Position::Rope(r) => {
            let mut s = format!("RoPE, {}", r.describe());
            if r.partial < 1.0 {
                s += &format!(
                    ", rotating {}% of each head",
                    crate::fmt::float(r.partial * 100.0)
                );
            }
            if let Some(p) = r.sliding_partial {
                s += &format!(
                    " ({}% in the sliding-window layers)",
                    crate::fmt::float(p * 100.0)
                );
            }
            s
        }
    }
}

pub fn text(g: &Graph, part: &Part, total: u128) -> Text {
    let spec = &g.spec;
    let d = spec.hidden;
    let share = |n: u128| {
        if total == 0 {
            0.0
        } else {
            n as f64 * 100.0 / total as f64
        }
    };
    match part.kind {
        Kind::Embedding if spec.bytes().is_some() => {
            blt::patch_input(spec, spec.bytes().expect("checked"))
        }
        Kind::Stack(s) => match spec.bytes() {
            Some(bl) => blt::stack(spec, bl, s, part, share(part.params)),
            None => unreachable!("a stack's part comes from BLT's stacks"),
        },
        Kind::Embedding => {
            let mut sub = vec![match spec.draft {
                Some(dr) => format!(
                    "Scale: the table (V={} × d={d}) and the projection in (d × {}) are {} parameters ({:.1}% of the model).",
                    grouped(spec.vocab as u128),
                    2 * dr.backbone,
                    short(part.params),
                    share(part.params)
                ),
                None => format!(
                    "Scale: at d={d} and V={}, this table alone is {} parameters ({:.1}% of the model).",
                    grouped(spec.vocab as u128),
                    short(part.params),
                    share(part.params)
                ),
            }];
            if let Some(dr) = spec.draft {
                sub.insert(0, format!(
                    "This is a draft model: no token is looked up here. Its input is its target's embedding of the last token beside a hidden state of {b} features (the target's last, after the prompt; then this model's own, projected back to {b} by W_out), projected to d={d} by W_in. Every draft step runs at the last token's position over the same keys and values of the target.",
                    b = dr.backbone
                ));
                if let Some(c) = dr.centroids {
                    sub.push(format!(
                        "The head is clustered: {} centroids score the final state, and only the {} tokens of the {} best clusters are scored by the head's rows (the stored `token_ordering` lists the vocabulary cluster by cluster); every other token gets the smallest of those scores minus one.",
                        c.count,
                        c.kept(spec.vocab),
                        c.top_k
                    ));
                }
            }
            if spec.embedding.affine {
                sub.push(format!("The embeddings are then shifted and scaled by two learned vectors of {d}: X = (X + β) ⊙ γ."));
            }
            let width = spec.embed_width();
            if spec.embedding.projected.is_some() {
                sub.push(format!("The table is {width} wide, not the stream's {d}: W_in ∈ ℝ^{{{d} × {width}}} (no bias) maps each row looked up to d={d} right after the lookup, before anything is added. The head reads the final hidden state mapped back to {width} by W_out ∈ ℝ^{{{width} × {d}}}, so a tied head is the same {width}-wide table."));
            }
            sub.push(if spec.tied {
                "Weight tying is ON: the LM head reuses this matrix, so it is stored once.".into()
            } else {
                match spec.head_rows {
                    Some(rows) => format!("Weight tying is OFF: the LM head has its own matrix of {} rows × d, one per id it scores.", grouped(u128::from(rows))),
                    None => "Weight tying is OFF: the LM head has its own V×d matrix.".into(),
                }
            });
            match &spec.position {
                Position::Learned => sub.push(format!(
                    "Positions are learned too: a second table of {} rows is added here, so the model cannot read past {} tokens.",
                    spec.embedding.learned_positions.unwrap_or(0),
                    spec.embedding.learned_positions.unwrap_or(0)
                )),
                Position::Sinusoidal(_) => sub.push("Positions are added here as fixed sinusoids, computed rather than learned: the position table has no parameters.".into()),
                Position::Rope(_) => sub.push("No positional information is added here: position enters inside attention through RoPE.".into()),
                Position::Alibi(_) => sub.push("No positional information is added here: attention scores are penalized by distance (ALiBi).".into()),
                Position::None => sub.push("No positional information is added anywhere: each layer reads the tokens in order, and its state carries what came before.".into()),
                Position::Buckets(b) => sub.push(format!("No positional information is added here: every attention score gets a learned bias, one per head, chosen by how far the key is from the query. The first {} distances each way have a bucket each; longer ones share buckets spaced by the logarithm of the distance up to {}. One table of {} rows serves every layer.", b.buckets / 4, b.max_distance, grouped(u128::from(spec.bias_rows(*b))))),
            }
            if let Some(p) = spec.prompt {
                sub.push(format!("The table has {} rows: the {} ids of the text and {} rows of learned prompts. Before the first layer the model puts {} prompt tokens (rows {}–{}) in front of the text, and adds to every position the embedding of its segment from a second table of {} rows: segment {} for the prompt, segment {} for the text. The prompt's positions run through every layer like the text's and are cached with it; their outputs are dropped before the head.", grouped(u128::from(spec.vocab)), grouped(u128::from(spec.out_vocab())), grouped(u128::from(spec.vocab - spec.out_vocab())), p.length, grouped(u128::from(p.row(spec.out_vocab(), 0))), grouped(u128::from(p.row(spec.out_vocab(), p.length.max(1) - 1))), p.segments, crate::spec::PROMPT_SEGMENT, crate::spec::TEXT_SEGMENT));
            }
            if spec.embedding.scale_by_sqrt_hidden {
                sub.push(format!("The embeddings are multiplied by √{d} ≈ {:.1} before the first layer.", (d as f64).sqrt()));
            }
            if spec.embedding.multiplier != 1.0 {
                sub.push(format!("The embeddings are multiplied by a fixed {} before the first layer (the config's embedding multiplier).", spec.embedding.multiplier));
            }
            match spec.draft {
                Some(dr) => Text {
                    summary: format!("Projects its target's embedding of the last token and a hidden state, {} features, to {d}.", 2 * dr.backbone),
                    explanation: format!(
                        "No token is looked up here: W_in ∈ ℝ^{{{d} × {}}} projects [the target's scaled embedding of the last token ; a hidden state] into the residual stream every layer reads from and writes to. The embedding matrix W_E ∈ ℝ^{{{} × {d}}} is stored for the head.",
                        2 * dr.backbone,
                        spec.vocab
                    ),
                    subtleties: sub,
                },
                None => Text {
                    summary: format!("Maps each of the {} vocabulary ids to a learned {width}-dim vector.", grouped(spec.vocab as u128)),
                    explanation: format!(
                        "The embedding is a learned matrix W_E ∈ ℝ^{{{} × {width}}}. A token id indexes a row, so the computation is a gather, not a matmul. The output is the residual stream every layer reads from and writes to.",
                        spec.vocab
                    ),
                    subtleties: sub,
                },
            }
        }
        Kind::Norm if spec.gated_streams().is_some() => {
            let (n, r) = spec.gated_streams().map_or((1, 0), |g| (g.streams, g.rank));
            let w = n * d;
            let reader = if part.id == "final-norm" { "the LM head" } else { "the sublayer" };
            Text {
                summary: format!("{}: normalizes each of the {n} residual streams, gates them and averages them into {reader}'s input (eps={}).", part.title, spec.norm.eps),
                explanation: format!("x̂ᵢ = xᵢ / √(mean(xᵢ²) + {}) · (1 + gᵢ) for each stream i < {n}, with one learned gain g ∈ ℝ^{{{w}}} over all their features; then a = σ(W↑ · SiLU(W↓ · x̂ / {n})) through rank {r}, and the input is mean over i of aᵢ ⊙ x̂ᵢ.", spec.norm.eps),
                subtleties: vec![
                    format!("This is the only norm before {reader}: the mix normalizes what it reads, and the streams themselves are never normalized in place."),
                    if part.id == "final-norm" {
                        "The head's mix has no injection weights, and no final norm follows it.".to_string()
                    } else {
                        format!("Beside the input, the same normed streams give each stream's injection weight, 2σ(Wᵢₙⱼ · x̂ / {n}): how much of the sublayer's output it gets back.")
                    },
                    "The stored weight is an offset: it is applied as (1 + w), so a zero-initialized weight means identity.".into(),
                ],
            }
        }
        Kind::Norm => {
            let (what, eq) = match spec.norm.kind {
                NormKind::Rms => ("RMSNorm", format!("y = x / √(mean(x²) + {}) · {}", spec.norm.eps, if spec.norm.unit_offset { "(1 + g)" } else { "g" })),
                NormKind::Layer { bias } => ("LayerNorm", format!(
                    "y = (x − mean(x)) / √(var(x) + {}) · {}{}",
                    spec.norm.eps,
                    if spec.norm.unit_offset { "(1 + g)" } else { "g" },
                    if bias { " + b" } else { " (no shift)" }
                )),
                NormKind::PlainRms => ("RMSNorm without a weight", format!(
                    "y = x / √(mean(x²) + {}): no learned scale, so the norm adds no parameters",
                    spec.norm.eps
                )),
                NormKind::Plain => ("LayerNorm without parameters", format!(
                    "y = (x − mean(x)) / √(var(x) + {}): no learned scale or shift, so the norm adds no parameters",
                    spec.norm.eps
                )),
                NormKind::Unit => ("L2 norm", format!(
                    "y = x / √(Σx² + {}): each token's vector projected onto the unit sphere, length 1 rather than RMS 1, with no learned scale (nGPT)",
                    spec.norm.eps
                )),
                NormKind::RmsBias => ("RMSNorm with a shift", format!(
                    "y = x / √(mean(x²) + {}) · g + b: a learned shift after the scale, as a LayerNorm has, without subtracting the mean{}",
                    spec.norm.eps,
                    if spec.final_norm_kind.is_some() { "; the final norm has no shift" } else { "" }
                )),
            };
            let place = match spec.norm.place {
                NormPlace::Pre => "Pre-norm: the norm sits on the branch before each sublayer; the residual stream itself is never normalized in place.",
                NormPlace::Post => "Post-norm on the branch: each sublayer's output is normalized before it is added to the stream (OLMo 2's placement); the stream itself stays unnormalized.",
                NormPlace::PostResidual => "Post-residual norm, the original Transformer's placement: each sublayer's output is added to the stream and the sum is normalized, so the stream itself is normalized twice per layer and no final norm follows the last layer.",
                NormPlace::Sandwich => "Sandwich norms: each sublayer is normalized both before and after, and only then added to the stream.",
                NormPlace::Normed => "Pre-norm, but the normed input takes the stream's place: each sublayer's output is added to its own normed input, x ← α · n(x) + β · f(n(x)), so the stream is renormalized before every sublayer.",
                NormPlace::Sphere => "nGPT: the stream lives on the unit sphere. Before each sublayer it is normed in place, x ← n(x); the sublayer's output is normed too, and the stream moves part of the way towards it, x ← x + r ⊙ (n′(f(x)) − x), at a learned rate r per feature, rather than adding to it.",
            };
            let mut sub = vec![place.to_string()];
            if let Some(p) = spec.recurrent_place.filter(|&p| p != spec.norm.place) {
                let rec = spec.layers_where(|l| l.mixer.recurrent());
                sub.push(format!(
                    "That is the attention layers' placement; the recurrent layers ({rec}) norm {}.",
                    match p {
                        NormPlace::Pre => "before each sublayer instead (pre-norm)",
                        NormPlace::Post => "each sublayer's output instead (post-norm)",
                        NormPlace::Sandwich => "before and after each sublayer instead",
                        NormPlace::PostResidual => "the stream after each add instead",
                        NormPlace::Normed => "before each sublayer, adding to the normed input instead",
                        NormPlace::Sphere => "on the unit sphere instead, moving towards each normed output",
                    }
                ));
            }
            if spec.norm.unit_offset {
                sub.push("The stored weight is an offset: it is applied as (1 + w), so a zero-initialized weight means identity.".into());
            }
            sub.push("The reduction runs in float32 even in bf16 models; eps guards the near-zero case.".into());
            Text {
                summary: format!("{}: rescales each token vector over its {d} features (eps={}).", part.title, spec.norm.eps),
                explanation: if spec.norm.kind.has_weight() {
                    format!("{what}: {eq}, with a learned per-feature gain g ∈ ℝ^{{{d}}}.")
                } else {
                    format!("{what}: {eq}.")
                },
                subtleties: sub,
            }
        }
        Kind::Attention => attention_text(g, part),
        Kind::Mixer => mixer_text(g),
        Kind::Residual => {
            if let (NormPlace::Sphere, Some(n)) = (spec.norm.place, spec.ngpt) {
                return Text {
                    summary: "Moves the stream part of the way towards the sublayer's normed output.".into(),
                    explanation: format!("y = x + r ⊙ (n(f(x)) − x), x the normed stream: nGPT keeps every hidden state on the unit sphere, so instead of adding a delta each sublayer pulls the {d}-dim state towards its own normed output, at a learned rate per feature, r = |λ · {}| (λ stored, {} = ngpt_alpha_init / initializer_range).", crate::fmt::approx(n.rate_factor()), crate::fmt::approx(n.rate_factor())),
                    subtleties: vec![
                        format!("Two vectors of {d} per layer, lambda_1 after the attention and lambda_2 after the MLP. A rate of 1 replaces the state with the output; near 0 keeps it; the result is normed again before the next sublayer."),
                    ],
                };
            }
            let mut sub = vec!["No parameters and almost no compute; it is what makes deep stacks trainable.".to_string()];
            match spec.residual {
                Residual::Affine => sub[0] = format!("Each add here has four learned vectors of {d}: y = (f(x) + bₒ) ⊙ sₒ + (x + bᵣ) ⊙ sᵣ, the sublayer's output and the stream each shifted and scaled before they are summed."),
                Residual::Gated => sub[0] = format!("Not a plain add: one learned vector w of {d} per sublayer gates the mix, y = σ(w) ⊙ f(x) + √(1 − σ(w)²) ⊙ x (stored as √(1 + σ(w)) · e^(−softplus(w)/2), the same numbers). The two factors' squares sum to 1, so the mix keeps the variance of two uncorrelated inputs; at w = 0 the sublayer's output counts σ(0) = 0.5 and the stream √0.75 ≈ 0.87."),
                Residual::Add | Residual::Scaled => {}
            }
            if let Some(l) = spec.attn_res().and_then(|r| r.looped) {
                sub.push(format!("Layers {}–{} run {} times over, each pass from the same stream and summaries, with KV and convolution caches of its own: from the second pass on, each of these layers' query, key, value and FFN inputs takes in a message from the pass before (a mix of that pass's summaries and output by the layer's own queries), through a gate of rank {} that also decides how much of the input to forget.", l.start, l.end - 1, l.passes, l.rank));
            }
            if let Some(r) = spec.attn_res() {
                sub.push(format!("The stream is not the model's memory here: each sublayer reads a mix of the block summaries (the stream as it entered layers 0, {b}, {}, …) and the stream, each RMS-normed and weighted by a softmax of its match with a learned query (Kimi's block attention residuals). A block's first layer (every {b} layers) keeps its input as a summary and restarts the stream from its attention's output; the head reads a mix of its own.", 2 * r.block, b = r.block));
            }
            if let Some(c) = spec.out_conv {
                let taps = c.taps;
                sub.push(format!("Before it is added, each sublayer's output passes through a causal convolution over its last {taps} positions, channel by channel, added to it (Inkling's attn_sconv and mlp_sconv): a short memory of the tokens just before, carried from token to token as {} inputs per channel.", taps - 1));
            }
            if spec.residual_mult != 1.0 {
                sub.push(format!("Each sublayer's output is multiplied by {} before it is added, keeping the stream's scale steady across {} layers.", spec.residual_mult, spec.layers));
            }
            if spec.depth_scaled {
                let last = 2 * spec.layers + 1;
                sub.push(format!("Every add is scaled with depth: the k-th add of the model (k = 2b + 2 after layer b's attention, 2b + 3 after its FFN) is x · √((k − 1)/k) + f(x) / √k, so the stream stays the sum of its k terms divided by √k, at one term's scale however deep the layer. Layer 0's attention adds its output at 1/√2 ≈ {}; the last layer's FFN at 1/√{last} ≈ {}.", crate::fmt::float(spec.depth_factors(0, false).1), crate::fmt::float(spec.depth_factors(spec.layers - 1, true).1)));
            }
            if let Some(m) = spec.stream_mix {
                let f = crate::fmt::float;
                sub.push(format!("What is added to is the sublayer's normed input, not the stream before the norm: x ← α · n(x) + β · f(n(x)), with (α, β) = ({}, {}) after softmax attention, ({}, {}) after lightning attention and ({}, {}) after the MLP.", f(m.attn.0), f(m.attn.1), f(m.linear.0), f(m.linear.1), f(m.mlp.0), f(m.mlp.1)));
            }
            if let Some(n) = spec.gated_streams().map(|g| g.streams) {
                return Text {
                    summary: format!("Adds the sublayer's output to each of the {n} residual streams, by that stream's weight."),
                    explanation: format!("xᵢ ← xᵢ + gᵢ · f(x), i < {n}: the {d}-dim output joins every stream as it was before the mix's norm, times its injection weight gᵢ = 2σ(·) in (0, 2), computed from the streams before the sublayer."),
                    subtleties: sub,
                };
            }
            if let Some(h) = spec.hyper() {
                return Text {
                    summary: format!("Adds the sublayer's output to each of the {} residual streams, by that stream's post gate.", h.streams),
                    explanation: match h.sinkhorn {
                        Some(_) => format!("xᵢ ← Σⱼ Cⱼᵢ xⱼ + postᵢ · f(x), i < {}: each stream becomes its doubly stochastic mix of the old streams, and the {d}-dim output joins it times its post gate, both computed from the streams before the sublayer.", h.streams),
                        None => format!("xᵢ ← xᵢ + postᵢ · f(x), i < {}: the {d}-dim output joins every stream times its post gate, computed from the streams before the sublayer.", h.streams),
                    },
                    subtleties: sub,
                };
            }
            Text {
                summary: "Adds the sublayer's output back onto the residual stream.".into(),
                explanation: format!("y = x + f(x): every sublayer computes a {d}-dim delta and adds it to the stream, so the identity path from the embedding to the LM head is unobstructed."),
                subtleties: sub,
            }
        }
        Kind::Mlp if spec.rwkv().is_some() => channel_mix_text(spec),
        Kind::Mlp => {
            // The width of this part's layers (Gemma 4's double-wide MLPs have their own).
            let first = part.layers.as_ref().and_then(|l| l.first()).unwrap_or(0);
            let f = spec.mlp_width(first as usize);
            let act = spec.mlp.act.words();
            let (summary, explanation) = if spec.mlp.gated {
                (
                    format!("Gated MLP: {d} → 2×{f} ({act} gate ⊙ up) → {d}."),
                    format!("down(act(gate(x)) ⊙ up(x)): two projections to {f} features, one passed through {act} and used to gate the other, then a projection back to {d}."),
                )
            } else {
                (format!("MLP: {d} → {f} ({act}) → {d}."), format!("down({act}(up(x))): expand to {f} features, apply {act}, project back to {d}."))
            };
            let mut sub = vec!["Each position is transformed on its own: the FFN never mixes positions, which is why it parallelizes perfectly and holds most of a dense model's parameters.".to_string()];
            if spec.mlp.fused_gate_up {
                sub.push(format!("The checkpoint stores gate and up as one {}-row tensor (gate_up_proj): the first half gates, the second half is the up projection.", 2 * f));
            }
            if spec.mlp.bias {
                sub.push("The projections have biases.".into());
            }
            if spec.mlp.sub_norm {
                sub.push(format!("The {f} activated features are normalized (their own weight) before the down projection: BitNet's sub-norm."));
            }
            if let Some(l) = spec.mlp.clamp {
                sub.push(format!("The gated activation is gpt-oss's clamped SwiGLU: the gate capped at {l}, up clipped to ±{l}, then (up + 1) · gate · σ(1.702 · gate), whatever the config's hidden_act says. The shared experts use the same."));
            }
            for (set, p) in &spec.sparsity {
                let z = crate::spec::normal_quantile(*p);
                sub.push(format!("Activation sparsity in layers {set}: before its activation the gate keeps only the values above mean + {} × std of its {f} values (the level under which {}% of a Gaussian lies) and shifts them down to start at 0, so about {}% of the features pass: a Gaussian top-k, computed from each token's own statistics rather than by sorting.", crate::fmt::float((z * 1000.0).round() / 1000.0), crate::fmt::float(p * 100.0), crate::fmt::float(((1.0 - p) * 100.0 * 10.0).round() / 10.0)));
            }
            match &part.layers {
                Some(l) if !spec.mlp_widths.is_empty() && spec.altup().is_some() => sub.push(format!("Layers {l} have this MLP, {f} wide; each layer's width is its own in this model.")),
                Some(l) if !spec.mlp_widths.is_empty() && f != spec.mlp.intermediate => sub.push(format!("Layers {l} have this MLP at {f} wide, {}× the others' {}: they reuse earlier layers' keys and values, so their parameters went to the MLP instead.", crate::fmt::float(f as f64 / spec.mlp.intermediate as f64), spec.mlp.intermediate)),
                Some(l) if !spec.mlp_widths.is_empty() => sub.push(format!("Layers {l} have this MLP; the others' is wider.")),
                Some(l) => sub.push(format!("Only layers {l} run this MLP; {}.", instead_of_mlp(spec, l))),
                None => {}
            }
            Text { summary, explanation, subtleties: sub }
        }
        Kind::Moe => moe_text(g, part, share(part.params)),
        Kind::Shared => shared_text(
            spec,
            spec.shared
                .as_ref()
                .expect("a shared-block part comes from shared blocks"),
        ),
        Kind::PerLayer if spec.ngram_ple.is_some() => ngram_text(spec),
        Kind::PerLayer => per_layer_text(
            spec,
            spec.per_layer_input
                .expect("a per-layer part comes from per-layer inputs"),
        ),
        // The graph's own words for each step: these differ with every way of keeping streams.
        Kind::HeadInput => {
            // One walk of the graph for the part's steps (`Graph::step` walks it for each).
            let steps: Vec<_> = g.steps().into_iter().filter(|v| part.steps.contains(&v.step.number)).collect();
            let said = |f: fn(&crate::graph::Step) -> &str| steps.iter().map(|v| f(v.step)).collect::<Vec<_>>().join("; ");
            Text {
                summary: format!("{}.", said(|s| &s.operation)),
                explanation: said(|s| &s.equation),
                subtleties: vec!["Here the model's several residual streams become the one hidden state that the final norm and the head read.".into()],
            }
        }
        Kind::Head => {
            let mut sub = vec![];
            let width = spec.embed_width();
            if spec.embedding.projected.is_some() {
                sub.push(format!("Before it, W_out ∈ ℝ^{{{width} × {d}}} (no bias) maps the final hidden state from {d} features to the token table's {width}."));
            }
            // The part's own parameters include what runs before the head matrix (a projection
            // or a transform).
            match (spec.tied, part.params) {
                (true, 0) => sub.push(format!("Tied to the embedding: it reuses those {} parameters and stores none of its own.", short(part.shared_params))),
                (true, own) => sub.push(format!("Tied to the embedding: its matrix reuses those {} parameters; the {} stored here run before it.", short(part.shared_params), short(own))),
                (false, _) => sub.push(format!("Its own {} × {width} matrix: {} parameters.", grouped(spec.out_vocab() as u128), short(u128::from(spec.out_vocab()) * u128::from(width)))),
            }
            if spec.logits_mult != 1.0 {
                sub.push(format!("The logits are multiplied by a fixed {} before the softmax over the vocabulary.", spec.logits_mult));
            }
            if let Some(t) = spec.head_transform {
                sub.push(format!("Before it, the final hidden state passes a head of its own: a {d} × {d} dense layer, {} and a norm.", t.act.words()));
            }
            if let Some(rows) = spec.head_rows {
                sub.push(format!("The head is pruned to the first {} ids: the embedding reads all {}, but the ids past them (image and audio codes) are never predicted.", grouped(rows as u128), grouped(spec.vocab as u128)));
            }
            if let Some(c) = spec.final_softcap {
                sub.push(format!("Logits are softcapped: {c}·tanh(logits/{c}) keeps them in (−{c}, {c})."));
            }
            if let Some(kept) = spec.logits_kept {
                sub.push(format!("Only the first {} logits are kept: the head's last {} rows pad it past the real vocabulary, and their logits are dropped.", grouped(kept as u128), grouped((spec.out_vocab() - kept) as u128)));
            }
            Text {
                summary: format!("Scores all {} vocabulary entries at every position.", grouped(spec.out_vocab() as u128)),
                explanation: format!("logits = z · Wᵀ with W ∈ ℝ^{{{} × {width}}}; a softmax over them gives the next-token distribution.", spec.out_vocab()),
                subtleties: sub,
            }
        }
        Kind::CrossAttention => {
            let a = &spec.attn;
            let layers = part.layers.as_ref().map_or(0, |l| l.len());
            Text {
                summary: format!("Cross-attention to the image: in {layers} of the {} layers, the text reads the vision encoder's states.", spec.layers),
                explanation: format!(
                    "Each of these layers is a decoder block of its own kind: its queries ({} heads of {}) come from the normed text, its keys and values ({} heads) from the image's states, projected by the multimodal projector to the text width, and each head's queries and keys are RMS-normed. Its output, then its MLP's (the model's width, {}), join the stream through tanh gates, one learned scalar each: trained from 0, a new layer starts as the identity and the language model is undisturbed.",
                    a.heads, a.head_dim, a.kv_heads, spec.mlp.intermediate
                ),
                subtleties: vec![
                    "On a prompt without an image transformers skips these layers whole, MLP included: they cost a text token nothing and cache nothing, and the run here (which reads text only) skips them too. Their keys and values, computed once per image, are not part of the per-token KV cache.".into(),
                    format!("These layers' {} parameters (their norms, cross-attention, gates and MLPs) count in the model's total: the language model stores them beside its self-attention layers, numbered among them.", grouped(layers_params(g, part))),
                ],
            }
        }
        Kind::CrossGate => Text {
            summary: format!("{}: adds the sublayer's output to the stream through a learned tanh gate.", part.title),
            explanation: format!("y = x + tanh(g) · f(x), with g one stored scalar per layer and sublayer: the {d}-dim output is scaled by tanh(g) ∈ (−1, 1) before it joins the stream."),
            subtleties: vec!["Trained from g = 0, tanh(0) = 0: a new cross-attention layer starts as the identity, so the pretrained language model is undisturbed until the gate opens.".into()],
        },
        Kind::Loop => {
            let l = spec.looped().expect("a loop part comes from a looped section");
            use crate::layers::LayerSet;
            let end = l.input + l.recurrent;
            let runs = spec.runs_over(&LayerSet::all(spec.layers));
            Text {
                summary: format!("The looped section ({}) runs {} times in a row: a token runs {runs} layers, from {} stored.", l.layers().describe(), l.loops, spec.layers),
                explanation: format!(
                    "The model is three sections: input {}, run once; looped {}, run {} times; output {}, run once. The input section's output, normed, is kept as X₀; before each pass the stream is normed and X₀ added, Xₗ = n(X) + X₀, so every pass restarts from the prompt's reading and refines it. More passes buy accuracy with compute, not parameters.",
                    LayerSet::range(0, l.input).describe(),
                    l.layers().describe(),
                    l.loops,
                    LayerSet::range(end, spec.layers).describe()
                ),
                subtleties: vec![
                    if l.shared_cache {
                        format!("recurrent_kv_cache_mode is last_loop: only the last pass caches its keys and values; the earlier passes attend over those of earlier tokens plus their own, so the cache holds each looped layer once and does not grow with the {} passes. A prompt run whole and the same prompt run token by token then differ: the earlier passes see the last pass's keys for earlier tokens.", l.loops)
                    } else {
                        format!("recurrent_kv_cache_mode is per_loop: each pass caches keys and values of its own, so the looped layers' share of the KV cache (and of the FLOPs) counts {} times here.", l.loops)
                    },
                ],
            }
        }
        Kind::Hierarchy => {
            let h = spec.hierarchy().expect("a hierarchy part comes from a hierarchy");
            let (per, high, low) = (h.per_stack, h.high_cycles, h.low_cycles);
            let visits = high * (low + 1);
            Text {
                summary: format!("A loop over two stacks of {per} layers: each token runs the low-level stack {} times and the high-level one {high}.", high * low),
                explanation: format!(
                    "Two states travel together. The high-level state z_H starts as the embeddings, the low-level z_L as one stored vector (z_L_init) at every position. Each of {high} cycles runs the low-level stack (layers 0–{}) {low} times, z_L ← L(z_L + z_H), then the high-level stack (layers {per}–{}) once, z_H ← H(z_H + z_L); each stack ends in its own weightless RMS norm, and the last z_H goes to the LM head. The block below is drawn once per stored layer; a token runs {} layers in all.",
                    per - 1,
                    2 * per - 1,
                    per * visits
                ),
                subtleties: vec![
                    format!("Every visit of a stack attends over keys and values of its own: transformers gives each of the {visits} visits its own slot per layer (its num_hidden_layers is {}, {per} layers × {visits} visits), so the KV cache and the FLOPs here count every visit, not every stored layer.", per * visits),
                    "The stored initial state z_L_init is a parameter that transformers never trains (it is initialized to zero and frozen); a checkpoint stores it all the same.".into(),
                    "Tokens marked by token_type_ids (prefix_lm) may attend both ways, as a prefix; a prompt of ids alone, as run here, is causal.".into(),
                ],
            }
        }
        Kind::Aux => Text {
            summary: "Multi-token prediction: an auxiliary block that predicts the token after next.".into(),
            explanation: format!(
                "Trained alongside the model to densify the training signal and usable for speculative decoding. It joins the last hidden state with the next token's embedding, runs one more decoder block, and scores with its own head. Stored in the checkpoint as layer {}.",
                spec.layers
            ),
            subtleties: vec![
                "transformers does not build it, and ordinary decoding does not run it: its parameters are counted apart from the model's total.".into(),
                "Its embedding and head are stored copies of the main model's.".into(),
            ],
        },
    }
}

/// What the layers outside `l`, the dense MLP's, run instead, from the plan.
/// What a gated part's layers hold, all of their tensors together.
fn layers_params(g: &Graph, part: &Part) -> u128 {
    let per = crate::stats::per_layer_params(g);
    part.layers
        .iter()
        .flat_map(|l| l.iter())
        .filter_map(|b| per.get(b as usize))
        .sum()
}

fn instead_of_mlp(spec: &Spec, l: &crate::layers::LayerSet) -> String {
    let outside = |f: &dyn Fn(&crate::spec::LayerPlan) -> bool| {
        crate::layers::LayerSet::from_fn(spec.layers, |b| {
            !l.contains(b) && f(&spec.plan[b as usize])
        })
    };
    let kinds = [
        (
            outside(&|p| !p.mixer.runs_on_text()),
            "cross-attend to the image, with an MLP of their own that text alone skips",
        ),
        (
            outside(&|p| p.mixer.runs_on_text() && p.moe()),
            "route tokens to experts",
        ),
        (outside(&|p| p.ffn == crate::spec::Ffn::None), "have no FFN"),
    ];
    let said: Vec<String> = kinds
        .iter()
        .filter(|(set, _)| !set.is_empty())
        .map(|(set, what)| format!("layers {set} {what}"))
        .collect();
    said.join("; ")
}

/// One line on what makes this model what it is.
pub fn character(spec: &Spec) -> String {
    if let Some(bl) = spec.bytes() {
        return format!(
            "A byte-level latent transformer: the bytes, in patches{}, run through a {}-layer transformer over the patches between a {}-layer byte encoder and a {}-layer byte decoder.",
            if matches!(bl.patching, crate::spec::Patching::Entropy(_)) { " cut where a small model finds the next byte hard to predict" } else { " of one byte each" },
            spec.layers,
            bl.encoder.layers,
            bl.decoder.layers
        );
    }
    let attn = match (spec.attn.mla.is_some(), spec.attn.kind) {
        _ if spec.attn.moa.is_some() => "a mixture of attention heads".to_string(),
        (true, _) => "multi-head latent attention".to_string(),
        (_, AttnKind::Mha) => "multi-head attention".into(),
        (_, AttnKind::Mqa) => "multi-query attention".into(),
        _ => "grouped-query attention".into(),
    };
    // Recurrent mixers name the layers' mixing; attention, where some layers attend, says in how
    // many (a shared block's visits count).
    let recurrent: Vec<String> = crate::spec::Mixer::RECURRENT
        .iter()
        .filter(|m| {
            spec.plan
                .iter()
                .any(|l| l.mixer.recurrent_kind() == Some(**m))
        })
        .map(|m| spec.mixer_describe(*m))
        .collect();
    let attending = (0..spec.layers)
        .filter(|&b| spec.attn_span(b).is_some())
        .count() as u64;
    let attn = match (recurrent.join(" and "), attending) {
        (r, _) if r.is_empty() => attn,
        (r, 0) => r,
        (r, n) if n == spec.layers => format!("{r} beside {attn} in every layer"),
        (r, n) => format!("{r}, with {attn} in {n} of {} layers", spec.layers),
    };
    let ffn = match &spec.moe {
        _ if spec.plan.iter().all(|l| l.ffn == crate::spec::Ffn::None) => {
            match spec.shared.as_ref().filter(|s| !s.layers.is_empty()) {
                Some(_) => "an MLP in the shared block alone".to_string(),
                None => "no FFN".to_string(),
            }
        }
        _ if spec
            .plan
            .iter()
            .all(|l| matches!(l.ffn, crate::spec::Ffn::ChannelMix)) =>
        {
            "channel mixing in place of an FFN".to_string()
        }
        Some(m) if spec.is_moe() => format!(
            "mixture of {} experts ({} active{})",
            m.experts,
            m.top_k,
            if m.shared_experts > 0 {
                " + shared"
            } else {
                ""
            }
        ),
        _ => format!("dense {}", if spec.mlp.gated { "gated MLP" } else { "MLP" }),
    };
    let mut extras = Vec::new();
    if spec.norm.place == NormPlace::Sandwich {
        extras.push("sandwich norms".to_string());
    }
    if spec.norm.place == NormPlace::Post {
        extras.push("post-sublayer norms".into());
    }
    if spec.attn_variants().iter().any(|(a, _)| a.sinks) {
        extras.push("attention sinks".into());
    }
    if spec.moe.as_ref().is_some_and(|m| m.zero_experts > 0) {
        extras.push("zero-computation experts".into());
    }
    if spec
        .plan
        .iter()
        .any(|l| l.ffn == crate::spec::Ffn::Shortcut)
    {
        extras.push("experts on a shortcut across pairs of layers".into());
    }
    if spec.attn.softcap.is_some() || spec.final_softcap.is_some() {
        extras.push("logit softcapping".into());
    }
    if let Some(g) = spec.gated_streams() {
        extras.push(format!("{} gated residual streams", g.streams));
    }
    if spec.attn_variants().iter().any(|(a, _)| a.qsa.is_some()) {
        extras.push("attention over the blocks an indexer picks".into());
    }
    if spec
        .plan
        .iter()
        .any(|l| matches!(l.span(), Some(AttnSpan::Sliding(_) | AttnSpan::Chunked(_))))
    {
        extras.push("local and global layers".into());
    }
    // Attention layers that skip it (a recurrent layer has no positions to rotate).
    if spec
        .plan
        .iter()
        .any(|l| !l.rope && l.mixer.span_of().is_some())
        && matches!(spec.position, Position::Rope(_))
    {
        extras.push("layers without RoPE".into());
    }
    let extras = if extras.is_empty() {
        String::new()
    } else {
        format!("; {}", extras.join(", "))
    };
    // "An" before a vowel sound: a vowel ("OLMo", "xLSTM"), or an acronym's letter named with
    // one ("LFM2", "MPT"); "A" before any other ("GPT-2", "Llama").
    let mut letters = spec.family.chars();
    let article = match (letters.next(), letters.next()) {
        (Some('A' | 'E' | 'I' | 'O' | 'U' | 'a' | 'e' | 'i' | 'o' | 'u' | 'x'), _) => "An",
        (Some('F' | 'H' | 'L' | 'M' | 'N' | 'R' | 'S' | 'X'), Some(c))
            if c.is_ascii_uppercase() =>
        {
            "An"
        }
        _ => "A",
    };
    match spec.draft {
        Some(d) => format!(
            "{article} {} draft model for speculative decoding: it reads its target's state ({} features) rather than tokens, {attn} over the target's keys and values, {ffn}{extras}.",
            spec.family, d.backbone
        ),
        None => format!("{article} {} decoder: {attn}, {ffn}{extras}.", spec.family),
    }
}

/// The highlights line: what is active, how attention shares heads, how far the context reaches.
pub fn highlights(spec: &Spec, s: &crate::stats::Stats) -> Vec<String> {
    let mut out = Vec::new();
    // A wrapper's towers run on images and audio: the language model's parameters decide.
    let (total, active) = (s.total_params - s.tower_params(), s.active_params);
    out.push(if !s.sparse() && s.tower_params() > 0 {
        "dense — every language-model parameter active every token".to_string()
    } else if !s.sparse() {
        "dense — every parameter active every token".to_string()
    } else {
        format!(
            "sparse — {} of {} {}parameters active per token",
            short(active as u128),
            short(total as u128),
            if s.tower_params() > 0 {
                "language-model "
            } else {
                ""
            }
        )
    });
    let a = &spec.attn;
    // Only layers that attend have heads or positions to speak of (Mamba has neither; Jamba's
    // attention layers rotate nothing).
    let attends = spec.plan.iter().any(|l| l.span().is_some());
    let rotates = spec.plan.iter().any(|l| l.span().is_some() && l.rope);
    if !attends {
        let mut mixers: Vec<String> = Vec::new();
        for l in &spec.plan {
            let m = spec.mixer_describe(l.mixer);
            if !mixers.contains(&m) {
                mixers.push(m);
            }
        }
        out.push(format!("no attention: {} layers", mixers.join(" and ")));
        out.push(format!(
            "order comes from the recurrence itself, to {} context",
            crate::fmt::context(spec.context)
        ));
        return out;
    }
    out.push(match (a.mla.as_ref(), a.kind) {
        _ if a.moa.is_some() => format!(
            "MoA: {} query heads from {} chosen attention experts share {} KV heads",
            a.heads,
            a.moa.map_or(0, |m| m.top_k),
            a.kv_heads
        ),
        (Some(m), _) => format!(
            "MLA: a {}-dim KV latent shared by {} heads{}",
            m.kv_lora_rank,
            a.heads,
            m.indexer.as_ref().map_or(String::new(), |i| format!(
                ", each query attending to its top {} keys",
                i.top_k
            ))
        ),
        (_, AttnKind::Gqa) => format!("GQA: {} query heads share {} KV heads", a.heads, a.kv_heads),
        (_, AttnKind::Mqa) => format!("MQA: {} query heads share one KV head", a.heads),
        _ => format!("MHA: {} heads", a.heads),
    });
    for (layers, o) in &spec.layer_attn {
        out.push(format!(
            "layers {layers}: {} query heads share {} KV heads{}",
            o.heads,
            o.kv_heads,
            if o.sinks && !a.sinks {
                ", with sinks"
            } else {
                ""
            }
        ));
    }
    let positions = if matches!(spec.position, Position::Rope(_)) && !rotates {
        "no RoPE (the attention layers see no positions; the recurrent layers give the order),"
            .to_string()
    } else {
        rope_words(spec)
    };
    out.push(format!(
        "{positions} to {} context",
        crate::fmt::context(spec.context)
    ));
    out
}

/// The recurrent mixer in words, with this model's sizes.
fn mixer_text(g: &Graph) -> Text {
    let spec = &g.spec;
    use crate::spec::Recurrent;
    match &spec.recurrent {
        Some(Recurrent::ShortConv(c)) => short_conv_text(spec.hidden, *c),
        Some(Recurrent::DeltaNet(d)) => delta_text(spec.hidden, *d),
        Some(Recurrent::Lightning(l)) => lightning_text(spec, *l),
        Some(Recurrent::RgLru(r)) => rg_lru_text(spec, *r),
        Some(Recurrent::Rwkv(r)) => rwkv_text(spec, *r),
        Some(Recurrent::MLstm(m)) => mlstm_text(spec, *m),
        Some(Recurrent::Mamba(_)) => s6_text(g),
        Some(Recurrent::Mamba2(_)) => mamba2_text(g),
        None => {
            unreachable!("a mixer part comes from a model with a recurrent mixer")
        }
    }
}
