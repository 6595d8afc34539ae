//! The page's words for attention, of every kind.

use super::*;

/// The attention of `part`'s layers (a variant's, where some layers have their own).
pub(super) fn attention_text(g: &Graph, part: &Part) -> Text {
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
    if let Some(a) = spec.altup() {
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
    if let Some(h) = spec.hyper().filter(|h| h.sinkhorn.is_some()) {
        sub.push(format!(
            "Manifold-constrained hyper-connections: the residual stream is {n} streams of {d} values per token ({w} in all), each starting as the embedding. Before each sublayer, (2 + {n}) × {n} logits computed from the streams themselves (divided by their RMS, with no learned scale) give pre gates σ(·) + ε, which weigh the {n} streams into the sublayer's one input; post gates {m} · σ(·), each stream's share of the sublayer's output; and a {n} × {n} mix of the streams among themselves, a softmax made doubly stochastic (rows and columns summing to 1) by {it} Sinkhorn iterations, so mixing neither grows nor shrinks the stream. Each stream becomes its mix of the old streams plus its share of the output. A last mix of {n} gates weighs the streams into one before the final norm.",
            n = h.streams,
            d = spec.hidden,
            w = h.streams * spec.hidden,
            m = crate::fmt::float(h.magnitude),
            it = h.sinkhorn.unwrap_or(0),
        ));
    } else if let Some(h) = spec.hyper() {
        sub.push(format!(
            "Hyper-connections: the residual stream is {n} streams of {d} values per token ({w} in all), each starting as the embedding. Before each sublayer, 2 × {n} logits computed from the streams themselves (divided by their RMS, with no learned scale) give pre gates σ(·) + ε, which weigh the {n} streams into the sublayer's one input, and post gates {m} · σ(·) + ε, each stream's share of the sublayer's output, added to it. A last mix of {n} gates weighs the streams into one before the final norm. The stream costs {n}× the activation memory of a plain residual; the KV cache is unchanged.",
            n = h.streams,
            d = spec.hidden,
            w = h.streams * spec.hidden,
            m = crate::fmt::float(h.magnitude)
        ));
    }
    if let Some(g) = spec.gated_streams() {
        sub.push(format!(
            "Gated residual streams: the residual stream is {n} streams of {d} values per token ({w} in all), each starting as the embedding. Before each sublayer the streams are RMS-normed one by one and all {w} features scaled by (1 + γ); a rank-{r} bottleneck read from all of them, σ(W↑ · SiLU(W↓ · x̂ / {n})), gates every feature, and the sublayer reads the mean of the {n} gated streams. Its output is added to each stream (as it was, not normed) times that stream's injection weight 2σ(Wᵢₙⱼ · x̂ / {n}), between 0 and 2. No norm of the model's own comes before a sublayer: the mix's norm is the one. A last mix without injection makes the head's input, and there is no final norm. The stream costs {n}× the activation memory of a plain residual; the KV cache is unchanged.",
            n = g.streams,
            d = spec.hidden,
            w = g.streams * spec.hidden,
            r = g.rank,
        ));
    }
    if spec.residual == Residual::Scaled {
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
        } else if o.shares_kv && !spec.kv_from.is_empty() {
            let pairs: Vec<String> = layers
                .iter()
                .map(|b| format!("{b} reads {}", spec.kv_source(b as usize)))
                .collect();
            own.push(format!("no K or V projection at all, nor K's norm: each attends over the keys and values of the earlier layer the config names ({}), so they add nothing to the KV cache", pairs.join(", ")));
        } else if o.shares_kv {
            own.push("no K or V projection at all: they attend over the keys and values of the last layer of their kind before them, so they add nothing to the KV cache".into());
        }
        if let Some(p) = o.pool_index.as_ref().filter(|_| a.pool_index.is_none()) {
            let pools: Vec<String> = p.pools.iter().map(|b| b.to_string()).collect();
            own.push(format!(
                "a weightless indexer and NVFP4: where a query sees more than {budget} keys, it keeps its first {sinks}, its last {local} and the {k} best of its pool, scored by the layer's first {h} query heads against K/V head 0, Σₕ ReLU(q · k) / (√{hd} · {h}), both rounded to NVFP4 (4-bit values, one 8-bit scale per 16 features). Layers {pools} pick the pools: where a query sees more than {pool} keys, the {blocks} blocks of {c} keys whose rounded mean key scores best; the indexed layers between keep the last pool. The heads attend over their keys and values rounded to NVFP4 too, as the model was trained, while the cache holds them unrounded. Nothing here has weights: it costs compute, not parameters",
                budget = p.budget(),
                sinks = p.sinks,
                local = p.local,
                k = p.top_k,
                h = p.heads,
                hd = o.head_dim,
                pools = pools.join(", "),
                pool = p.pool,
                blocks = p.pool / p.compression,
                c = p.compression,
            ));
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
            AttnKind::Gqa | AttnKind::Mla => format!(
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
