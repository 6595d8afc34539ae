//! The page's words for Mamba, Mamba-2 and the short convolution.

use super::*;

/// Mamba2's mixer in words, with this model's sizes.
pub(super) fn mamba2_text(g: &Graph) -> Text {
    let spec = &g.spec;
    let d = spec.hidden;
    let Some(s) = spec.ssm() else {
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
pub(super) fn s6_text(g: &Graph) -> Text {
    let spec = &g.spec;
    let d = spec.hidden;
    let Some(s) = spec.s6() else {
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

/// LFM2's short convolution in words, with this model's sizes.
pub(super) fn short_conv_text(d: u64, c: crate::spec::ShortConv) -> Text {
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
