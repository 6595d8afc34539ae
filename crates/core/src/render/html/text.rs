//! What each part is, in words, with this model's numbers: a one-line summary for hover, an
//! explanation, and the subtleties worth knowing. Generated from the Spec and the part's sums.

use super::parts::{Kind, Part};
use crate::fmt::{grouped, short};
use crate::graph::Graph;
use crate::spec::{
    AttnKind, AttnSpan, GateStore, Mixer, NormKind, NormPlace, Position, QkNorm, Qkv, ScaleForm,
    Scoring, Spec, SsmGate,
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
        Kind::Embedding if spec.bytes.is_some() => {
            super::text_blt::patch_input(spec, spec.bytes.as_deref().expect("checked"))
        }
        Kind::Stack(s) => match spec.bytes.as_deref() {
            Some(bl) => super::text_blt::stack(spec, bl, s, part, share(part.params)),
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
        Kind::Norm if spec.gated_streams.is_some() => {
            let (n, r) = spec.gated_streams.map_or((1, 0), |g| (g.streams, g.rank));
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
            if spec.residual_affine {
                sub[0] = format!("Each add here has four learned vectors of {d}: y = (f(x) + bₒ) ⊙ sₒ + (x + bᵣ) ⊙ sᵣ, the sublayer's output and the stream each shifted and scaled before they are summed.");
            }
            if let Some(l) = spec.attn_res.and_then(|r| r.looped) {
                sub.push(format!("Layers {}–{} run {} times over, each pass from the same stream and summaries, with KV and convolution caches of its own: from the second pass on, each of these layers' query, key, value and FFN inputs takes in a message from the pass before (a mix of that pass's summaries and output by the layer's own queries), through a gate of rank {} that also decides how much of the input to forget.", l.start, l.end - 1, l.passes, l.rank));
            }
            if let Some(r) = spec.attn_res {
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
            if let Some(n) = spec.gated_streams.map(|g| g.streams) {
                return Text {
                    summary: format!("Adds the sublayer's output to each of the {n} residual streams, by that stream's weight."),
                    explanation: format!("xᵢ ← xᵢ + gᵢ · f(x), i < {n}: the {d}-dim output joins every stream as it was before the mix's norm, times its injection weight gᵢ = 2σ(·) in (0, 2), computed from the streams before the sublayer."),
                    subtleties: sub,
                };
            }
            if let Some(h) = spec.hyper {
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
        Kind::Mlp if spec.rwkv.is_some() => channel_mix_text(spec),
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
                Some(l) if !spec.mlp_widths.is_empty() && spec.altup.is_some() => sub.push(format!("Layers {l} have this MLP, {f} wide; each layer's width is its own in this model.")),
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
                    format!("Their {} parameters count in the model's total: the language model stores them beside its self-attention layers, numbered among them.", short(part.params + part.shared_params)),
                ],
            }
        }
        Kind::Loop => {
            let l = spec.looped.expect("a loop part comes from a looped section");
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
            let h = spec.hierarchy.expect("a hierarchy part comes from a hierarchy");
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

/// The attention of `part`'s layers (a variant's, where some layers have their own).
fn attention_text(g: &Graph, part: &Part) -> Text {
    let spec = &g.spec;
    let a = part
        .layers
        .as_ref()
        .and_then(|l| l.iter().next())
        .map_or(&spec.attn, |b| spec.attn_at(b as usize));
    let main = std::ptr::eq(a, &spec.attn);
    let mut sub = vec![
        format!("{}; {}.", rope_words(spec), spans(spec)),
        match spec.draft {
            Some(_) => "The KV cache read here is the target's: a draft step adds no keys or values, so drafting costs no cache memory beyond the target's own.".to_string(),
            None => "At inference the KV cache, not the FLOPs, limits batch size and context: its size is set by how many K/V heads (or how large a latent) each token keeps.".to_string(),
        },
    ];
    if a.qkv_bias || a.o_bias {
        sub.push(format!(
            "Biases on {}.",
            if a.o_bias {
                "q, k, v and the output projection"
            } else {
                "q, k and v"
            }
        ));
    }
    match a.qk_norm {
        QkNorm::PerHead => sub.push("Q and K are RMS-normalized per head before RoPE (one weight shared by all heads), which keeps attention logits bounded.".into()),
        QkNorm::Full => sub.push("Q and K are RMS-normalized over all heads together before being split into heads.".into()),
        QkNorm::PerHeadPostRope => sub.push("Q and K are RMS-normalized per head after RoPE (one weight shared by all heads).".into()),
        QkNorm::L2 => sub.push("Q and K are normalized without a weight after RoPE, in the RoPE layers only.".into()),
        QkNorm::Unit => sub.push("Each head's Q and K are scaled to length 1 before RoPE (no weight), so a score is a cosine between query and key, scaled by the queries' learned factor.".into()),
        QkNorm::HeadWeights => sub.push(format!("Q and K are LayerNorm-ed over each head's {} dims before RoPE, every head with a weight of its own ({}), which keeps attention logits bounded.", a.head_dim, if crate::naming::qk_norm_per_head(spec.layout) { "one LayerNorm per head in the checkpoint".to_string() } else { format!("stored [heads, {}]", a.head_dim) })),
        QkNorm::None => {}
    }
    if spec.plan.iter().any(|l| l.span() == Some(AttnSpan::Whole)) {
        sub.push("No causal mask: within a pass every position attends to every other, later ones too, so a prompt run whole is read both ways. A token decoded afterwards attends to everything cached before it and itself; its logits are not what the same token gets inside a longer prompt, and the executor's decoding follows transformers' token by token.".into());
    }
    if let Position::Buckets(b) = spec.position {
        sub.push(format!("Each head adds a learned bias to every score, read from one table of {} rows × {} heads that all layers share: the row is the bucket of the key's distance from the query ({} buckets for keys before it, {} for keys after it; distances below {} have one each, longer ones share buckets spaced by log distance up to {}, where the last bucket begins){}.", grouped(u128::from(spec.bias_rows(b))), a.heads, b.buckets / 2, b.buckets / 2, b.buckets / 4, b.max_distance, if spec.prompt.is_some() { "; a query and a key in different segments (the prompt and the text) read a row of their own for that pair instead" } else { "" }));
    }
    if let Some(c) = a.clip_qkv {
        sub.push(format!("Q, K and V are clamped to [−{c}, {c}] before attention, a guard against the activation spikes that destabilized training."));
    }
    if let Some(c) = a.softcap {
        sub.push(format!("Scores are softcapped: {c}·tanh(s/{c})."));
    }
    if a.sinks {
        sub.push("Each head has a learned sink logit that joins the softmax and is then dropped, so a head can attend to nothing.".into());
    }
    if let Some(dm) = a.dynamic_mask {
        sub.push(format!("Dynamic mask attention: each K/V head scores every key from the values of all heads, Δ = exp(A ⊙ softplus(W_dt · v)), and adds Δ to that key's score in its query heads; a query that sees more than {k} keys attends only to the {k} with the highest Δ, so long contexts attend sparsely while the cache still keeps every key.", k = dm.keep));
    }
    if let Some(a) = spec.altup {
        let n = a.streams;
        sub.push(format!(
            "Alternating updates (AltUp): the stream is {n} versions of the hidden state ({n} × {d} values per token), the embedding and {} projections of it, each rescaled to the embedding's RMS. Each layer first predicts every version from all {n}, Pⱼ = Xⱼ + Σᵢ Cⱼᵢ Xᵢ, with {}×{} coefficients a small router computes from version {} (tanh of a projection of its normed value); it computes only on that version's prediction, so a layer costs about what one {d}-wide stream costs; then corrects every prediction by how far the layer moved the one it computed on, Xᵢ = Pᵢ + cᵢ (O − P{}), cᵢ = 1 + the router's coefficient over the new value. At the end the other versions are projected back, rescaled, and all {n} averaged.",
            n - 1,
            n,
            n,
            a.active,
            a.active,
            d = spec.hidden
        ));
    }
    if let Some(r) = spec.laurel {
        sub.push(format!("LAuReL: beside the attention, a rank-{r} branch of its normed input (down to {r}, back up, normed) is added back to that normed input x̂, and the result joins the attention's residual scaled by 1/√2: (x + attention(x̂) + x̂ + branch(x̂)) / √2."));
    }
    if let Some(v) = &a.v4 {
        let (h, hd, r) = (a.heads, a.head_dim, v.rope_dim);
        let w = spec.v4_window();
        sub.push(format!("DeepSeek-V4's attention: each of the {h} heads' queries comes from a {q}-dim latent (normed, then each head RMS-normed without a weight), and one {hd}-dim head, RMS-normed, is both the key and the value of every query head: the cache holds one vector per token, not two per K/V head. The last {r} dims of queries and keys rotate by position (interleaved pairs); since the values are the rotated keys, the output's last {r} dims are rotated back by the query's position, so each value enters by its distance from the query. Every layer attends over its last {w} tokens, with a learned sink per head.", q = v.q_lora_rank));
        let (csa, hca) = (&v.csa.0, &v.hca.0);
        if !csa.is_empty() {
            sub.push(format!("Compressed sparse attention (layers {csa}): a compressor pools every window of {m} tokens into one {hd}-dim entry, a softmax over the slots (feature by feature) of gates projected from the tokens plus a learned bias per slot weighing the tokens' projected parts; the windows overlap, each entry reading its own window and the one before it ({two} slots). An indexer with a compressor of its own ({ih} heads of {id} dims from the query latent) scores every closed window's entry, Σₕ wₕ · ReLU(qₕ · k), and each query reads the window's keys and its top {k} entries: its cost stays bounded however long the context, while the entries cached grow by one per {m} tokens.", m = v.csa.1, two = 2 * v.csa.1, ih = v.index.heads, id = v.index.head_dim, k = v.index.top_k));
        }
        if !hca.is_empty() {
            sub.push(format!("Heavily compressed attention (layers {hca}): the same pooling over windows of {m} tokens, without overlap, and each query reads every entry of the windows closed by its position besides its window's keys: the cache grows by one {hd}-dim entry per {m} tokens.", m = v.hca.1));
        }
        sub.push(format!("The output projection is grouped and low-rank: the heads form {g} groups, each projected from {per} to {o} features on its own, then all {go} mixed back to the hidden size.", g = v.o_groups, per = h * hd / v.o_groups, o = v.o_lora_rank, go = v.o_groups * v.o_lora_rank));
    }
    if let Some(h) = spec.hyper.filter(|h| h.sinkhorn.is_some()) {
        sub.push(format!(
            "Manifold-constrained hyper-connections: the residual stream is {n} streams of {d} values per token ({w} in all), each starting as the embedding. Before each sublayer, (2 + {n}) × {n} logits computed from the streams themselves (divided by their RMS, with no learned scale) give pre gates σ(·) + ε, which weigh the {n} streams into the sublayer's one input; post gates {m} · σ(·), each stream's share of the sublayer's output; and a {n} × {n} mix of the streams among themselves, a softmax made doubly stochastic (rows and columns summing to 1) by {it} Sinkhorn iterations, so mixing neither grows nor shrinks the stream. Each stream becomes its mix of the old streams plus its share of the output. A last mix of {n} gates weighs the streams into one before the final norm.",
            n = h.streams,
            d = spec.hidden,
            w = h.streams * spec.hidden,
            m = crate::fmt::float(h.magnitude),
            it = h.sinkhorn.unwrap_or(0),
        ));
    } else if let Some(h) = spec.hyper {
        sub.push(format!(
            "Hyper-connections: the residual stream is {n} streams of {d} values per token ({w} in all), each starting as the embedding. Before each sublayer, 2 × {n} logits computed from the streams themselves (divided by their RMS, with no learned scale) give pre gates σ(·) + ε, which weigh the {n} streams into the sublayer's one input, and post gates {m} · σ(·) + ε, each stream's share of the sublayer's output, added to it. A last mix of {n} gates weighs the streams into one before the final norm. The stream costs {n}× the activation memory of a plain residual; the KV cache is unchanged.",
            n = h.streams,
            d = spec.hidden,
            w = h.streams * spec.hidden,
            m = crate::fmt::float(h.magnitude)
        ));
    }
    if let Some(g) = spec.gated_streams {
        sub.push(format!(
            "Gated residual streams: the residual stream is {n} streams of {d} values per token ({w} in all), each starting as the embedding. Before each sublayer the streams are RMS-normed one by one and all {w} features scaled by (1 + γ); a rank-{r} bottleneck read from all of them, σ(W↑ · SiLU(W↓ · x̂ / {n})), gates every feature, and the sublayer reads the mean of the {n} gated streams. Its output is added to each stream (as it was, not normed) times that stream's injection weight 2σ(Wᵢₙⱼ · x̂ / {n}), between 0 and 2. No norm of the model's own comes before a sublayer: the mix's norm is the one. A last mix without injection makes the head's input, and there is no final norm. The stream costs {n}× the activation memory of a plain residual; the KV cache is unchanged.",
            n = g.streams,
            d = spec.hidden,
            w = g.streams * spec.hidden,
            r = g.rank,
        ));
    }
    if spec.residual_scales {
        sub.push("The residual stream is scaled by a learned vector where each sublayer joins it: x ⊙ ρ + f(x), ρ one per layer and sublayer.".into());
    }
    if let Some(c) = a.cca {
        let (h, kv, hd) = (a.heads, a.kv_heads, a.head_dim);
        sub.push(format!("Compressed convolutional attention (ZAYA): Q and K, projected as usual, are mixed along time by two causal convolutions over their {} channels together: {} taps per channel, then {} taps across the {hd} channels of each of the {} heads. Each keeps a residual path: a query head adds the mean of its query and its K/V head's key, a key the mean of those over the {} query heads it serves. Half the value features come from the token itself, half from the token before it. Q and K are then scaled to length √{hd}, each key times a learned factor of its K/V head. Between decoding steps the layer carries the convolutions' last {} inputs and the last token's delayed value, beside its KV cache.", (h + kv) * hd, c.depthwise, c.grouped, h + kv, h / kv, c.reach()));
    }
    if let Some(m) = a.moa {
        sub.push(format!("A mixture of attention heads: a router scores each token against {} attention experts and keeps its {} best (a softmax over their logits weights them). Each chosen expert's query projection gives {} heads that share the layer's one set of {} K/V heads, so the K/V cache is that of {} heads while {} query heads attend; its output projection maps its heads back, weighted by its gate, and a bias shared by the experts is added. K and V are the two halves of one projection.", m.experts, m.top_k, a.kv_heads, a.kv_heads, a.kv_heads, a.heads));
    }
    if a.v_head_dim != a.head_dim && a.mla.is_none() {
        sub.push(format!("Value heads are {} wide, narrower than the {}-dim query and key heads: scores need the wider dot product, the cache and the output projection only the narrower values.", a.v_head_dim, a.head_dim));
    }
    if a.v_scale != 1.0 {
        sub.push(format!(
            "The values are scaled by {} as they are projected.",
            crate::fmt::float(a.v_scale)
        ));
    }
    // The other variants, said on the part of the model's main attention.
    for (layers, o) in spec.layer_attn.iter().filter(|_| main) {
        let mut own = vec![format!(
            "{} query heads sharing {} K/V heads",
            o.heads, o.kv_heads
        )];
        if o.head_dim != a.head_dim {
            own.push(format!(
                "heads of {} dims rather than {}",
                o.head_dim, a.head_dim
            ));
        }
        if let (Some(om), Some(am)) = (&o.mla, &a.mla) {
            let ranks = |m: &crate::spec::Mla| (m.q_lora_rank, m.kv_lora_rank);
            if ranks(om) != ranks(am) {
                let q = |m: &crate::spec::Mla| m.q_lora_rank.map_or("no".into(), |r| r.to_string());
                own.push(format!(
                    "latents of {} (query) and {} (keys and values) dims rather than {} and {}",
                    q(om),
                    om.kv_lora_rank,
                    q(am),
                    am.kv_lora_rank
                ));
            }
            if om.qk_rope_head_dim != am.qk_rope_head_dim {
                own.push(format!(
                    "{} rotary dims per head rather than {}",
                    om.qk_rope_head_dim, am.qk_rope_head_dim
                ));
            }
            if o.v_head_dim != a.v_head_dim {
                own.push(format!(
                    "values of {} dims rather than {}",
                    o.v_head_dim, a.v_head_dim
                ));
            }
            if am.indexer.is_some() && om.indexer.is_none() {
                own.push("no indexer: each query attends to every key it can see".into());
            }
        }
        if o.block_index.is_some() && a.block_index.is_none() {
            own.push("the lightning indexer: each query group attends only to the blocks of keys its index head picks".into());
        }
        if o.v_from_k {
            own.push("no V projection: the values are the keys as projected, before K's norm and RoPE, so the weights hold one matrix where there were two".into());
        }
        if o.shares_kv && spec.draft.is_some() {
            own.push("no K or V projection at all: they attend over the keys and values their target's last layer of their kind cached, so a draft step adds nothing to any KV cache".into());
        } else if o.shares_kv {
            own.push("no K or V projection at all: they attend over the keys and values of the last layer of their kind before them, so they add nothing to the KV cache".into());
        }
        if o.sinks && !a.sinks {
            own.push("a learned sink logit per head that joins the softmax and is then dropped, so a head can attend to nothing".into());
        }
        let sliding = layers
            .iter()
            .all(|b| matches!(spec.plan[b as usize].span(), Some(AttnSpan::Sliding(_))));
        let why = if sliding && o.kv_heads > a.kv_heads {
            " Their sliding window keeps their cache small whatever the context, so they can afford more K/V heads."
        } else {
            ""
        };
        sub.push(format!(
            "Layers {layers} have an attention of their own: {}.{why}",
            own.join("; ")
        ));
    }
    if spec.skip_first_attn_norm {
        sub.push("Layer 0 has no norm before its attention: it reads the embeddings, already normed, as they are.".into());
    }
    if a.o_bias_last {
        sub.push(format!("Only the last layer's output projection has a bias, stored apart as its own tensor (layer {}).", g.spec.layers.saturating_sub(1)));
    }
    if a.differential {
        sub.push(format!("Differential attention: each head mixes the values of two K/V heads side by side ({} dims); then the first {} heads minus λ times the other {} (λ = exp(λq₁·λk₁) − exp(λq₂·λk₂) + λ_init, learned per layer; λ_init = 0.8 − 0.6·e^(−0.3·layer)) are RMS-normed per pair and scaled by 1 − λ_init, cancelling attention noise both maps share.", 2 * a.head_dim, a.heads / 2, a.heads / 2));
    }
    if let Some(g) = a.out_gate {
        let (what, per) = if g.per_head {
            (
                format!("{} heads", a.heads),
                "one gate per head, shared by its features",
            )
        } else {
            (
                format!("{} concatenated head features", a.heads * a.v_head_dim),
                "one gate per feature",
            )
        };
        let stored = match g.stored {
            GateStore::InQuery => " Its weights are the query projection's second half per head: each head's query rows, then its gate rows, twice the query width in one tensor.",
            GateStore::BeforeQkv => " Its weights are stored first in the stacked projection: every gate row, then the queries, keys and values, in one tensor.",
            GateStore::Own => "",
        };
        sub.push(format!("An output gate: the {what} are multiplied by {}(x · W_g), {per}, projected from the layer's input, so each token can silence a head before the output projection.{stored}", g.symbol()));
        if g.bias {
            sub.push(format!("The gate has a learned bias per head ({} values, stored apart), added to each of the head's gate logits before the {}: it sets how open a head is by default.", a.heads, g.symbol()));
        }
    }
    if let Some(q) = a.query_scale {
        let where_ = if q.nope_only {
            format!(
                "In the {} layers without RoPE, the",
                g.spec.layers_where(|l| q.applies(l)).len()
            )
        } else {
            "The".to_string()
        };
        let f = crate::fmt::float;
        let how = match q.form {
            ScaleForm::Stepped => format!(
                "1 + {} · ln(1 + ⌊(p + {}) / {}⌋)",
                f(q.beta),
                q.shift,
                q.length
            ),
            ScaleForm::Power => format!("(1 + (p + {}) / {})^{}", q.shift, q.length, f(q.beta)),
            ScaleForm::Floored => format!(
                "1 + {} · ln(max((p + {}) / {}, 1))",
                f(q.beta),
                q.shift,
                q.length
            ),
        };
        let far = 64 * q.length;
        sub.push(format!("{where_} query at position p is multiplied by {how} ({} at position {far}), so that the scores keep their contrast as the context, and with it the softmax's denominator, grows.", f(q.at(far))));
    }
    if let Some(kc) = a.kv_conv {
        let taps = kc.conv.taps;
        sub.push(format!("Once projected, the keys and the values each pass through a causal convolution over their last {taps} positions, channel by channel, added to them: each key and value carries a little of the tokens just before it. The convolution's last {} inputs are carried from token to token beside the KV cache.", taps - 1));
        if kc.dynamic {
            sub.push(format!("The convolution's taps are not fixed: each token adds taps of its own, projected from the K or V input (one set of {taps} per K/V head), to the stored ones; the sum is divided by √{}.", 2 * taps + 1));
        } else if kc.conv.scaled {
            sub.push(format!(
                "The convolution's sum is divided by √{}.",
                taps + 1
            ));
        }
    }
    if let Some(c) = a.l2_clip {
        sub.push(format!("Q (times a learned scale per head and feature) and K are scaled down to length {} per head where they are longer: no score can grow past a bound, whatever the input.", crate::fmt::float(c)));
    }
    if a.token_sinks {
        sub.push("Each head's sink logit, the weight of attending to nothing, is projected from the token itself: a query can decline to attend where it finds nothing useful.".into());
    }
    if a.kv_inputs {
        sub.push("K and V are projected from inputs of their own: the block attention residual mixes three inputs for these layers, one each for Q, K and V, each normed by its own weight.".into());
    }
    if let Some(r) = a.rel_logits {
        sub.push(format!("There is no RoPE: each query projects the input to {} relative features per head, which mix a learned bank of {} bias-by-distance profiles into one bias for each key up to {} positions back (none beyond){}. How far back attention looks is learned per token.", r.d_rel, r.d_rel, r.extent, if a.query_scale.is_some() { ", scaled with the queries" } else { "" }));
    }
    if a.sub_norm {
        sub.push(format!("The {} concatenated head features are normalized (their own weight) before the output projection: BitNet's sub-norm, which keeps the inputs of its low-bit projections in range.", a.heads * a.v_head_dim));
    }
    match a.qkv {
        Qkv::Separate => {}
        Qkv::Stacked => sub.push(
            "The checkpoint stores q, k and v as one tensor (all query rows, then key, then value); each head reads its block of rows."
                .into(),
        ),
        Qkv::Parts(n) => sub.push(format!(
            "The checkpoint stores q, k and v as one tensor in {n} parts, each holding the query, then the value, then the key rows of a 1/{n} share of the heads (a model-parallel layout)."
        )),
        Qkv::Grouped => sub.push(
            "The checkpoint stores q, k and v as one tensor grouped by K/V head: each group's query rows, then its key and value rows, group after group."
                .into(),
        ),
    }
    if a.v_norm {
        sub.push("Each value head is RMS-normed without a weight, as Q and K are normed per head with one: with both sides of every score at unit scale the scores need no 1/√head_dim, and Gemma 4 applies none.".into());
    }
    if a.v_norm {
        // Said above, with why.
    } else if a.scale_dim == 1.0 && a.scale_mult == 1.0 && a.head_dim != 1 {
        sub.push("Scores are not scaled by 1/√head_dim (the config turns the scaling off).".into());
    } else if a.scale_dim == 1.0 && a.head_dim != 1 {
        sub.push(format!(
            "Scores are scaled by the config's attention multiplier, {}, not by 1/√head_dim.",
            a.scale_mult
        ));
    } else if a.scale_dim == (a.head_dim * a.head_dim) as f64 {
        sub.push(format!(
            "Scores are scaled by 1/head_dim (1/{}), not 1/√head_dim: Q and K are RMS-normalized per head, so their dot product grows with head_dim rather than its square root.",
            a.head_dim
        ));
    } else if a.scale_dim != a.head_dim as f64 && a.mla.is_none() {
        sub.push(format!(
            "Scores are scaled by 1/√{} (query_pre_attn_scalar), not 1/√head_dim.",
            crate::fmt::float(a.scale_dim)
        ));
    }
    if let Some((q, kv)) = a.mla.as_ref().and_then(|m| m.lora_scales) {
        let indexer = if a.mla.as_ref().is_some_and(|m| m.indexer.is_some()) {
            " The indexer reads the query latent with the query's factor (which changes its scores, not which keys it keeps)."
        } else {
            ""
        };
        sub.push(format!("The query is multiplied by {} = √(hidden / q_lora) and the normed KV latent by {} = √(hidden / kv_lora), so every head's keys and values carry that factor too: the latents are rescaled to the width of the stream they came from.{indexer}", crate::fmt::float(q), crate::fmt::float(kv)));
    }
    if a.mla.as_ref().is_some_and(|m| m.rope_key_norm) {
        sub.push("The rotary key part shared by all heads is RMS-normed, with a weight of its own, before RoPE turns it: the only part of the key that skips the latent's norm gets one of its own.".into());
    }
    if let Some(q) = a.qsa {
        sub.push(format!(
            "QSA, Qwen4-Exp's indexer: one projection gives {ih} index queries of {id} dims (RMS-normed per head and rotated like the attention's heads) and one raw {id}-dim key per token, which is cached as it is. Every complete block of {r} visible tokens is summarized by its keys' mean, RMS-normed and rotated at the block's first position; a query scores each block by the sum over its index heads of ReLU(q · k) / √{id}, keeps its {blocks} best blocks ({budget} tokens) and the up to {tail} tokens after its last complete block, and every attention head attends there alone: at most {most} keys a query, however long the context. The index keys add {id} values per token to the cache.",
            ih = q.heads,
            id = q.head_dim,
            r = q.ratio,
            blocks = q.blocks(),
            budget = q.budget,
            tail = q.ratio - 1,
            most = q.budget + q.ratio - 1,
        ));
    }
    if let Some(bi) = a.block_index {
        let group = a.heads / bi.heads.max(1);
        sub.push(format!(
            "MiniMax-M3's lightning indexer: {ih} index heads of {id} dims score every earlier key by q · k (their own projections, RMS-normed per head and rotated by the attention's RoPE), the scores are max-pooled over blocks of {b} keys, and each query keeps its {local} latest block{s} and the best of the rest, {k} blocks in all. Index head h chooses for the {group} query heads {group}h to {group}h + {last}, so a query attends to at most {keys} keys however long the context; the index keys add {id} values per token to the cache.",
            ih = bi.heads,
            id = bi.head_dim,
            b = bi.block,
            local = bi.local,
            s = if bi.local == 1 { "" } else { "s" },
            k = bi.top_k,
            last = group.saturating_sub(1),
            keys = bi.top_k.saturating_mul(bi.block),
        ));
    }
    if let Some(ix) = a.mla.as_ref().and_then(|m| m.indexer.as_ref()) {
        let where_ = if spec.indexer_reusers().is_empty() && ix.own.len() == spec.layers {
            "per layer".to_string()
        } else if spec.indexer_reusers().is_empty() {
            format!(
                "in each of the {} layers that have one (layers {})",
                ix.own.len(),
                ix.own
            )
        } else {
            format!("in each of the {} layers that run an indexer of their own (layers {}; the others reuse the last one's choice)", ix.own.len(), ix.own)
        };
        sub.push(format!(
            "DeepSeek sparse attention: an indexer of {h} heads × {d} dims scores every earlier token (Σₕ wₕ · ReLU(qₕ · k)) and each query attends only to its {k} best. The indexer's keys add {d} values per token {where_} to the cache, and attention past {k} tokens of context costs the same for every further token; only the indexer's cheap scores still grow with context.",
            h = ix.heads,
            d = ix.head_dim,
            k = ix.top_k
        ));
    }
    if let Some(m) = a.mla.as_ref().filter(|m| m.q_gate) {
        let ql = m.q_lora_rank.unwrap_or(0);
        sub.push(format!("There is no separate query up-projection: one projection of the normed query latent beside the raw one ({} features) gives each head its {}-dim query and then {} gate values, σ of which scale that head's output before the output projection.", 2 * ql, m.qk_nope_head_dim + m.qk_rope_head_dim, a.v_head_dim));
    }
    if let Some(g) = &spec.gated_norm {
        let moe = spec.layers_where(|l| l.moe());
        sub.push(format!("Gated norms: the norm before the attention (in every layer), and the one before the experts in layers {moe}, multiply their output y by σ(W_up · SiLU(W_down · y)), a rank-{} gate computed from y itself.", g.rank));
    }
    let (summary, explanation) = if let Some(m) = &a.mla {
        (
            format!("{} heads read keys and values from a {}-dim latent; the cache holds {} values per token per layer{}.", a.heads, m.kv_lora_rank, m.kv_lora_rank + m.qk_rope_head_dim, m.indexer.as_ref().map_or(String::new(), |i| format!(", and the indexer {} more where it runs", i.head_dim))),
            format!(
                "Multi-head latent attention compresses the input to a {kvl}-dim KV latent (and {q}), which every head expands to its own {nope}-dim key and {v}-dim value. {position} Only the latent and the {shared} key are cached: {c} values per token per layer instead of {full} for full multi-head attention.",
                position = if matches!(spec.position, Position::Rope(_)) {
                    format!("Position enters through a separate {}-dim rotary key shared by all heads.", m.qk_rope_head_dim)
                } else {
                    format!("A separate {}-dim key part is shared by all heads; it is not rotated: this model's attention has no positional encoding, order comes from its recurrent layers.", m.qk_rope_head_dim)
                },
                shared = if matches!(spec.position, Position::Rope(_)) { "rotary" } else { "shared" },
                kvl = m.kv_lora_rank,
                q = m.q_lora_rank.map_or("queries directly from the input".to_string(), |q| format!("a {q}-dim query latent")),
                nope = m.qk_nope_head_dim,
                v = a.v_head_dim,
                c = m.kv_lora_rank + m.qk_rope_head_dim,
                full = 2 * a.heads * a.head_dim,
            ),
        )
    } else {
        let kind = match a.kind {
            AttnKind::Mha => format!(
                "{} heads, each with its own K and V (d_h={})",
                a.heads, a.head_dim
            ),
            AttnKind::Mqa => format!(
                "{} query heads share a single K/V head (d_h={})",
                a.heads, a.head_dim
            ),
            _ => format!(
                "{} query heads share {} KV heads (d_h={})",
                a.heads, a.kv_heads, a.head_dim
            ),
        };
        let explanation = match spec.draft {
            Some(_) => format!(
                "Attention to the target: each draft step's query, at the last token's position, scores the keys the target cached for the prompt (all of them in full layers; in sliding layers the last window and one more), softmax turns the scores into weights, and the target's values are mixed by them. {kind}: this model projects no keys and values and stores none; they attend over the keys and values their target's last layer of their kind cached."
            ),
            None => format!(
                "Causal self-attention: each position scores every earlier one, softmax turns the scores into weights, and the values are mixed by them. {kind}: the KV cache stores {} keys and values per token per layer.",
                a.kv_heads * a.head_dim
            ),
        };
        (format!("{kind}."), explanation)
    };
    Text {
        summary,
        explanation,
        subtleties: sub,
    }
}

/// Zamba2's shared transformer blocks.
fn shared_text(spec: &Spec, s: &crate::spec::SharedBlocks) -> Text {
    let (a, d, f) = (&spec.attn, spec.hidden, spec.mlp.intermediate);
    let blocks = if s.blocks == 1 {
        "one block".to_string()
    } else {
        format!("{} blocks taken in turn", s.blocks)
    };
    let adapted = if s.adapter_rank == 0 {
        "nothing"
    } else if s.attn_adapters {
        "the fused gate/up projection and Q, K and V"
    } else {
        "the fused gate/up projection"
    };
    Text {
        summary: format!(
            "Attention and an MLP whose weights {} layers share ({blocks}), reading the stream beside the token embeddings.",
            s.layers.len()
        ),
        explanation: format!(
            "In layers {}, before the Mamba2 mixer, a transformer block reads [stream, embeddings] ({} features), normed: {} attention heads of {} (K and V in {} heads), then a norm and a gated {} MLP {f} wide, with no residual inside. Its output, projected by this layer's own {d} × {d} matrix, is added to what the mixer reads, not to the stream. The block's weights are stored once, under the first layer that runs it, and reused by every later visit.",
            s.layers,
            2 * d,
            a.heads,
            a.head_dim,
            a.kv_heads,
            spec.mlp.act.label(),
        ),
        subtleties: vec![
            if s.adapter_rank > 0 {
                format!("Each visit has its own rank-{} adapter on {adapted}: W·x + B·(A·x). Sharing keeps the parameters down; the adapters let each depth use the block a little differently.", s.adapter_rank)
            } else {
                "Every visit runs exactly the same weights: the block adds depth without adding parameters, and only the layer's own output projection differs.".into()
            },
            format!("Scores are scaled by 1/√({} / 2), the width of a head before the input was doubled by the embeddings beside it.", a.head_dim),
            "Every visit keeps its own keys and values: the KV cache grows in each layer that runs a block, although the weights are shared.".into(),
        ],
    }
}

/// Gemma 4's per-layer embeddings, as the part in each layer that gates them in.
fn ngram_text(spec: &Spec) -> Text {
    let p = spec
        .ngram_ple
        .as_ref()
        .expect("an n-gram part comes from n-gram embeddings");
    let (d, n) = (spec.hidden, spec.streams());
    let rows: u128 = (0..p.layers.len()).map(|i| p.rows(i) as u128).sum();
    let (size, count) = p.shards(p.rows(0));
    Text {
        summary: format!("In layers {}, each token's n-grams read {} rows of a hashed table, gated into every stream.", p.layers, p.heads()),
        explanation: format!(
            "Hashed n-gram embeddings: for each n from 2 to {ng}, the token and the n − 1 before it (never reaching back past an end of sequence, id {eos}) are each multiplied by an odd constant and XORed; {per} heads per n take that modulo a prime of their own (from {base} on) and read a {hd}-value row of the layer's table. The {heads} rows, {w} values, give one {d}-value value and, per stream, a key; each of the {n} streams, normed, is matched with its key (a scaled dot product, signed square root, σ) to gate the value, and the gated values plus a causal convolution of them ({k} taps {ng} positions apart, normed, then SiLU) join the streams before the mixer reads them.",
            ng = p.ngram,
            eos = p.eos,
            per = p.heads_per_ngram,
            base = p.vocab_base,
            hd = p.head_dim(),
            heads = p.heads(),
            w = p.width,
            k = p.kernel,
        ),
        subtleties: vec![
            format!("The tables are most of the model: {} rows of {} in all ({} parameters), each layer's its own size (its heads' primes summed, padded to a multiple of {}). A token reads {} rows of each, so the tables can live in slower memory; checkpoints store each in shards of {size} rows ({count} in layer {}'s).", grouped(rows), p.head_dim(), short(rows * p.head_dim() as u128), p.divisor, p.heads(), p.layers.first().unwrap_or(0)),
            format!("Between decoding steps each such layer carries its last {} ids and its convolution's last {} inputs per channel ({} channels).", p.ngram - 1, p.reach(), n * d),
            "The multipliers, the heads' sizes and their offsets are stored in the checkpoint too, as int64 buffers, and counted with the parameters as transformers counts its state dict.".into(),
        ],
    }
}

fn per_layer_text(spec: &Spec, p: crate::spec::PerLayerInput) -> Text {
    let (l, w, d) = (spec.layers, p.width, spec.hidden);
    Text {
        summary: format!("Each layer adds {w} values of its own per token, gated by the stream."),
        explanation: format!(
            "Per-layer embeddings: besides the usual embedding, every token has {l} × {w} values, one share per layer, from a second table ({} rows) plus the embeddings projected to the same size. At the end of layer b, the stream is projected to {w} values, passed through {}, multiplied by layer b's share, projected back to {d}, normed and added: each layer gets a token-specific signal that does not have to be carried through the stream.",
            p.vocab,
            spec.mlp.act.label()
        ),
        subtleties: vec![
            format!("The second table holds {} parameters, more than the layers' own weights in small models: it is read one row per token, so it can live in slower memory while the layers run.", short(p.vocab as u128 * (l * w) as u128)),
            format!("The two sources are combined before the first layer: (RMSNorm(W · x / √{d}) + table row · √{w}) / √2, normed per layer's {w} values."),
        ],
    }
}

fn moe_text(g: &Graph, part: &Part, share: f64) -> Text {
    let spec = &g.spec;
    let m = spec.moe.as_ref().expect("MoE part of a MoE model");
    let routing = match m.scoring {
        Scoring::Softmax if m.correction_bias => "a softmax over all experts' logits, plus a learned correction bias (used for choosing only), picks the top-k".to_string(),
        Scoring::Softmax => "a softmax over all experts' logits picks the top-k".to_string(),
        Scoring::Sigmoid => format!(
            "each expert's sigmoid score{} picks the top-k{}{}",
            if m.correction_bias {
                " plus a learned correction bias (used for choosing only)"
            } else {
                ""
            },
            if m.n_group > 1 {
                format!(
                    ", only among the best {} of {} expert groups",
                    m.topk_group, m.n_group
                )
            } else {
                String::new()
            },
            // DeepSeek-V4 with σ scores: its first layers choose by token id.
            m.hash_layers.as_ref().map_or(String::new(), |h| format!(
                "; in layers {h} a stored table picks them by token id instead (hash routing: the same experts for the same token, whatever the context), weighted by the chosen scores normalized to sum to 1"
            ))
        ),
        Scoring::TopkSoftmax => {
            "the top-k logits are chosen, then softmaxed among themselves".into()
        }
        Scoring::SparseMixer { eps } => format!("SparseMixer: the best logit's expert, then the best of the rest; each weighted by a softmax over only the logits within a relative {} of its own, so near-ties share weight and the rest get none", 2.0 * eps),
        Scoring::SigmoidBiasedLogits => "each expert's logit plus a learned correction bias (used for choosing only) picks the top-k, weighted by the sigmoid of its logit".into(),
        Scoring::TopkSigmoid => {
            "the top-k logits are chosen and their sigmoids scale each chosen expert's input".into()
        }
        Scoring::SqrtSoftplus => format!("each expert's score is √softplus of its logit; {}, and the chosen experts are weighted by their scores normalized to sum to 1", match &m.hash_layers {
            Some(h) => format!("in layers {h} a stored table picks the top-k by token id (hash routing: the same experts for the same token, whatever the context); elsewhere the scores plus a learned correction bias (used for choosing only) pick them"),
            None => "the scores plus a learned correction bias (used for choosing only) pick the top-k".into(),
        }),
        Scoring::SigmoidSink => format!("each routed expert's sigmoid score plus a learned correction bias (used for choosing only) picks the top-k; the router also scores the {} shared experts, and the chosen and the shared experts are weighted by their sigmoids normalized over all of them, times a learned scalar, so the shared experts act as a sink that takes weight from the routed ones", m.shared_experts),
    };
    // ZAYA's router is an MLP of its own, and picks one class among the experts and one more.
    let routing = match m.router_mlp {
        Some(w) => format!("an MLP of its own reads the FFN input: projected to {w} features, plus in every layer but the first the previous layer's router state scaled by a learned vector (the sum is carried on to the next layer), RMS-normed, through two GELU layers to logits over the {} experts and one class that computes nothing; the softmax's best class after a stored balancing bias is chosen, weighted by its probability, and the last class adds nothing", m.experts),
        None => routing,
    };
    let mut sub = vec![
        format!("Routing: {routing}{}.", if m.routed_scaling != 1.0 { format!("; weights are scaled by {}", m.routed_scaling) } else { String::new() }),
        format!("Of the {} stored here, a token uses {} experts' worth ({share:.1}% of the model is in this part).", short(part.params), m.top_k),
    ];
    if let Some((cg, cu)) = m.glu_softcaps {
        sub.push(format!("The experts' SwiGLU has softcaps: {cg}·tanh(g/{cg}) · σ(g) · {cu}·tanh(u/{cu}), the gate's linear factor and the up projection kept bounded while the sigmoid sees the raw gate.", cg = crate::fmt::float(cg), cu = crate::fmt::float(cu)));
    }
    if m.shared_experts > 0 {
        sub.push(format!(
            "{} shared expert{} of width {} run{} on every token, beside the routed ones.",
            m.shared_experts,
            if m.shared_experts > 1 { "s" } else { "" },
            m.shared_intermediate,
            if m.shared_experts > 1 { "" } else { "s" }
        ));
        if m.shared_gate {
            sub.push("Its output is scaled by σ(x · wₛ): a learned per-token gate decides how much of it joins the routed experts' sum.".into());
        }
        if m.scoring == Scoring::SigmoidSink {
            sub.push("Each shared expert is an MLP of its own (their weights stacked in one tensor per projection), its output weighted by the router's normalized score for it.".into());
        }
        if m.shared_average {
            sub.push("The routed experts' sum and the shared output are averaged, (R + S) / 2, not added.".into());
        }
    }
    if m.zero_experts > 0 {
        sub.push(format!("Beside the {} routed experts the router scores {} zero-computation experts, which hold no weights: a token that picks one gets its own input back, weighted, at no cost, so a token runs between 0 and {} real experts (the active count here assumes {}).", m.experts, m.zero_experts, m.active(), m.active()));
    }
    if m.router_norm {
        sub.push(format!("The router reads the stream itself, not the MLP's normed input: RMS-normed without a weight, times a learned vector and 1/√{}; the chosen weights are renormalized to sum to 1{}.", spec.hidden, if m.expert_scale { ", then each multiplied by its expert's own learned scale" } else { "" }));
    }
    if spec
        .plan
        .iter()
        .any(|l| l.ffn == crate::spec::Ffn::DenseAndMoe)
    {
        sub.push("The experts run beside the dense MLP in every layer, not in its place: they read a norm of their own of the stream, each output is normed, and the sum is normed once more before it joins the stream.".into());
    }
    if spec
        .plan
        .iter()
        .any(|l| l.ffn == crate::spec::Ffn::Shortcut)
    {
        sub.push("The experts sit on a shortcut: in the first layer of each pair they read the MLP's normed input beside the dense MLP, and their output joins the stream only at the end of the second layer, after its attention and MLP. In a deployment the experts' all-to-all traffic overlaps that second layer's compute.".into());
    }
    if let Some(c) = m.router_softcap {
        sub.push(format!("The router's logits are softcapped, {c}·tanh(l/{c}), before they are scored: no expert's score can run away.", c = crate::fmt::float(c)));
    }
    if m.out_bias {
        sub.push("A bias of the block's own is added to the experts' weighted sum.".into());
    }
    if m.post_norm {
        sub.push("The MoE block's output, routed and shared experts together, is normed before it joins the residual stream; dense layers have no such norm.".into());
    }
    if let Some(c) = &m.act_clips {
        let clipped = |l: &[f64]| l.iter().filter(|&&x| x != 0.0).count();
        sub.push(format!("The experts' gated activation is clipped after the activation, min(act(gate), L) · clamp(up, −L, L), by a limit of each layer's own: the routed experts in {} of {} layers, the shared ones in {} (a limit of 0 clips nothing).", clipped(&c.routed), c.routed.len(), clipped(&c.shared)));
    }
    match m.swiglu_limit {
        Some(l) if m.swiglu_plain => sub.push(format!(
            "The {}SwiGLU clamps its gate above at {l} and its up to [−{l}, {l}] before act(gate) · up.",
            if m.shared_clamp { "experts' (the shared ones' too) " } else { "experts' " }
        )),
        Some(l) => sub.push(format!(
            "The experts' SwiGLU is clamped at {l} and uses (up + 1) · gate · σ(1.702 · gate)."
        )),
        None => {}
    }
    if let Some(l) = g.spec.mlp.clamp.filter(|_| m.shared_experts > 0) {
        sub.push(format!(
            "The shared experts' SwiGLU is clamped at {l} the same way."
        ));
    }
    match m.storage {
        crate::spec::ExpertStorage::Flat => sub.push(format!("The checkpoint stores all experts of a layer row after row in one 2-D tensor per projection, [experts × {}, {}]: expert e owns rows e·{f} to (e+1)·{f}; gate and up are stored [out, in], down [in, out].", m.expert_intermediate, g.spec.hidden, f = m.expert_intermediate)),
        crate::spec::ExpertStorage::Stacked { out_in, .. } => {
            let order = if out_in {
                "[experts, out, in]"
            } else {
                "[experts, in, out]"
            };
            sub.push(format!(
                "The checkpoint stores all experts of a layer as one tensor per projection, {order}."
            ));
        }
        crate::spec::ExpertStorage::PerExpert => {}
    }
    let shortcut = spec
        .plan
        .iter()
        .any(|l| l.ffn == crate::spec::Ffn::Shortcut);
    if let (Some(l), false) = (&part.layers, shortcut) {
        sub.push(format!(
            "Layers {l} use this mixture; the others have a dense FFN."
        ));
    }
    Text {
        summary: format!("{} experts of width {}, {} active per token{}.", m.experts, m.expert_intermediate, m.top_k, if m.shared_experts > 0 { format!(" + {} shared", m.shared_experts) } else { String::new() }),
        explanation: format!(
            "A router scores each token against all {} experts and keeps the best {}; only those run, and their outputs are summed with the router's weights. Capacity grows with the expert count while the compute per token stays that of {} expert{}.",
            m.experts,
            m.top_k,
            m.top_k,
            if m.top_k > 1 { "s" } else { "" }
        ),
        subtleties: sub,
    }
}

/// One line on what makes this model what it is.
pub fn character(spec: &Spec) -> String {
    if let Some(bl) = spec.bytes.as_deref() {
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
    if let Some(g) = spec.gated_streams {
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
    let kind = spec.plan.iter().find_map(|l| l.mixer.recurrent_kind());
    // A loader that plans a recurrent mixer gives the Spec its settings.
    let settings = "a recurrent mixer has its settings in the Spec";
    match kind {
        Some(Mixer::ShortConv) => short_conv_text(spec.hidden, spec.short_conv.expect(settings)),
        Some(Mixer::DeltaNet) => delta_text(spec.hidden, spec.delta.expect(settings)),
        Some(Mixer::Lightning) => lightning_text(spec, spec.lightning.expect(settings)),
        Some(Mixer::RgLru) => rg_lru_text(spec, spec.rg_lru.expect(settings)),
        Some(Mixer::Rwkv) => rwkv_text(spec, spec.rwkv.expect(settings)),
        Some(Mixer::MLstm) => mlstm_text(spec, spec.mlstm.expect(settings)),
        Some(Mixer::Mamba) => s6_text(g),
        Some(Mixer::Mamba2) => mamba2_text(g),
        Some(Mixer::Attention(_) | Mixer::Parallel(_) | Mixer::None | Mixer::CrossAttention)
        | None => {
            unreachable!("a mixer part comes from a model with a recurrent mixer")
        }
    }
}

/// xLSTM's mLSTM in words, with this model's sizes.
fn mlstm_text(spec: &Spec, s: crate::spec::MLstm) -> Text {
    let (d, h) = (spec.hidden, s.heads);
    let (dk, dv) = (s.qk_dim / h, s.v_dim / h);
    let mut subtleties = vec![
        format!("The state does not grow with the context: per layer {} values ({h} memories of {dk} × {dv}, their normalizers and one stabilizer each).", grouped((h * (dk * dv + dk + 1)) as u128)),
        "The input gate is exponential, so the memory could overflow: each head keeps m, the running maximum of its log gates, and both gates are applied as exp(· − m). The read-out's denominator is at least exp(−m), the same floor of 1 before the rescaling.".into(),
        format!("Both gates' logits are soft-capped at {} (c · tanh(x / c)) before use; so are the output logits.", crate::fmt::float(s.gate_cap)),
    ];
    if s.fused {
        subtleties.push(format!("Stored fused (weight_mode \"fused\"): q, k, v and o are the rows of one {} × {d} projection in that order, the {h} input and {h} forget gates one of {} rows, and the MLP's gate and up one of twice its width: the same computation as separate projections.", 2 * s.qk_dim + 2 * s.v_dim, 2 * h));
    }
    Text {
        summary: format!("mLSTM: {h} heads each carry a {dk} × {dv} matrix memory, written through gates; no softmax, no KV cache."),
        explanation: format!("From the normed input: queries and keys ({dk} per head), values and an output gate ({dv} per head), and per head an input and a forget gate. Each token, a head's memory C fades by σ(f) and adds k vᵀ weighted by exp(i); a normalizer n sums the keys the same way. The query reads C, divided by |q · n|; each head is layer-normed, gated by σ(o) and the {} features are projected back to {d}.", s.v_dim),
        subtleties,
    }
}

/// RWKV's time mixing in words, with this model's sizes.
fn rwkv_text(spec: &Spec, r: crate::spec::Rwkv) -> Text {
    let (d, a) = (spec.hidden, r.attn);
    let mut sub = vec![
        format!("The state does not grow with the context: per layer {} values (the WKV sums num, den and their running maximum exponent over {a} channels, and the previous token's input of {d} for each of the two mixings), where attention would cache two vectors per token.", grouped((3 * a + 2 * d) as u128)),
        "The token shift is RWKV's only other look back: each projection reads a per-channel blend of this token and the one before it.".into(),
        "The sums are kept with their largest exponent factored out (num and den scaled by exp(−p)), so exp(k) never overflows; the ratio is unchanged.".into(),
    ];
    if r.rescale_every > 0 && r.halvings(spec.layers - 1) > 0 {
        sub.push(format!("In inference transformers halves the stream after every {}th layer and divides the output projections of layer b by 2^⌊b/{}⌋ to match: the same logits, up to the norms' ε, with sums that stay in range in half precision.", r.rescale_every, r.rescale_every));
    }
    Text {
        summary: format!("RWKV time mixing: {a} channels each carry a decayed sum of exp(key)-weighted values; no softmax, no KV cache."),
        explanation: format!("From the normed input and the previous token's, mixed per channel, three projections of the {d} features give K, V and R ({a} each). Each channel's WKV is a weighted average of its values so far, weight exp(k) decayed by exp(−exp(w)) per token, the current token's weight boosted by exp(u). σ(R) gates it and a projection returns {d} features."),
        subtleties: sub,
    }
}

/// RWKV's channel mixing in words, with this model's sizes.
fn channel_mix_text(spec: &Spec) -> Text {
    let (d, f) = (spec.hidden, spec.mlp.intermediate);
    Text {
        summary: format!("Channel mixing: {d} → {f} (squared ReLU) → {d}, gated by σ of a receptance."),
        explanation: "σ(W_r x_r) ⊙ W_v ReLU(W_k x_k)², where x_k and x_r blend this token's normed input with the previous token's, channel by channel.".into(),
        subtleties: vec![
            "Unlike a transformer's MLP it looks one token back: the blend with the previous token is its state.".into(),
            format!("The receptance projection is square ({d} × {d}) and has no activation but σ."),
        ],
    }
}

/// Griffin's recurrent block in words, with this model's sizes.
fn rg_lru_text(spec: &Spec, s: crate::spec::RgLru) -> Text {
    let (d, w, h, bw, k) = (spec.hidden, s.width, s.heads, s.block(), s.conv_kernel);
    let act = s.act.words();
    Text {
        summary: format!("Griffin's recurrent block: a convolution over {k} positions and the RG-LRU, one state per channel ({w}), gated by a {act} branch; no KV cache."),
        explanation: format!("Two projections of the {d} features: a gate branch y through {act}, and x, convolved causally over the last {k} positions. The RG-LRU computes an input gate i and a recurrence gate r from x (σ of block-diagonal projections, {h} blocks of {bw}), a decay a = exp(−8 · r · softplus(Λ)) per channel, and updates h ← a ⊙ h + √(1 − a²) ⊙ i ⊙ x. h ⊙ y is projected back to {d}."),
        subtleties: vec![
            format!("The state does not grow with the context: {} values per layer ({w} channels, plus the convolution's last {} inputs of {w}), where attention would cache two vectors per token.", grouped((w + w * (k - 1)) as u128), k - 1),
            "√(1 − a²) keeps the state's scale steady whatever the decay: a channel that remembers long takes in little per token. At position 0 the state resets and the input enters whole.".into(),
            "The gates are block-diagonal: each block of channels is gated from its own channels only, as attention heads are separate.".into(),
            "The recurrence is linear in h (the gates read x, not h), so a prompt could be scanned in parallel; transformers runs it token by token, as decoding does.".into(),
        ],
    }
}

/// Lightning attention in words, with this model's sizes.
fn lightning_text(spec: &Spec, s: crate::spec::Lightning) -> Text {
    let (d, h, hd, inner) = (spec.hidden, s.heads, s.head_dim, s.inner());
    let layers = spec.layers_where(|l| l.mixer == Mixer::Lightning);
    let act = s.act.words();
    let f = |x: f64| format!("{x:.4}");
    let (first, last) = (
        layers.first().unwrap_or(0),
        layers.iter().last().unwrap_or(0),
    );
    Text {
        summary: format!("Lightning attention: {h} heads each carry a {hd} × {hd} memory from key to value that fades at a fixed rate; no softmax, no KV cache."),
        explanation: format!("One projection of the {d} features gives each head's q, k and v side by side ({} rows), all through {act}. Each head's memory S fades by exp(−s) and takes k ⊗ v every token; the head reads o = Sᵀq. The {inner} output features are RMS-normed together, gated by σ of a second projection of the input, and projected back to {d}.", 3 * inner),
        subtleties: vec![
            format!("The memory does not grow with the context: {} values per layer ({h} heads × {hd} × {hd}), where softmax attention would cache two vectors per token.", grouped((h * hd * hd) as u128)),
            format!("The rates are not learned: s = 2^(−8(h+1)/{h}) · (1 − b/(L−1)) for head h of layer b, so early heads forget fastest and deep layers barely forget (head 0: {} in layer {first}, {} in layer {last}). The checkpoint stores them as slope_rate.", f(s.slope(first, spec.layers, 0)), f(s.slope(last, spec.layers, 0))),
            format!("transformers computes a prompt in chunks of {}: within a chunk a masked product (q kᵀ ⊙ decay) v, between chunks the memory carried; the checkpoint stores those decay tables too (query_decay, key_decay, diagonal_decay). Decoding runs the recurrence; both give the same sum.", s.block),
            "Without a softmax the scores are not normalized: the RMS norm after the read-out keeps the output's scale in check.".into(),
        ],
    }
}

/// Mamba2's mixer in words, with this model's sizes.
fn mamba2_text(g: &Graph) -> Text {
    let spec = &g.spec;
    let d = spec.hidden;
    let Some(s) = spec.ssm.as_ref() else {
        unreachable!("a Mamba2 part comes from a model with Mamba2's settings")
    };
    let (h, p, n, groups, k) = (s.heads, s.head_dim, s.state, s.groups, s.conv_kernel);
    let (inner, conv) = (s.inner(), s.conv_dim());
    let state = h * p * n + conv * (k - 1);
    let mut sub = vec![
        format!("The state does not grow with the context: {} values per layer ({h} heads × {p} × {n}, plus the convolution's last {} inputs of {conv} channels), where attention would cache two vectors per token.", grouped(state as u128), k - 1),
        format!("B and C are shared by the {} heads of each of {groups} groups, as grouped-query attention shares K and V.", h / groups),
        "A prompt is computed in chunks (SSD): within a chunk the scan is a masked matrix product, between chunks the state is carried. The result is the same as the token-by-token recurrence decoding uses.".to_string(),
    ];
    let per = inner / groups;
    let (gated, tail) = match s.gate {
        SsmGate::NormAfter => {
            sub.push(format!("The gate multiplies before the norm, and the RMS norm runs over each group's {per} features apart."));
            ("y ⊙ SiLU(z) is RMS-normed per group and projected back", "")
        }
        SsmGate::NormBefore => {
            sub.push(format!("The RMS norm runs before the gate, over each group's {per} features apart (Mamba2 gates first)."));
            (
                "y is RMS-normed per group, gated by SiLU(z) and projected back",
                "",
            )
        }
        SsmGate::Plain => (
            "y ⊙ SiLU(z) is projected back",
            " There is no norm between the scan and the output projection.",
        ),
    };
    if s.part_mults != [1.0; 5] {
        let m: Vec<String> = s.part_mults.iter().map(|&x| crate::fmt::float(x)).collect();
        sub.push(format!("The input projection's parts are scaled by μP multipliers before use: z × {}, x × {}, B × {}, C × {}, Δ × {}.", m[0], m[1], m[2], m[3], m[4]));
    }
    let summary = if let Some(m) = spec.mup {
        sub.push(format!("In every layer this mixer runs beside the attention on the same normed input (× {} for Mamba2, × {} for the attention), and the layer adds {} × Mamba2's output + {} × the attention's to the stream: the two read the context two ways, a fixed state and a cache of every token.", crate::fmt::float(m.ssm_in), crate::fmt::float(m.attn_in), crate::fmt::float(m.ssm_out), crate::fmt::float(m.attn_out)));
        format!("Mamba2 beside attention: {h} heads carry a {p} × {n} state from token to token, while the attention in the same layer keeps its KV cache.")
    } else {
        format!("Mamba2: {h} heads carry a {p} × {n} state from token to token; no attention, no KV cache.")
    };
    if s.bias {
        sub.push("The input and output projections have biases.".into());
    }
    if !s.conv_bias {
        sub.push("The convolution has no bias.".into());
    }
    Text {
        summary,
        explanation: format!("One projection of the {d} features gives the gate z ({inner}), the part the convolution mixes ({conv}: x, B and C) and a step Δ per head ({h}). A causal convolution over the last {k} positions and SiLU prepare x, B and C. Each head's state then decays by exp(Δ·A) and takes in Δ·x ⊗ B; it is read with C, plus D·x. {gated} to {d}.{tail}"),
        subtleties: sub,
    }
}

/// Mamba's selective scan in words, with this model's sizes.
fn s6_text(g: &Graph) -> Text {
    let spec = &g.spec;
    let d = spec.hidden;
    let Some(s) = spec.s6.as_ref() else {
        unreachable!("a mixer part comes from a model with a state-space mixer")
    };
    let (i, n, r, k) = (s.inner, s.state, s.dt_rank, s.conv_kernel);
    let state = i * n + i * (k - 1);
    let mut sub = vec![
        format!("The state does not grow with the context: {} values per layer ({i} channels × {n}, plus the convolution's last {} inputs of {i} channels), where attention would cache two vectors per token.", grouped(state as u128), k - 1),
        format!("Δ is low-rank: the {i} channels' steps come from {r} numbers per token, projected up."),
        "Every channel has its own decay rate per state entry (A is a matrix), unlike Mamba2's one per head.".to_string(),
    ];
    if let Some(norm) = s.bcdt_norm {
        let with = if norm.weighted {
            "each with a learned weight"
        } else {
            "without weights"
        };
        sub.push(format!("The step's input, B and C are RMS-normalized {with} (ε = {}) before use, for stable training.", norm.eps));
    }
    if s.bias {
        sub.push("The input and output projections have biases.".into());
    }
    Text {
        summary: format!("Mamba: {i} channels each carry a {n}-wide state from token to token; no attention, no KV cache."),
        explanation: format!("One projection of the {d} features gives x and the gate z ({i} each). A causal convolution over the last {k} positions and SiLU prepare x; a projection of x gives the step's input ({r}), B and C ({n} each), and Δ = softplus(W_Δ · step + b) per channel. Each channel's state decays by exp(Δ·A) and takes in Δ·x·B; it is read with C, plus D·x; y ⊙ SiLU(z) is projected back to {d}."),
        subtleties: sub,
    }
}

/// Gated DeltaNet in words, with this model's sizes.
fn delta_text(d: u64, s: crate::spec::DeltaNet) -> Text {
    let (kh, vh, dk, dv, k) = (
        s.key_heads,
        s.value_heads,
        s.key_dim,
        s.value_dim,
        s.conv_kernel,
    );
    let conv = s.conv_dim();
    let state = vh * dk * dv + conv * (k - 1);
    let mut sub = vec![
        format!("The state does not grow with the context: {} values per layer ({vh} heads × {dk} × {dv}, plus the convolution's last {} inputs of {conv} channels), where attention would cache two vectors per token.", grouped(state as u128), k - 1),
        "The delta rule writes the error, not the value: with β = 1 a key's old value is replaced, not added to, so the memory does not saturate the way plain linear attention's does.".to_string(),
        "Q and K are L2-normalized per head, so a key reads and writes at most its own direction; the decay exp(g) lets each head forget everything at once.".to_string(),
        "transformers computes a prompt in chunks of 64 (the WY form of the delta rule): within a chunk the updates are solved together, between chunks the memory is carried. The result is the same as the token-by-token recurrence it decodes with, and that anatomy runs for both.".to_string(),
    ];
    if vh != kh {
        sub.push(format!("Each of the {kh} query and key heads serves {} value heads, as grouped-query attention shares K and V, the other way round.", vh / kh));
    }
    if s.beta_scale != 1.0 {
        sub.push(format!("β = {} · σ(·), in (0, {}): past 1 a write overshoots the new value, which lets the transition have negative eigenvalues (state tracking that a β below 1 cannot do).", s.beta_scale, s.beta_scale));
    }
    if s.store == crate::spec::DeltaStore::Grouped {
        sub.push("The checkpoint stores Q, K, V and z as one projection grouped by key head (each key head's q, k, then its value heads' v and z), and β and α as another.".into());
    }
    if s.channel_decay() {
        sub[2] = "Q and K are L2-normalized per head, so a key reads and writes at most its own direction; the decay is per key channel, so a head can keep some directions of its memory and let others fade.".into();
        let (f, g) = if s.store == crate::spec::DeltaStore::Kimi {
            sub.push(format!("Both gates come through rank {dk}: the forget gate's step {d} → {dk} → {} and the output gate {d} → {dk} → {}, far fewer weights than full projections.", s.keys(), s.values()));
            (
                format!("F a rank-{dk} projection of the input"),
                format!("another rank-{dk} projection"),
            )
        } else {
            (
                "F a projection of the input".to_string(),
                "another projection".to_string(),
            )
        };
        let decay = match s.gate_floor {
            Some(floor) => {
                sub.push(format!("The decay is bounded: g = {floor} · σ(exp(A_log)·(F + b)) lies in ({floor}, 0), so no token can keep more than all of its memory or wipe it in one step beyond exp({floor}) ≈ {:.4}.", floor.exp()));
                format!("g = {floor} · σ(exp(A_log)·(F + b))")
            }
            None => "g = −exp(A_log)·softplus(F + b)".to_string(),
        };
        return Text {
            summary: format!("Kimi Delta Attention: {vh} heads each carry a {dk} × {dv} memory from keys to values, each key channel decaying at its own rate, corrected token by token; no KV cache."),
            explanation: format!("Projections of the {d} features give Q, K and V ({vh} heads × {dk}), each through a causal convolution over the last {k} positions and SiLU, and β = σ(W_β x) per head. The decay is per key channel: {decay}, {f}, A_log one rate per head. Each head's memory S decays row by row by exp(g), then moves what it recalls for k toward v by β: S ← S + k ⊗ β(v − Sᵀk). It is read with q; the result is RMS-normed per head, gated by σ of {g} and projected back to {d}."),
            subtleties: sub,
        };
    }
    let beta = if s.beta_scale == 1.0 {
        "σ(β₀)".to_string()
    } else {
        format!("{} · σ(β₀)", s.beta_scale)
    };
    Text {
        summary: format!("Gated DeltaNet: {vh} heads each carry a {dk} × {dv} memory from keys to values, decayed and corrected token by token; no KV cache."),
        explanation: format!("Projections of the {d} features give Q and K ({kh} heads × {dk}), V and the gate z ({vh} heads × {dv}), and β and α per value head. A causal convolution over the last {k} positions and SiLU prepare Q, K and V. Each head's memory S decays by exp(g), g = −exp(A_log)·softplus(α + b), then moves what it recalls for k toward v by β = {beta}: S ← S + k ⊗ β(v − Sᵀk). It is read with q; the result is RMS-normed per head, gated by {gate} and projected back to {d}.", gate = if s.sigmoid_gate { "σ(z)" } else { "SiLU(z)" }),
        subtleties: sub,
    }
}

/// LFM2's short convolution in words, with this model's sizes.
fn short_conv_text(d: u64, c: crate::spec::ShortConv) -> Text {
    let k = c.kernel;
    let mut sub = vec![
        format!("Its state is the last {} inputs of each of {d} channels ({} values per layer), whatever the context: no KV cache.", k - 1, grouped(((k - 1) * d) as u128)),
        format!("Each output position sees only the last {k} positions directly; longer range comes from the attention layers and from stacking."),
    ];
    if c.bias {
        sub.push("The projections and the convolution have biases.".into());
    }
    Text {
        summary: format!("Short gated convolution: B ⊙ x convolved over the last {k} positions, gated by C."),
        explanation: format!("One projection of the {d} features gives B, C and x ({d} each). B ⊙ x is convolved channel by channel over the last {k} positions, the result gated by C and projected back to {d}."),
        subtleties: sub,
    }
}
