//! The FFN: activations, the MLP, and mixtures of experts with their routers and stored layouts.

use super::*;

/// ZAYA's router: an MLP over the FFN input that carries its state from layer to layer.
pub(super) fn router_mlp(spec: &Spec, width: u64) -> String {
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
pub(super) fn shared_beside(spec: &Spec, n: &Names) -> Option<String> {
    let m = spec.moe.as_ref()?;
    (m.shared_experts > 0 && n.sublayer(Role::SharedDown) != n.sublayer(Role::Router))
        .then(|| n.sublayer(Role::SharedDown))
}

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
pub(super) const XIELU: &str = r#"class XIELU(nn.Module):
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
pub(super) enum Ffn {
    Dense,
    Expert,
    Shared,
}

/// A two- or three-matrix MLP: the dense FFN, one routed expert, or the shared expert(s).
/// The dense MLP's class, and a class for each width some layers have of their own (Gemma 4's
/// double-wide MLPs) with the layers that use it.
pub(super) fn mlp_classes(spec: &Spec, n: &Names) -> String {
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

pub(super) fn mlp(spec: &Spec, n: &Names, class: &str, which: Ffn) -> String {
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
    // MiniMax-M3's dense MLP and shared experts, and experts stored one by one whose SwiGLU is
    // clamped: gpt-oss's clamped SwiGLU (or, where `swiglu_plain`, the plain one of the clamped
    // inputs).
    let clamp = match which {
        Ffn::Expert => moe.and_then(|m| m.swiglu_limit.map(|l| (l, m.swiglu_plain))),
        Ffn::Dense | Ffn::Shared => spec.mlp.clamp.map(|l| (l, false)),
    };
    if let Some((l, plain)) = clamp {
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
                    normed(match plain {
                        true => format!("{} * up", act_expr(act, "gate")),
                        false => "(up + 1) * gate * torch.sigmoid(1.702 * gate)".into(),
                    }),
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
pub(super) fn stacked_experts(spec: &Spec, n: &Names, out_in: bool, interleaved: bool) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (d, e, f) = (spec.hidden, m.experts, m.expert_intermediate);
    if !spec.mlp.gated {
        return stacked_plain_experts(spec, n, out_in);
    }
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

/// Plain (ungated) experts stacked one tensor per projection, each expert's output RMS-normed
/// by its own row of a stacked weight where the model has that (Ergo's `post_expert_norm`).
fn stacked_plain_experts(spec: &Spec, n: &Names, out_in: bool) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (d, e, f) = (spec.hidden, m.experts, m.expert_intermediate);
    let (up, down) = (n.attr(Role::ExpertUp), n.attr(Role::ExpertDown));
    let (shapes, t) = if out_in {
        ((format!("{e}, {f}, {d}"), format!("{e}, {d}, {f}")), ".T")
    } else {
        ((format!("{e}, {d}, {f}"), format!("{e}, {f}, {d}")), "")
    };
    let mut init = format!(
        "        self.{up} = nn.Parameter(torch.empty({}))  # every expert's up projection\n        self.{down} = nn.Parameter(torch.empty({}))\n",
        shapes.0, shapes.1
    );
    let h = act_expr(spec.mlp.act, &format!("(x @ self.{up}[e]{t})"));
    let mut out = format!("        return {h} @ self.{down}[e]{t}");
    if m.expert_out_norm {
        // Below the experts' own module (the MoE block itself where it holds them).
        let (module, param) = n.held_as(Role::ExpertOutNorm);
        let experts = n.path(Role::ExpertDown);
        let experts = experts.rsplit_once('.').map_or("", |(m, _)| m);
        let module = module
            .strip_prefix(&format!("{experts}."))
            .unwrap_or(&module)
            .to_string();
        init += &holders_of(&[format!("{module}.{param}")]);
        init += &format!("        self.{module}.{param} = nn.Parameter(torch.ones({e}, {d}))  # each expert's own norm weight\n");
        out = format!(
            "        y = {h} @ self.{down}[e]{t}\n        return F.rms_norm(y, ({d},), eps={}) * self.{module}.{param}[e]  # normed by expert e's own weight",
            fmt_f(spec.norm.eps)
        );
    }
    fill(
        r#"class Experts(nn.Module):
    """All ${e} routed experts, plain MLPs, each projection stored as one tensor."""

    def __init__(self):
        super().__init__()
${init}
    def forward(self, x, e):  # x: [tokens, ${d}] -> [tokens, ${d}], expert e
${out}"#,
        &[
            ("e", e.to_string()),
            ("init", init),
            ("d", d.to_string()),
            ("out", out),
        ],
    )
}

/// Every expert's rows in one 2-D tensor per projection (DBRX), held where the checkpoint has
/// them (`experts.mlp.w1`).
pub(super) fn flat_experts(spec: &Spec, n: &Names) -> String {
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

/// A plain shared expert whose tensors the MoE block holds itself (Ergo's), written inline in
/// the block rather than as a class of its own.
fn inline_shared(spec: &Spec, n: &Names) -> bool {
    spec.moe.as_ref().is_some_and(|m| m.shared_experts > 0)
        && !spec.mlp.gated
        && !n.inside(Role::SharedDown).contains('.')
}

pub(super) fn moe_classes(spec: &Spec, n: &Names) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    // The experts' output norms are written where Ergo's layout has them: plain stacked experts,
    // a shared expert the block holds itself. Another layout with them needs its own code here.
    assert!(
        !m.expert_out_norm
            || (!spec.mlp.gated && matches!(m.storage, ExpertStorage::Stacked { .. })),
        "an expert output norm is written for plain stacked experts only"
    );
    assert!(
        !m.shared_out_norm || inline_shared(spec, n),
        "a shared expert's output norm is written for one the MoE block holds itself only"
    );
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
    match m.storage {
        ExpertStorage::Stacked {
            out_in,
            interleaved,
        } => out.push(stacked_experts(spec, n, out_in, interleaved)),
        ExpertStorage::Flat => out.push(flat_experts(spec, n)),
        ExpertStorage::PerExpert => out.push(mlp(spec, n, "ExpertMLP", Ffn::Expert)),
    }
    if m.scoring == Scoring::SigmoidSink {
        out.push(sink_moe(spec));
        return out.join("\n\n\n");
    }
    if m.shared_experts > 0 && !inline_shared(spec, n) {
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
pub(super) fn sink_moe(spec: &Spec) -> String {
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
pub(super) fn scaled_router(spec: &Spec, n: &Names) -> String {
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
pub(super) fn experts_beside(spec: &Spec) -> String {
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
pub(super) fn router(spec: &Spec, n: &Names) -> String {
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
pub(super) fn layer_correction(spec: &Spec, n: &Names) -> Option<String> {
    let m = spec.moe.as_ref()?;
    (m.correction_bias && n.sublayer(Role::CorrectionBias) != n.sublayer(Role::Router))
        .then(|| n.path(Role::CorrectionBias))
}

/// The correction bias is a buffer of the MoE block itself (MiniMax-M2) or of a module of its
/// own (ERNIE 4.5's `moe_statics`), not of its router.
pub(super) fn own_correction(n: &Names) -> bool {
    let path = n.inside(Role::CorrectionBias);
    match path.rsplit_once('.') {
        None => true,
        Some((holder, _)) => holder != n.inside(Role::Router),
    }
}

pub(super) fn moe(spec: &Spec, n: &Names) -> String {
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
    // A router stored as a bare [in, out] tensor (Ergo's `gate_kernel`).
    let bare_router = crate::naming::stored_in_out(spec.layout, Role::Router)
        && !names(spec.layout, Role::Router, false)
            .0
            .ends_with(".weight");
    let mut init = holder
        + &if bare_router {
            format!("        self.{router_attr} = nn.Parameter(torch.empty({d}, {scored}))  # the router, stored [in, out]\n")
        } else if m.router_mlp.is_some() {
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
    // A plain shared expert whose tensors the block holds itself, each stored [in, out] (Ergo's
    // `shared_up_proj`, `shared_down_proj`), its output normed where the model norms it.
    let inline = inline_shared(spec, n);
    if inline {
        let (up, down, f) = (
            n.inside(Role::SharedUp),
            n.inside(Role::SharedDown),
            m.shared_intermediate,
        );
        let (su, sd, t) = if crate::naming::stored_in_out(spec.layout, Role::SharedUp) {
            (format!("{d}, {f}"), format!("{f}, {d}"), "")
        } else {
            (format!("{f}, {d}"), format!("{d}, {f}"), ".T")
        };
        init += &format!("        self.{up} = nn.Parameter(torch.empty({su}))  # the shared expert's up projection\n        self.{down} = nn.Parameter(torch.empty({sd}))\n");
        shared = format!(
            "        s = {} @ self.{down}{t}  # the shared expert\n",
            act_expr(spec.mlp.act, &format!("(x @ self.{up}{t})"))
        );
        if m.shared_out_norm {
            let (module, param) = n.held_as(Role::SharedOutNorm);
            let module = module
                .split_once('.')
                .map_or(module.clone(), |(_, r)| r.to_string());
            init += &holders_of(&[format!("{module}.{param}")]);
            init += &format!("        self.{module}.{param} = nn.Parameter(torch.ones({d}))  # its output norm's weight\n");
            shared += &format!(
                "        s = F.rms_norm(s, ({d},), eps={}) * self.{module}.{param}  # normed\n",
                fmt_f(spec.norm.eps)
            );
        }
        shared += "        out = out + s\n";
    }
    if m.shared_experts > 0 && shared_beside(spec, n).is_none() && !inline {
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
        logits = ${logits}  # [tokens, ${scored}]
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
                (
                    "logits",
                    if bare_router {
                        format!("x.float() @ self.{router_attr}.float()")
                    } else {
                        format!("self.{router_attr}(x)")
                    },
                ),
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
