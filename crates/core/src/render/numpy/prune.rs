//! What the template loses for one model: the functions it does not call dropped, and the lines
//! it words otherwise edited (each edit's anchor checked).

use super::*;
use crate::spec::{Residual, Stream};

/// `forward`'s definition and comment, from which a pass that is one function's replaces the rest.
const FORWARD_DEF: &str = "def forward(ids, W):\n    # ids: [T] int -> logits [T, vocab]\n";

/// The template's call of a layer's mixer, every kind written out.
const MIXER_CALL: &str = "mamba2(h, W, b) if span[0] == \"mamba2\" else mamba(h, W, b) if span[0] == \"mamba\" else short_conv(h, W, b) if span[0] == \"conv\" else gated_delta_net(h, W, b) if span[0] == \"delta\" else lightning(h, W, b) if span[0] == \"lightning\" else rg_lru(h, W, b) if span[0] == \"rglru\" else time_mix(h, W, b) if span[0] == \"rwkv\" else attention(h, W, b, span, use_rope)";

/// The template without what this model never runs: MLA, the experts and their routing, xIELU,
/// and the calls that would choose them, so the file reads top to bottom as this model.
pub(super) fn prune(spec: &Spec, body: &str) -> String {
    let mut drop: Vec<&str> = Vec::new();
    let mut lines: Vec<(&str, &str)> = Vec::new();
    // DeepSeek-V4's parts, where the model has them; the lines they change restored first, so
    // that the other edits find the template's lines as they were.
    // The mixer call holds only the mixers this model has.
    let mut calls = Vec::new();
    if spec.delta().is_some_and(|d| d.sigmoid_gate) {
        // Qwen4-Exp's "sigmoid" output gate.
        lines.push((
            "    o = o * (z.reshape(T, VH, DV) / (1 + np.exp(-z.reshape(T, VH, DV))))  # [T, VH, DV], gated by SiLU(z)\n",
            "    o = o / (1 + np.exp(-z.reshape(T, VH, DV)))  # [T, VH, DV], gated by σ(z)\n",
        ));
    }
    if spec.delta().is_none() {
        drop.extend(["delta_loop", "delta_chunked"]);
    }
    if spec.ssm().is_some() {
        calls.push(("mamba2", "mamba2(h, W, b)"));
    } else {
        drop.extend(["ssd_loop", "ssd_chunked"]);
        drop.push("mamba2");
    }
    if spec.s6().is_some() {
        calls.push(("mamba", "mamba(h, W, b)"));
    } else {
        drop.push("mamba");
    }
    if spec.short_conv().is_some() {
        calls.push(("conv", "short_conv(h, W, b)"));
    } else {
        drop.push("short_conv");
    }
    if spec.lightning().is_some() {
        calls.push(("lightning", "lightning(h, W, b)"));
    } else {
        drop.extend(["lightning", "light_loop", "light_chunked"]);
    }
    if spec.rg_lru().is_some() {
        calls.push(("rglru", "rg_lru(h, W, b)"));
    } else {
        drop.push("rg_lru");
    }
    if spec.mlstm().is_some() {
        calls.push(("mlstm", "mlstm(h, W, b)"));
    } else {
        drop.extend(["mlstm", "mlstm_loop", "mlstm_chunked"]);
    }
    match spec.rwkv() {
        Some(r) => {
            calls.push(("rwkv", "time_mix(h, W, b)"));
            if r.rescale_every > 0 {
                // transformers' inference: layer b's outputs scaled by 2^-(b // R), the
                // stream halved after every R-th layer.
                lines.extend([
                    (
                        "        r = residual(x, a)\n",
                        "        R = C[\"rwkv\"][\"rescale_every\"]\n        r = x + a * np.float32(0.5 ** (b // R))  # [T, hidden], scaled as transformers' inference scales it\n",
                    ),
                    (
                        "        x = residual(x, m)\n",
                        "        x = x + m * np.float32(0.5 ** (b // R))  # [T, hidden]\n        if (b + 1) % R == 0:\n            x = x / 2  # the stream halved, as in transformers' inference\n",
                    ),
                ]);
            }
        }
        None => drop.extend(["time_mix", "channel_mix", "token_mix"]),
    }
    if spec.stream_mix.is_some() {
        // MiniMax: each sublayer adds to its normed input, scaled.
        lines.extend([
            (
                "        before = C[\"place\"] in (\"pre\", \"sandwich\")  # a norm on the branch before each sublayer\n",
                "        before = True  # a norm before each sublayer, its output the residual's base\n",
            ),
            (
                "        r = residual(x, a)\n",
                "        alpha, beta = C[\"stream_mix\"][\"linear\" if span[0] == \"lightning\" else \"attn\"]\n        r = np.float32(alpha) * h + np.float32(beta) * a  # [T, hidden], added to the normed input h\n",
            ),
            (
                "        x = residual(x, m)\n",
                "        alpha, beta = C[\"stream_mix\"][\"mlp\"]\n        x = np.float32(alpha) * h + np.float32(beta) * m  # [T, hidden], added to the normed input h\n",
            ),
        ]);
    }
    if let Some(s) = spec.ssm() {
        if s.part_mults != [1.0; 5] {
            lines.push((
                "    p = linear(x, w(W, \"ssm_in\", b), bias(\"ssm_in\"))  # p: [T, I + CH + H]\n",
                "    p = linear(x, w(W, \"ssm_in\", b), bias(\"ssm_in\"))  # p: [T, I + CH + H]\n    p = p * np.repeat(np.float32(S[\"part_mults\"]), [I, I, G * N, G * N, H])  # [T, I + CH + H], the parts z, x, B, C, dt scaled (muP)\n",
            ));
        }
        // Mamba2's template norms after the gate; Falcon-H1 may norm before it, or not at all.
        let normed = "    y = y.reshape(T, G, I // G)  # [T, G, I / G]\n    y = (y / np.sqrt((y * y).mean(-1, keepdims=True) + S[\"eps\"])).reshape(T, I)  # y: [T, I], RMS per group\n    y = y * w(W, \"ssm_norm\", b)  # [T, I]\n";
        match s.gate {
            SsmGate::NormAfter => {}
            SsmGate::NormBefore => lines.extend([
                (
                    "    y = y.reshape(T, I) * (z / (1 + np.exp(-z)))  # y: [T, I], gated by SiLU(z)\n    y = y.reshape(T, G, I // G)  # [T, G, I / G]\n",
                    "    y = y.reshape(T, G, I // G)  # [T, G, I / G], normed before the gate\n",
                ),
                (
                    "    y = y * w(W, \"ssm_norm\", b)  # [T, I]\n",
                    "    y = y * w(W, \"ssm_norm\", b)  # [T, I]\n    y = y * (z / (1 + np.exp(-z)))  # y: [T, I], gated by SiLU(z)\n",
                ),
            ]),
            SsmGate::Plain => lines.push((normed, "")),
        }
    }
    if spec.mup.is_some() {
        lines.push((
            "    h = act(g) * u  # h: [T, F]\n",
            "    h = act(g * np.float32(C[\"mup\"][\"mlp_gate\"])) * u  # h: [T, F], the gate scaled first (muP)\n",
        ));
        lines.push((
            "        h = norm(h, w(W, \"ffn_sub_norm\", b))  # [T, F], normed before the down projection\n    return linear(h, w(W, \"down\", b), bias(\"down\"))  # [T, hidden]\n",
            "        h = norm(h, w(W, \"ffn_sub_norm\", b))  # [T, F], normed before the down projection\n    return linear(h, w(W, \"down\", b), bias(\"down\")) * np.float32(C[\"mup\"][\"mlp_down\"])  # [T, hidden], scaled (muP)\n",
        ));
    }
    if spec.recurrent_place.is_some() {
        lines.push((
            "        before = C[\"place\"] in (\"pre\", \"sandwich\")  # a norm on the branch before each sublayer\n        after = C[\"place\"] in (\"post\", \"sandwich\")  # and after it, before the add\n",
            "        place = C[\"place\"] if span[0] in (\"full\", \"sliding\", \"chunked\") else C[\"recurrent_place\"]  # the recurrent layers' own\n        before = place in (\"pre\", \"sandwich\")  # a norm on the branch before each sublayer\n        after = place in (\"post\", \"sandwich\")  # and after it, before the add\n",
        ));
    }
    match spec.delta().map(|d| d.store) {
        Some(DeltaStore::Grouped | DeltaStore::Separate | DeltaStore::Fused | DeltaStore::Olmo) => {
            calls.push(("delta", "gated_delta_net(h, W, b)"));
            drop.push("kimi_delta_attention");
        }
        Some(store @ (DeltaStore::Kimi | DeltaStore::Bailing)) => {
            calls.push(("delta", "kimi_delta_attention(h, W, b)"));
            drop.push("gated_delta_net");
            if store == DeltaStore::Bailing {
                // Ling's gates are full rank, its decay bounded below.
                lines.extend([
                    (
                        "    f = linear(linear(x, w(W, \"ssm_f_a\", b)), w(W, \"ssm_f_b\", b)) + w(W, \"ssm_dt_bias\", b)  # f: [T, H DK], through rank DK\n",
                        "    f = linear(x, w(W, \"ssm_f_b\", b)) + w(W, \"ssm_dt_bias\", b)  # f: [T, H DK]\n",
                    ),
                    (
                        "    gate = linear(linear(x, w(W, \"ssm_g_a\", b)), w(W, \"ssm_g_b\", b)).reshape(T, H, DV)  # gate: [T, H, DV], through rank DK\n",
                        "    gate = linear(x, w(W, \"ssm_g_b\", b)).reshape(T, H, DV)  # gate: [T, H, DV]\n",
                    ),
                ]);
            }
            if spec.delta().is_some_and(|d| d.gate_floor.is_some()) {
                lines.push((
                    "    g = -np.exp(w(W, \"ssm_a_log\", b).reshape(H, 1)) * np.logaddexp(0, f.reshape(T, H, DK))  # g: [T, H, DK], log decay per key channel\n",
                    "    g = np.float32(S[\"gate_floor\"]) / (1 + np.exp(-np.exp(w(W, \"ssm_a_log\", b).reshape(H, 1)) * f.reshape(T, H, DK)))  # g: [T, H, DK], log decay per key channel, bounded below\n",
                ));
            }
        }
        None => drop.extend(["gated_delta_net", "kimi_delta_attention"]),
    }
    if spec
        .attn_variants()
        .iter()
        .any(|(a, _)| a.mla.is_some() && a.out_gate.is_some())
    {
        // Ling's latent attention gates its heads' outputs, as the other attention does.
        lines.push((
            "    out = (softmax(s) @ v).transpose(1, 0, 2).reshape(T, H * vd)  # [T, H v]\n",
            if spec.attn.mla.as_ref().is_some_and(|m| m.q_gate) {
                "    out = (softmax(s) @ v).transpose(1, 0, 2).reshape(T, H * vd)  # [T, H v]\n    G = C[\"out_gate\"]\n    g = gate  # g: [T, H v], the query projection's gate rows\n    g = np.logaddexp(0, g) if G[\"softplus\"] else 1 / (1 + np.exp(-g))  # softplus or sigmoid of the input\n    out = (out.reshape(T, H, -1) * g[:, :, None]).reshape(T, -1) if G[\"per_head\"] else out * g  # [T, H v], gated\n"
            } else {
                "    out = (softmax(s) @ v).transpose(1, 0, 2).reshape(T, H * vd)  # [T, H v]\n    G = C[\"out_gate\"]\n    g = linear(x, w(W, \"attn_gate\", b))  # g: [T, H v], or [T, H] with a gate per head\n    g = np.logaddexp(0, g) if G[\"softplus\"] else 1 / (1 + np.exp(-g))  # softplus or sigmoid of the input\n    out = (out.reshape(T, H, -1) * g[:, :, None]).reshape(T, -1) if G[\"per_head\"] else out * g  # [T, H v], gated\n"
            },
        ));
    }
    if spec.attn_variants().iter().any(|a| a.0.mla.is_some())
        && !matches!(spec.position, Position::Rope(_))
    {
        // Kimi Linear's latent attention has no positions.
        lines.push((
            "    cos, sin = rope_tables(T, span)  # cos, sin: [T, rope]\n    q_rot = apply_rope(q[..., nope:], cos, sin)  # q_rot: [H, T, rope]\n    k_rot = apply_rope(k_rot, cos, sin)  # k_rot: [1, T, rope]\n",
            "    q_rot = q[..., nope:]  # q_rot: [H, T, rope], scored against the shared key part as it is (no positions)\n",
        ));
    }
    if spec.ssm().is_none()
        && spec.s6().is_none()
        && spec.short_conv().is_none()
        && spec.delta().is_none()
        && spec.rg_lru().is_none()
    {
        drop.push("causal_conv");
    }
    // Zamba's and Zamba2's shared blocks, where some layer runs one.
    let blocks = spec.shared.as_ref().filter(|s| !s.layers.is_empty());
    if spec.attn_variants().is_empty() && blocks.is_some() {
        // Zamba2: attention only inside the shared blocks.
    } else if spec.attn_variants().is_empty() {
        // No attention layer: none of its code.
        drop.extend([
            "attention",
            "attention_so_far",
            "attention_mask",
            "apply_rope",
            "softmax",
            "rope_tables",
            "rope_frequencies",
        ]);
    } else {
        calls.push(("", "attention(h, W, b, span, use_rope)"));
    }
    let (last, rest) = calls.split_last().expect("a model has a mixer");
    let mut mixer_call = rest
        .iter()
        .map(|(kind, f)| format!("{f} if span[0] == \"{kind}\" else "))
        .collect::<String>()
        + last.1;
    if spec.mup.is_some() {
        // Falcon-H1: attention and Mamba2 side by side in every layer, scaled in and out.
        mixer_call = "M[\"attn_out\"] * attention(h * M[\"attn_in\"], W, b, span, use_rope) + M[\"ssm_out\"] * mamba2(h * M[\"ssm_in\"], W, b)  # both read h (M: the muP multipliers)".into();
        lines.push((
            "    for b, (span, use_rope, ffn) in enumerate(PLAN):\n",
            "    M = {k: np.float32(v) for k, v in C[\"mup\"].items()}\n    for b, (span, use_rope, ffn) in enumerate(PLAN):\n",
        ));
    }
    if spec.plan.iter().all(|l| l.mixer != Mixer::None) {
        lines.push((
            "        if span[0] == \"none\":  # a layer of its FFN alone\n            h = norm(x, w(W, \"ffn_norm\", b), nb(\"ffn_norm\"))  # h: [T, hidden]\n            x = residual(x, moe(h, W, b) if ffn == \"moe\" else mlp(h, W, b))  # [T, hidden]\n            continue\n",
            "",
        ));
    }
    if spec.plan.iter().all(|l| l.ffn != Ffn::None) {
        lines.push((
            "        if ffn == \"none\":\n            x = r  # a layer of its mixer alone\n            continue\n",
            "",
        ));
    }
    let no_ffn = spec.plan.iter().all(|l| l.ffn == Ffn::None);
    if no_ffn && blocks.is_none() {
        drop.push("mlp");
    }
    if let Some(s) = spec.s6().filter(|s| s.heads > 1) {
        // Zamba: x and z alternate in the input projection; each head projects its own step, B
        // and C.
        lines.push((OWN_BCDT, HEADS_BCDT));
        if s.interleaved {
            lines.push((
                "    u, z = p[:, :I], p[:, I:]  # u: [T, I], the scan's input; z: [T, I], the gate\n",
                "    u, z = p[:, 0::2], p[:, 1::2]  # u: [T, I], the scan's input; z: [T, I], the gate (alternating rows)\n",
            ));
        }
    }
    if blocks.is_none() {
        // No block to run: where the Spec has none at all, no placeholders to fill either.
        drop.extend(["adapter", "shared_block"]);
        if spec.shared.is_none() {
            drop.push("place");
            lines.push((
                "    if b is not None and CONFIG[\"shared\"]:\n        name = place(name, b)\n",
                "",
            ));
        }
        lines.extend([
            ("    if C[\"shared\"] and C[\"shared\"][\"attn_adapters\"]:\n        q, k, v = q + adapter(x, W, b, \"q\"), k + adapter(x, W, b, \"k\"), v + adapter(x, W, b, \"v\")  # plus this visit's own adapters\n", ""),
            ("        if C[\"shared\"]:\n            gu = gu + adapter(x, W, b, \"gate_up\")  # [T, 2F], plus this visit's own adapter\n", ""),
            ("    x0 = x  # the embeddings, which Zamba2's shared blocks read beside the stream\n", ""),
            ("        xm = x + shared_block(x, x0, W, b) if C[\"shared\"] and b in C[\"shared\"][\"layers\"] else x  # a shared block's output joins the mixer's input, not the stream\n        h = norm(xm,", "        h = norm(x,"),
        ]);
    } else if let Some(s) = blocks {
        if !s.attn_adapters {
            lines.push(("    if C[\"shared\"] and C[\"shared\"][\"attn_adapters\"]:\n        q, k, v = q + adapter(x, W, b, \"q\"), k + adapter(x, W, b, \"k\"), v + adapter(x, W, b, \"v\")  # plus this visit's own adapters\n", ""));
        }
        // Zamba's visits have no adapters.
        if s.adapter_rank == 0 {
            drop.push("adapter");
            lines.push(("        if C[\"shared\"]:\n            gu = gu + adapter(x, W, b, \"gate_up\")  # [T, 2F], plus this visit's own adapter\n", ""));
        }
    }
    // ZAYA: compressed convolutional attention, the router MLP, the embeddings' and residual
    // adds' shifts and scales.
    if spec.attn_variants().iter().any(|(a, _)| a.cca.is_some()) {
        lines.push((
            "    x = embed(ids, W)  # [T, hidden]\n",
            "    x = embed(ids, W)  # [T, hidden]\n    x = (x + w(W, \"embed_shift\")) * w(W, \"embed_scale\")  # [T, hidden], shifted and scaled by learned vectors\n",
        ));
    } else {
        drop.push("cca");
        lines.push((
            "    if C[\"cca\"]:\n        q, k, v = cca(x, W, b)  # [T, H D], [T, KV D], [T, KV D]: ZAYA's\n    elif C[\"qkv\"] == \"stacked\":\n",
            "    if C[\"qkv\"] == \"stacked\":\n",
        ));
    }
    if spec.residual == Residual::Gated {
        lines.extend([
            (
                "        r = residual(x, a)\n",
                "        r = residual_gate(a, x, w(W, \"resid_gate_attn\", b))  # [T, hidden], the output and the stream mixed by a learned gate\n",
            ),
            (
                "        x = residual(x, m)\n",
                "        x = residual_gate(m, x, w(W, \"resid_gate_ffn\", b))  # [T, hidden]\n",
            ),
        ]);
    } else {
        drop.push("residual_gate");
    }
    if spec.residual == Residual::Affine {
        lines.extend([
            (
                "        r = residual(x, a)\n",
                "        r = (a + w(W, \"resid_attn_out_shift\", b)) * w(W, \"resid_attn_out_scale\", b) + (x + w(W, \"resid_attn_shift\", b)) * w(W, \"resid_attn_scale\", b)  # [T, hidden], both terms shifted and scaled\n",
            ),
            (
                "        x = residual(x, m)\n",
                "        x = (m + w(W, \"resid_ffn_out_shift\", b)) * w(W, \"resid_ffn_out_scale\", b) + (x + w(W, \"resid_ffn_shift\", b)) * w(W, \"resid_ffn_scale\", b)  # [T, hidden], both terms shifted and scaled\n",
            ),
        ]);
    }
    if spec.moe.as_ref().is_some_and(|m| m.router_mlp.is_some()) {
        lines.extend([
            (
                // (The router reads the FFN input: Gemma 4's `rx` is gone by now.)
                "    logits = linear(x, w(W, \"router\", b), w(W, \"router\", b, bias=True) if M[\"router_bias\"] else None)  # logits: [T, E]\n",
                "    logits = router_mlp(x, W, b)  # logits: [T, E + 1]\n",
            ),
            (
                "        chosen = route(logits[t], corr)  # [(expert, weight)] of token t\n",
                "        chosen = top1(logits[t], w(W, \"router_balance\", b))  # [(expert, weight)] of token t\n",
            ),
            // Balanced by its own biases, not a correction bias.
            (
                "    corr = w(W, \"correction_bias\", b).reshape(-1) if M[\"correction_bias\"] else None  # corr: [E] or None\n",
                "",
            ),
        ]);
    } else {
        drop.extend(["router_mlp", "top1", "ROUTER"]);
    }
    if !spec
        .attn_variants()
        .iter()
        .any(|(a, _)| a.pool_index.is_some())
    {
        drop.extend(["POOL", "e4m3", "nvfp4", "top_k_mask", "pool_mask"]);
        lines.extend([
            (
                "    if C[\"pool_index\"]:\n        index = pool_mask(q, k[0], b, C[\"pool_index\"])  # [T, T]: the keys each query keeps\n        k, v = nvfp4(k), nvfp4(v)  # the layer attends over its keys and values rounded to NVFP4\n",
                "",
            ),
            (
                "    if C[\"pool_index\"]:\n        s = s + index  # s: [H, T, T], only where the indexer keeps\n",
                "",
            ),
        ]);
    }
    // Layers that read a listed layer's keys and values (Kolibri 1.1's kv_source_layers).
    if !spec.kv_from.is_empty() {
        lines.push((
            "    if C[\"shares_kv\"]:\n        k, v = SHARED_KV[span[0]]  # k: [KV, T, D], v: [KV, T, DV], the last layer of this kind's that projects its own\n    else:\n        SHARED_KV[span[0]] = k, v  # for the later layers that share them\n",
            "    if C[\"shares_kv\"]:\n        k, v = SHARED_KV[C[\"kv_from\"][b]]  # k: [KV, T, D], v: [KV, T, DV], those of the layer this one reads\n    else:\n        SHARED_KV[b] = k, v  # for the later layers that read them\n",
        ));
    }
    if !spec
        .attn_variants()
        .iter()
        .any(|(a, _)| a.block_index.is_some())
    {
        drop.push("block_mask");
        lines.push((
            "    if C[\"block_index\"]:\n        s = s + np.repeat(block_mask(x, W, b, span, C[\"block_index\"]), H // C[\"block_index\"][\"heads\"], axis=0)  # s: [H, T, T], only in the blocks each group's index head chose\n",
            "",
        ));
    }
    if spec.mlp.clamp.is_some() {
        // MiniMax-M3: the dense MLP's and the shared experts' SwiGLU clamped too.
        lines.extend([
            (
                "    h = act(g) * u  # h: [T, F]\n",
                "    h = glu(g, u, C[\"mlp_clamp\"])  # h: [T, F], the clamped SwiGLU\n",
            ),
            (
                "halves of one tensor\n            h = act(g) * u  # h: [T, F_shared]\n",
                "halves of one tensor\n            h = glu(g, u, CONFIG[\"mlp_clamp\"])  # h: [T, F_shared], the clamped SwiGLU\n",
            ),
        ]);
    }
    if spec.moe.is_none() && spec.mlp.clamp.is_none() {
        drop.push("glu");
    }
    if spec.moe.is_none() {
        drop.extend(["route", "moe"]);
        lines.push((
            "moe(h, W, b) if ffn == \"moe\" else mlp(h, W, b)",
            "mlp(h, W, b)",
        ));
    }
    if spec.rwkv().is_some() {
        // RWKV's FFN is its channel mixing.
        lines.push((
            "        m = mlp(h, W, b)\n",
            "        m = channel_mix(h, W, b)  # [T, hidden]\n",
        ));
        drop.push("mlp");
    }
    if spec.ngpt.is_some() {
        ngpt_lines(spec, &mut lines);
    }
    if !decodes(spec) {
        drop.push("attention_so_far");
        lines.push((
            "    if STATE is not None:\n        return attention_so_far(x, W, b, span, use_rope)  # decoding: over every input so far\n",
            "",
        ));
    }
    if spec.plan.iter().all(|l| !l.mixer.recurrent()) {
        // The state the recurrent mixers keep: none here.
        drop.extend(["STATE", "state_of"]);
    }
    let mut out = body.to_string();
    for (from, to) in lines {
        let n = crate::render::rewrite::replace_all(&mut out, from, to);
        assert!(n > 0, "the NumPy template lost {from:?}");
    }
    let n = crate::render::rewrite::replace_all(&mut out, MIXER_CALL, &mixer_call);
    assert!(n > 0, "the NumPy template lost its mixer call");
    if spec.altup().is_some() {
        // The whole pass is `altup_forward`'s: the rest of `forward` never runs.
        let (start, end) = ("    if C[\"altup\"]:\n", "\n\n\ndef main(");
        if let (Some(a), Some(b)) = (out.find(start), out.find(end)) {
            out.replace_range(
                a..b,
                "    return altup_forward(x, ple, W)  # the stream as several predictions of the hidden state",
            );
        }
    }
    // A pass that is one function's: the rest of `forward` never runs, and it reads no more of
    // CONFIG from its first line on.
    let hashed = spec.moe.as_ref().is_some_and(|m| m.hash_layers.is_some());
    let one_pass = match &spec.stream {
        Stream::Hierarchy(_) => {
            Some("hierarchy_forward(x, W)  # two stacks of layers in a nested loop")
        }
        Stream::Gated(_) => Some(
            "gated_forward(x, W, ids)  # the stream as n copies, each sublayer reading their gated mean",
        ),
        Stream::Hyper(_) if hashed => {
            Some("hyper_forward(x, W, ids)  # the stream as n copies, each sublayer mixing them")
        }
        Stream::Hyper(_) => {
            Some("hyper_forward(x, W)  # the stream as n copies, each sublayer mixing them")
        }
        Stream::Plain
        | Stream::AltUp(_)
        | Stream::Bytes(_)
        | Stream::Looped(_)
        | Stream::AttnRes(_) => None,
    };
    if let Some(call) = one_pass {
        let a = out
            .find(&format!("{FORWARD_DEF}    C = CONFIG\n"))
            .expect("the template's forward");
        let b = out.find("\n\n\ndef main(").expect("the template's main");
        out.replace_range(
            a..b,
            &format!("{FORWARD_DEF}    x = embed(ids, W)  # [T, hidden]\n    return {call}"),
        );
    }
    if no_ffn {
        // Every layer is its mixer alone: the FFN half of the loop never runs.
        let (start, end) = (
            "        if ffn == \"none\":\n",
            "    if C[\"place\"] == \"post_residual\":\n        return",
        );
        if let (Some(a), Some(b)) = (out.find(start), out.find(end)) {
            out.replace_range(a..b, "        x = r  # every layer is its mixer alone\n");
        }
    }
    if decodes(spec) {
        crate::render::rewrite::replace_block(&mut out, "def main():", DECODE_MAIN);
    }
    // Top-level functions and names are separated by two blank lines.
    out.split("\n\n\n")
        .filter(|block| {
            !drop.iter().any(|f| {
                block.starts_with(&format!("def {f}(")) || block.starts_with(&format!("{f} = "))
            })
        })
        .collect::<Vec<_>>()
        .join("\n\n\n")
}

/// Dory's nGPT and its looped layers, written into the template: `then`, edits of lines only
/// nGPT changes.
fn ngpt_lines(spec: &Spec, then: &mut Vec<(&str, &str)>) {
    if spec.norm.kind == NormKind::Unit {
        then.push((
            "    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)  # y: [..., d], eps inside the root\n",
            "    y = x / np.sqrt((x * x).sum(-1, keepdims=True) + eps)  # y: [..., d], projected onto the unit sphere (length 1)\n",
        ));
    }
    if spec.norm.place == NormPlace::Sphere {
        then.extend([
            (
                "        before = C[\"place\"] in (\"pre\", \"sandwich\")  # a norm on the branch before each sublayer\n",
                "        before = True  # nGPT: the stream normed in place before each sublayer\n",
            ),
            (
                "        after = C[\"place\"] in (\"post\", \"sandwich\")  # and after it, before the add\n",
                "        after = True  # and each sublayer's output normed\n",
            ),
            (
                "        r = residual(x, a)\n",
                "        x = h  # the normed stream\n        r = x + np.abs(w(W, \"ngpt_rate_attn\", b) * np.float32(C[\"ngpt\"][\"rate\"])) * (a - x)  # [T, hidden], moved towards the normed output at a learned rate\n",
            ),
            (
                "        x = residual(x, m)\n",
                "        x = h  # the normed stream\n        x = x + np.abs(w(W, \"ngpt_rate_ffn\", b) * np.float32(C[\"ngpt\"][\"rate\"])) * (m - x)  # [T, hidden]\n",
            ),
        ]);
    }
    if spec.looped().is_some() {
        then.push((
            "    for b, (span, use_rope, ffn) in enumerate(PLAN):\n",
            "    L = C[\"looped\"]  # layers lo..hi-1 run L[\"loops\"] times in a row\n    lo, hi = L[\"input\"], L[\"input\"] + L[\"recurrent\"]\n    order = list(range(lo)) + list(range(lo, hi)) * L[\"loops\"] + list(range(hi, len(PLAN)))  # every layer, in the order it runs\n    for i, b in enumerate(order):\n        span, use_rope, ffn = PLAN[b]\n        if b == lo:  # the first layer of a pass\n            if i == lo:\n                xl = norm(x, w(W, \"final_norm\"))  # the input layers' output, normed: every pass restarts from it\n            x = norm(x, w(W, \"final_norm\")) + xl  # [T, hidden]\n",
        ));
    }
}
