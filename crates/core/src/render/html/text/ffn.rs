//! The page's words for a mixture of experts.

use super::*;

pub(super) fn moe_text(g: &Graph, part: &Part, share: f64) -> Text {
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
    if m.expert_out_norm {
        sub.push(format!("Each routed expert's output is RMS-normed by a weight of that expert's own (one [{}, {}] tensor) before its router weight scales it: every chosen expert contributes at a comparable scale, and the weights alone decide the mix.", m.experts, spec.hidden));
    }
    if m.shared_out_norm {
        sub.push(
            "The shared expert's output is RMS-normed by a weight of its own before it is added."
                .into(),
        );
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
