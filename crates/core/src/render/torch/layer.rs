//! The decoder layer: the residual wiring of its sublayers, in each block form.

use super::*;

/// The attention needs its layer's index: differential attention's λ_init, a bias of the last
/// layer alone, a first layer without its attention norm.
pub(super) fn needs_layer_index(spec: &Spec) -> bool {
    spec.attn.differential || spec.attn.o_bias_last || spec.skip_first_attn_norm
}

/// Qwen4-Exp's n-gram embeddings' modules, with each PLE layer's shards' rows.
pub(super) fn ngram_code(spec: &Spec) -> String {
    let p = spec.ngram_ple.as_ref().expect("n-gram embeddings");
    let shards: Vec<(u64, Vec<u64>)> = (p.layers.iter().enumerate())
        .map(|(i, b)| {
            let rows = p.rows(i as u64);
            let (size, count) = p.shards(rows);
            (b, (0..count).map(|s| size.min(rows - s * size)).collect())
        })
        .collect();
    gated::ngram_classes(p, spec.hidden, spec.norm.eps, &shards)
}

/// The MoE block is made with its layer's index: ZAYA's router carries state from the layer
/// before; Ling's clips are the layer's own.
pub(super) fn moe_needs_index(spec: &Spec) -> bool {
    spec.moe
        .as_ref()
        .is_some_and(|m| m.router_mlp.is_some() || m.act_clips.is_some())
}

/// The decoder layer needs its index: for the attention, or to pick its attention's class.
pub(super) fn layer_needs_index(spec: &Spec) -> bool {
    needs_layer_index(spec)
        || moe_needs_index(spec)
        || !spec.layer_attn.is_empty()
        || !spec.mlp_widths.is_empty()
        || spec.rwkv().is_some()
        || spec.depth_scaled
        || spec.ngram_ple.is_some()
}

pub(super) fn residual(spec: &Spec) -> String {
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

pub(super) fn layer(spec: &Spec, n: &Names) -> String {
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
    if spec.rwkv().is_some() {
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
    let gated = spec.gated_streams().is_some();
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
    } else if !spec.layer_attn.is_empty() && super::attention::indexed_by_layer(spec) {
        format!("        self.{attn} = ATTENTION[layer_idx](span, use_rope, layer_idx)  # this layer's own class\n")
    } else if !spec.layer_attn.is_empty() {
        format!("        self.{attn} = ATTENTION[layer_idx](span, use_rope)  # this layer's own class\n")
    } else {
        format!("        self.{attn} = Attention(span, use_rope)\n")
    };
    let mut a_out = format!("self.{attn}({attn_in}, rope)");
    let recurrent = match (spec.ssm(), spec.s6(), spec.short_conv(), spec.delta()) {
        (Some(_), _, _, _) => Some(("mamba2", "Mamba2")),
        (None, Some(_), _, _) => Some(("mamba", "Mamba")),
        (None, None, Some(_), _) => Some(("conv", "ShortConv")),
        (None, None, None, Some(d)) => Some(("delta", delta_class(d).0)),
        (None, None, None, None) if spec.lightning().is_some() => {
            Some(("lightning", "LightningAttention"))
        }
        (None, None, None, None) if spec.rg_lru().is_some() => Some(("rglru", "RecurrentBlock")),
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
        let anchor = spec.delta().map_or(Role::SsmIn, |d| delta_class(d).1);
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
    // Dense and MoE layers' FFNs under names of their own (MiniMax-M3 as published: `mlp`,
    // `block_sparse_moe`).
    let (mlp, moe) = (n.sublayer(Role::Down), n.sublayer(Role::Router));
    let apart = has_dense && spec.is_moe() && !beside && mlp != moe;
    let make_moe = match moe_needs_index(spec) {
        true => "MoE(layer_idx)",
        false => "MoE()",
    };
    init += &match (has_dense, spec.is_moe()) {
        _ if own_mlp => String::new(),
        _ if apart => format!("        if ffn == \"moe\":\n            self.{moe} = {make_moe}\n        else:\n            self.{mlp} = MLP()\n"),
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
    } else if apart {
        format!("(self.{moe} if hasattr(self, \"{moe}\") else self.{mlp})({ffn_in})")
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
        // The checkpoint keeps the router's correction bias outside the MoE block (Kolibri's),
        // in the MoE layers alone.
        let dense = spec.plan.iter().any(|l| l.dense());
        let indent = if dense { "    " } else { "" };
        if dense {
            init += "        if ffn == \"moe\":\n";
        }
        let parts: Vec<&str> = path.split('.').collect();
        let (holders, buf) = parts.split_at(parts.len() - 1);
        for i in 1..=holders.len() {
            init += &format!(
                "        {indent}self.{} = nn.Module()\n",
                holders[..i].join(".")
            );
        }
        let e = spec.moe.as_ref().map_or(0, |m| m.experts);
        init += &format!(
            "        {indent}self.{}.register_buffer(\"{}\", torch.zeros({e}))  # the MoE's correction bias, stored here\n",
            holders.join("."),
            buf[0]
        );
        f_out = if dense {
            format!("(self.{ffn}({ffn_in}, self.{path}) if isinstance(self.{ffn}, MoE) else self.{ffn}({ffn_in}))")
        } else {
            format!("self.{ffn}({ffn_in}, self.{path})")
        };
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
        Block::Sequential if spec.hyper().is_some() => {
            let mut made = Vec::new();
            let mut mixes = Vec::new();
            for (role, note) in [
                (Role::HcAttnFn, "before the attention"),
                (Role::HcFfnFn, "before the FFN"),
            ] {
                let (module, prefix) = hyper::split(&n.path(role));
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
        Block::Sequential if spec.residual == Residual::Affine => {
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
        Block::Sequential if spec.residual == Residual::Gated => {
            let (ra, rf) = (
                n.held_as(Role::ResidGateAttn).0,
                n.held_as(Role::ResidGateFfn).0,
            );
            init += &format!("        self.{ra} = ResidualGate({d})  # where the attention joins the stream\n        self.{rf} = ResidualGate({d})  # where the FFN does\n");
            format!("{mixed_in}        x = self.{ra}({a_out}, x)\n{ffn_line}        x = self.{rf}({f_out}, x)\n        return x")
        }
        Block::Sequential if spec.residual == Residual::Scaled => {
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
    // The residual adds that mix by learned vectors: ZAYA's shifts and scales, Ergo's gate.
    let residual_class = match spec.residual {
        Residual::Affine => "class ResidualScale(nn.Module):\n    \"\"\"ZAYA's residual add: (out + out_shift) * out_scale + (stream + stream_shift) * stream_scale.\"\"\"\n\n    def __init__(self, d):\n        super().__init__()\n        self.hidden_states_scale = nn.Parameter(torch.ones(d))\n        self.hidden_states_bias = nn.Parameter(torch.zeros(d))\n        self.residual_scale = nn.Parameter(torch.ones(d))\n        self.residual_bias = nn.Parameter(torch.zeros(d))\n\n    def forward(self, out, stream):\n        return (out + self.hidden_states_bias) * self.hidden_states_scale + (stream + self.residual_bias) * self.residual_scale\n\n\n".to_string(),
        Residual::Gated => fill(
            r#"class ResidualGate(nn.Module):
    """Ergo's residual add: sigmoid(w) * out + sqrt(1 + sigmoid(w)) * exp(-softplus(w) / 2) * stream; the squares of the two factors sum to 1."""

    def __init__(self, d):
        super().__init__()
        self.${w} = nn.Parameter(torch.zeros(d))

    def forward(self, out, stream):
        g = torch.sigmoid(self.${w})
        return g * out + torch.sqrt(1 + g) * torch.exp(-0.5 * F.softplus(self.${w})) * stream


"#,
            &[("w", n.held_as(Role::ResidGateAttn).1)],
        ),
        Residual::Add | Residual::Scaled => String::new(),
    };
    residual_class
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
pub(super) fn pair_layer(spec: &Spec, n: &Names) -> String {
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
pub(super) fn split_place_layer(spec: &Spec, n: &Names) -> String {
    debug_assert!(
        spec.norm.place == NormPlace::Post
            && spec.recurrent_place == Some(NormPlace::Pre)
            && spec.block == Block::Sequential,
        "the one split placement loaders give"
    );
    let Some(delta) = spec.delta() else {
        unreachable!("only DeltaNet hybrids place their norms apart")
    };
    let (class, anchor) = delta_class(delta);
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
pub(super) fn single_layer(spec: &Spec, n: &Names) -> String {
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
                n.sublayer(spec.delta().map_or(Role::SsmIn, |d| delta_class(d).1)),
                format!(
                    "{}()",
                    spec.delta().map_or("GatedDeltaNet", |d| delta_class(d).0)
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

/// Mllama's layers that cross-attend to the image: their modules as the checkpoint names them,
/// and a forward pass that a prompt without an image skips.
pub(super) fn cross_layer(spec: &Spec) -> String {
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
