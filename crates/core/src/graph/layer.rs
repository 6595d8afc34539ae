//! The decoder layer: its norms, residuals and sublayers in each block form (sequential, parallel,
//! post-norm, hybrid), and the steps that wire them.

use super::build::{framed, n, only_in, Builder, Draft, Linear};
use super::hyper::Mix;
use super::*;
use crate::naming::Role;
use crate::spec::{AttnSpan, Block, Ffn, Mixer, NormPlace, Position, Residual, Spec};

impl<'s> Builder<'s> {
    /// The step every block opens with: the residual stream, `width` wide, routed in.
    pub(super) fn block_input(&mut self, width: u64, operation: String) -> (usize, Node) {
        let xb = self.act("Xᵦ", self.seq(width));
        let step = self.step(Draft {
            title: "Block input".into(),
            op: Op::Route,
            category: Category::Norm,
            inputs: vec![],
            output: xb,
            operation,
            equation: "Xᵦ = X when b=0; otherwise output of block b−1".into(),
        });
        (xb, step)
    }

    pub(super) fn block(&mut self) -> Scope {
        let spec = self.spec;
        let d = spec.hidden;
        let place = spec.norm.place;
        let mut children = Vec::new();

        let (xb, input) =
            self.block_input(self.stream_width(), "Route hidden state into block".into());
        children.push(input);
        // Layers may lack one of the two sublayers (Nemotron-H: each layer is a mixer or an FFN
        // alone); each half then runs only in the layers that have it.
        // Cross-attention layers (Mllama) are drawn apart, after the block: text alone skips them.
        let mixer_layers = spec.layers_where(|l| l.mixer != Mixer::None && l.mixer.runs_on_text());
        let ffn_layers = spec.layers_where(|l| l.ffn != Ffn::None && l.mixer.runs_on_text());
        let cross = spec.layers_where(|l| !l.mixer.runs_on_text());
        let mixer_start = children.len();
        self.layers = mixer_layers.clone();
        // Where some layers mix by a recurrence, the first sublayer is named for what it does in
        // all of them: it mixes positions.
        let ssm_layers = spec.layers_where(|l| l.mixer.recurrent());
        let sub = if ssm_layers.is_empty() {
            "Attention"
        } else {
            "Mixer"
        };
        // Qwen4-Exp's n-gram embeddings join the streams before the mixer reads them.
        if let Some(p) = &spec.ngram_ple {
            children.extend(self.ngram_ple(p));
        }
        // Zamba2's shared block feeds the mixer's input, not the stream.
        let mixer_in = match spec.shared.as_ref().filter(|s| !s.layers.is_empty()) {
            Some(s) => {
                children.extend(self.shared_block(s));
                "Xₘ"
            }
            // Hyper-connections weigh the streams into the attention's input.
            None if spec.hyper().is_some() => {
                children.extend(self.hyper_in(Mix::Attention, "Xᵦ", "Xₕ"));
                "Xₕ"
            }
            // Gated streams are normed in their mix: no norm follows.
            None if spec.gated_streams().is_some() => {
                children.extend(self.gated_in(Some(Mix::Attention), "Xᵦ", "Xₕ"));
                "Xₕ"
            }
            None => "Xᵦ",
        };
        let attn_in = if spec.gated_streams().is_some() {
            mixer_in
        } else if !place.before() {
            "Xᵦ"
        } else if spec.skip_first_attn_norm {
            children.push(self.attn_norm_after_first());
            "Xᵦ′"
        } else {
            let title = format!("{sub} {}", self.norm_name());
            children.push(
                self.norm_step(&title, Role::AttnNorm, "γ", mixer_in, "Xᵦ′", d, true, None)
                    .at(Point::AttnNorm),
            );
            if spec.gated_norm.is_some() {
                children.extend(self.norm_gate(Role::AttnNormDown, Role::AttnNormUp, "Xᵦ′"));
            }
            "Xᵦ′"
        };
        // Recurrent layers normed before their mixer where the attention layers are not (OLMo
        // hybrid).
        let mut rec_in = attn_in;
        if let Some(p) = spec
            .recurrent_place
            .filter(|p| p.before() && !place.before())
        {
            debug_assert_eq!(
                p,
                NormPlace::Pre,
                "only pre-norm recurrent layers are drawn"
            );
            self.layers = ssm_layers.clone();
            let title = format!("{sub} {}", self.norm_name());
            let mut step = self
                .norm_step(&title, Role::AttnNorm, "γ", "Xᵦ", "Xᵦ′", d, true, None)
                .at(Point::AttnNorm);
            only_in(std::slice::from_mut(&mut step), &ssm_layers, spec.layers);
            children.push(step);
            self.layers = mixer_layers.clone();
            rec_in = "Xᵦ′";
        }
        // Attention and Mamba2 side by side (Falcon-H1): each reads the normed input scaled by
        // its multiplier, and their outputs, scaled, are summed.
        let mut attn_in = attn_in;
        if let Some(m) = spec.mup {
            for (factor, name, what, input) in [
                (m.ssm_in, "Xₛ", "Mamba2", &mut rec_in),
                (m.attn_in, "Xₐ", "Attention", &mut attn_in),
            ] {
                if factor != 1.0 {
                    let x = self.act(name, self.seq(d));
                    children.push(self.step(Draft {
                        title: format!("{what} input scale"),
                        op: Op::Scale,
                        category: Category::Mixer,
                        inputs: vec![],
                        output: x,
                        operation: format!(
                            "Scale the normed input the {} reads (μP)",
                            what.to_lowercase()
                        ),
                        equation: format!("{name} = {} · {}", crate::fmt::float(factor), *input),
                    }));
                    *input = name;
                }
            }
        }
        let variants = spec.attn_variants();
        // Each recurrent mixer over its layers; in a frame of its own beside the attention's,
        // where some layers attend.
        for mixer in Mixer::RECURRENT {
            let set = spec.layers_where(|l| l.mixer.recurrent_kind() == Some(mixer));
            if set.is_empty() {
                continue;
            }
            self.layers = set.clone();
            // A loader that gives layers a recurrent mixer gives the Spec its settings.
            let settings = "a recurrent layer's mixer has its settings in the Spec";
            let nodes = match mixer {
                Mixer::Mamba2 => self.mamba2(rec_in, spec.ssm().expect(settings)),
                Mixer::Mamba => self.mamba(rec_in, spec.s6().expect(settings)),
                Mixer::ShortConv => self.short_conv(rec_in, spec.short_conv().expect(settings)),
                Mixer::DeltaNet => self.delta_net(rec_in, spec.delta().expect(settings)),
                Mixer::Lightning => self.lightning(rec_in, spec.lightning().expect(settings)),
                Mixer::RgLru => self.rg_lru(rec_in, spec.rg_lru().expect(settings)),
                Mixer::Rwkv => self.rwkv_time_mix(rec_in, spec.rwkv().expect(settings)),
                Mixer::MLstm => self.mlstm(rec_in, spec.mlstm().expect(settings)),
                Mixer::Attention(_) | Mixer::Parallel(_) | Mixer::None | Mixer::CrossAttention => {
                    unreachable!("only recurrent kinds listed")
                }
            };
            let mut nodes = nodes;
            if spec.mup.is_some() {
                self.rename_output(&mut nodes, "Yₛ");
            }
            self.layers = self.all_layers();
            if variants.is_empty() && set == ssm_layers {
                children.extend(nodes);
            } else {
                children.push(framed(
                    ScopeKind::Mixer,
                    spec.mixer_title(mixer),
                    "Mixer end",
                    set,
                    nodes,
                ));
            }
        }
        children.extend(self.attention_part(attn_in, !ssm_layers.is_empty()));
        if let Some(m) = spec.mup {
            let (ya, ys) = (self.latest("Yₐ"), self.latest("Yₛ"));
            let y = self.act("Y", self.seq(d));
            children.push(self.step(Draft {
                title: "Mixer sum".into(),
                op: Op::Add,
                category: Category::Mixer,
                inputs: vec![ya, ys],
                output: y,
                operation: "Add the attention's and Mamba2's outputs, each scaled by its μP multiplier: the two mixers run side by side".into(),
                equation: format!(
                    "Y = {} · Yₐ + {} · Yₛ",
                    crate::fmt::float(m.attn_out),
                    crate::fmt::float(m.ssm_out)
                ),
            }));
        }
        // Inkling: the sublayer's output through a residual convolution over time.
        if let Some(c) = spec.out_conv {
            children.extend(self.out_conv(Role::AttnOutConv, "Attention", "Y", c));
        }
        // Post-norms in the layers placed so (not a hybrid's pre-normed recurrent layers).
        let post_layers = LayerSet::from_fn(spec.layers, |b| spec.place_at(b as usize).after());
        let y = if !place.after() {
            "Y"
        } else {
            let title = format!("Post-attention {}", self.norm_name());
            self.layers = post_layers.clone();
            let mut step = self
                .norm_step(&title, Role::PostAttnNorm, "γₐ", "Y", "Y′", d, true, None)
                .at(Point::PostAttnNorm);
            if post_layers.len() != mixer_layers.len() {
                only_in(std::slice::from_mut(&mut step), &post_layers, spec.layers);
                if let Node::Step(s) = &mut step {
                    s.equation += "; Y′ = Y in the other layers";
                }
            }
            children.push(step);
            self.layers = mixer_layers.clone();
            "Y′"
        };
        // The stream, or (MiniMax) the normed input in its place.
        let (stream_in, stream_name) = if place.replaces_stream() {
            (self.latest(attn_in), attn_in)
        } else {
            (xb, "Xᵦ")
        };
        let (mut inputs, xb_scaled) = (
            vec![stream_in],
            self.residual_scale(Role::ResidScaleAttn, "ρₐ"),
        );
        inputs.extend(xb_scaled.0);
        inputs.extend(self.ngpt_rate(Role::NgptRateAttn, "λₐ"));
        self.layers = self.all_layers();
        let no_ffn = spec.layers_where(|l| l.ffn == Ffn::None);
        let r = self.act(
            if no_ffn.len() == spec.layers {
                "Xᵦ₊₁"
            } else {
                "R"
            },
            self.seq(self.stream_width()),
        );
        if spec.hyper().is_some() || spec.gated_streams().is_some() {
            inputs.push(self.latest("gₐ"));
        }
        let mixed = sub.to_lowercase();
        children.push(self.step(Draft {
            title: format!("{sub} residual"),
            op: Op::Add,
            category: Category::Norm,
            inputs,
            output: r,
            operation: match spec.block {
                _ if no_ffn.len() == spec.layers => {
                    format!("Add the {mixed} output to the block input; this is the block's output")
                }
                Block::Sequential => format!("Add the {mixed} output to the block input"),
                Block::Parallel { .. } => format!("Add the {mixed} output to the block input; the FFN, run beside it on the same input, adds its own below"),
            },
            equation: match spec.stream_mix {
                Some(mix) => mixer_mix(spec, &mix, &self.tensors[r].name, stream_name, y),
                None if place == NormPlace::Sphere => {
                    ngpt_mix(spec, &self.tensors[r].name, stream_name, y, "λₐ")
                }
                None if spec.hyper().is_some() => {
                    self.hyper_add(Mix::Attention, &self.tensors[r].name, "Xᵦ", y)
                }
                None if spec.gated_streams().is_some() => {
                    self.gated_streams_add(Mix::Attention, &self.tensors[r].name, "Xᵦ", y)
                }
                None => {
                    let (stream, delta, k) = depth_factors(spec, false);
                    format!(
                        "{} = {stream}{}Xᵦ + {delta}{}{y}{k}",
                        self.tensors[r].name,
                        xb_scaled.1,
                        residual_factor(spec)
                    )
                }
            },
        }).at(Point::ResidAttn));
        if let Some(node) = children.last_mut() {
            self.learned_residual(node, false, y);
        }
        if mixer_layers.len() != spec.layers {
            only_in(&mut children[mixer_start..], &mixer_layers, spec.layers);
            if let Some(Node::Step(s)) = children.last_mut() {
                let bare = LayerSet::from_fn(spec.layers, |b| {
                    !mixer_layers.contains(b) && !cross.contains(b)
                });
                if !bare.is_empty() {
                    s.equation += &format!("; R = Xᵦ in layers {bare}, which have no mixer");
                }
                if !cross.is_empty() {
                    s.equation += &format!("; layers {cross} cross-attend to the image (below) and pass the stream through on text alone");
                }
            }
        }
        if no_ffn.len() == spec.layers {
            return self.block_scope(children);
        }
        // Post-residual: the stream is normed after the add, and the FFN reads and adds to that.
        let (r, stream) = if place.on_stream() {
            let title = format!("Attention {}", self.norm_name());
            children.push(
                self.norm_step(&title, Role::AttnNorm, "γ", "R", "R′", d, true, None)
                    .at(Point::AttnNorm),
            );
            (self.tensors.len() - 1, "R′")
        } else {
            (r, "R")
        };
        let ffn_start = children.len();
        self.layers = ffn_layers.clone();
        // A parallel block's FFN reads the block input too: through the attention's own norm, or
        // a second norm of its own.
        let ffn_in = match (spec.block, place) {
            (Block::Parallel { shared_norm: true }, _) => attn_in,
            (Block::Parallel { shared_norm: false }, _) => {
                let title = format!("MLP {}", self.norm_name());
                children.push(
                    self.norm_step(&title, Role::FfnNorm, "γ′", "Xᵦ", "Xᵦ″", d, true, None)
                        .at(Point::FfnNorm),
                );
                "Xᵦ″"
            }
            (Block::Sequential, NormPlace::Post) if post_layers.len() != spec.layers => {
                // The pre-normed recurrent layers norm the FFN's input too.
                let pre = LayerSet::from_fn(spec.layers, |b| !post_layers.contains(b));
                self.layers = pre.clone();
                let title = format!("MLP {}", self.norm_name());
                let mut step = self
                    .norm_step(&title, Role::FfnNorm, "γ′", "R", "R′", d, true, None)
                    .at(Point::FfnNorm);
                only_in(std::slice::from_mut(&mut step), &pre, spec.layers);
                if let Node::Step(s) = &mut step {
                    s.equation += "; R′ = R in the other layers";
                }
                children.push(step);
                self.layers = ffn_layers.clone();
                "R′"
            }
            (Block::Sequential, NormPlace::Post) => "R",
            (Block::Sequential, NormPlace::PostResidual) => stream,
            // Gated streams are normed in their mix: no norm follows.
            (Block::Sequential, _) if spec.gated_streams().is_some() => {
                children.extend(self.gated_in(Some(Mix::Mlp), "R", "Rₕ"));
                "Rₕ"
            }
            (
                Block::Sequential,
                NormPlace::Pre | NormPlace::Sandwich | NormPlace::Normed | NormPlace::Sphere,
            ) => {
                let input = if spec.hyper().is_some() {
                    children.extend(self.hyper_in(Mix::Mlp, "R", "Rₕ"));
                    "Rₕ"
                } else {
                    "R"
                };
                let title = format!("MLP {}", self.norm_name());
                match spec.gated_norm {
                    // A.X-K2: the MoE layers' norm is gated, under a name of its own.
                    Some(_) => {
                        let gated =
                            LayerSet::from_fn(spec.layers, |b| spec.gated_ffn_norm(b as usize));
                        let plain = LayerSet::from_fn(spec.layers, |b| !gated.contains(b));
                        for (set, role) in [(plain, Role::FfnNorm), (gated, Role::GatedFfnNorm)] {
                            if set.is_empty() {
                                continue;
                            }
                            self.layers = set.clone();
                            let mut steps = vec![self
                                .norm_step(&title, role, "γ′", input, "R′", d, true, None)
                                .at(Point::FfnNorm)];
                            if role == Role::GatedFfnNorm {
                                steps.extend(self.norm_gate(
                                    Role::FfnNormDown,
                                    Role::FfnNormUp,
                                    "R′",
                                ));
                            }
                            if set.len() != spec.layers {
                                only_in(&mut steps, &set, spec.layers);
                            }
                            children.extend(steps);
                        }
                        self.layers = ffn_layers.clone();
                    }
                    None => children.push(
                        self.norm_step(&title, Role::FfnNorm, "γ′", input, "R′", d, true, None)
                            .at(Point::FfnNorm),
                    ),
                }
                "R′"
            }
        };
        // LongCat-Flash's shortcut: the experts read the FFN's input beside the MLP; their
        // output S waits for the next layer's end.
        let shortcut = spec.layers_where(|l| l.ffn == Ffn::Shortcut);
        if !shortcut.is_empty() {
            self.layers = shortcut.clone();
            let mut scope = self.moe(ffn_in);
            self.rename_output(&mut scope.children, "S");
            scope.title = format!("MoE on the shortcut (layers {shortcut})");
            scope.layers = Some(shortcut.clone());
            children.push(Node::Scope(scope));
        }
        // Gemma 4's MLP and experts side by side.
        let both = spec.layers_where(|l| l.ffn == Ffn::DenseAndMoe);
        if !both.is_empty() {
            self.layers = both.clone();
            let stream = match (spec.block, place) {
                (Block::Sequential, NormPlace::Pre | NormPlace::Sandwich) => "R",
                (Block::Parallel { .. }, _)
                | (
                    _,
                    NormPlace::Post
                    | NormPlace::PostResidual
                    | NormPlace::Normed
                    | NormPlace::Sphere,
                ) => unreachable!("Gemma 4's FFN follows a pre-normed attention"),
            };
            children.extend(self.mlp_and_moe(ffn_in, stream));
        }
        let dense = spec.layers_where(|l| {
            matches!(l.ffn, Ffn::Dense | Ffn::Shortcut) && l.mixer.runs_on_text()
        });
        let sparse = spec.layers_where(|l| l.ffn == Ffn::Moe);
        let mixed = dense.len() != spec.layers && sparse.len() != spec.layers;
        // The dense layers by MLP width (Gemma 4's double-wide MLPs), then the MoE layers.
        let mut groups: Vec<(LayerSet, Option<u64>)> = Vec::new();
        for (set, w) in &spec.mlp_widths {
            let own = LayerSet::from_fn(spec.layers, |b| set.contains(b) && dense.contains(b));
            groups.push((own, Some(*w)));
        }
        let narrow = LayerSet::from_fn(spec.layers, |b| {
            dense.contains(b) && !spec.mlp_widths.iter().any(|(s, _)| s.contains(b))
        });
        groups.insert(0, (narrow, Some(spec.mlp.intermediate)));
        groups.push((sparse.clone(), None));
        let mixed = mixed || groups.iter().filter(|(s, _)| !s.is_empty()).count() > 1;
        for (set, width) in groups {
            if set.is_empty() {
                continue;
            }
            self.layers = set.clone();
            let mut scope = match width {
                Some(f) => self.mlp_of(ffn_in, f),
                None => self.moe(ffn_in),
            };
            if mixed {
                scope.title = format!("{} (layers {set})", scope.title);
                scope.layers = Some(set);
            }
            children.push(Node::Scope(scope));
        }
        let channel = spec.layers_where(|l| l.ffn == Ffn::ChannelMix);
        if !channel.is_empty() {
            self.layers = channel;
            children.push(Node::Scope(self.rwkv_channel_mix(ffn_in)));
        }
        self.layers = ffn_layers.clone();
        // MiniMax's FFN adds to its own normed input.
        let (r, stream) = if place.replaces_stream() {
            (self.latest(ffn_in), ffn_in)
        } else {
            (r, stream)
        };
        if let Some(c) = spec.out_conv {
            children.extend(self.out_conv(Role::FfnOutConv, "MLP", "M", c));
        }
        children.push(self.ffn_residual(r, stream));
        if place.on_stream() {
            let title = format!("MLP {}", self.norm_name());
            children.push(
                self.norm_step(&title, Role::FfnNorm, "γ′", "Hᵦ", "Xᵦ₊₁", d, true, None)
                    .at(Point::FfnNorm),
            );
        }
        children.extend(self.layer_tail("Xᵦ₊₁"));
        // RWKV in inference: the stream halved after every few layers.
        if let Some(r) = spec.rwkv().filter(|r| r.rescale_every > 0) {
            let halving = LayerSet::from_fn(spec.layers, |b| r.halves_after(b));
            if !halving.is_empty() {
                let x = self.latest("Xᵦ₊₁");
                let out = self.act("Xᵦ₊₁", self.seq(d));
                let mut step = self.step(Draft {
                    title: "Stream halving".into(),
                    op: Op::Scale,
                    category: Category::Norm,
                    inputs: vec![x],
                    output: out,
                    operation: format!("Halve the stream after every {}th layer, as transformers does in inference (with each layer's output projections divided to match) so that the sums stay in range in half precision", r.rescale_every),
                    equation: "Xᵦ₊₁ ← Xᵦ₊₁ / 2".into(),
                });
                only_in(std::slice::from_mut(&mut step), &halving, spec.layers);
                children.push(step);
            }
        }
        self.layers = self.all_layers();
        if ffn_layers.len() != spec.layers {
            only_in(&mut children[ffn_start..], &ffn_layers, spec.layers);
            if let Some(Node::Step(s)) = children.last_mut() {
                let bare = LayerSet::from_fn(spec.layers, |b| {
                    !ffn_layers.contains(b) && !cross.contains(b)
                });
                if !bare.is_empty() {
                    s.equation += &format!("; Xᵦ₊₁ = R in layers {bare}, which have no FFN");
                }
            }
        }

        self.block_scope(children)
    }

    /// The decoder block holding `children`, repeated over every layer.
    pub(super) fn block_scope(&self, children: Vec<Node>) -> Scope {
        let family = &self.spec.family;
        let mut block = self.scope(
            ScopeKind::Block,
            &format!("{family} Block b"),
            &format!("{family} end"),
            self.spec.layers,
            children,
        );
        block.layers = Some(self.all_layers());
        block
    }

    /// The attention of every attention layer: inline where one attention serves them all (and
    /// no recurrent layer sits beside it), else each variant's in a frame of its layers, as the
    /// dense and MoE FFNs, named by its span where one span sets each apart, else by its heads.
    pub(super) fn attention_part(&mut self, attn_in: &str, recurrent: bool) -> Vec<Node> {
        let spec = self.spec;
        let variants = spec.attn_variants();
        if variants.is_empty() {
            return Vec::new();
        }
        if variants.len() == 1 && !recurrent {
            // One attention for every attending layer, whichever of the Spec's it is.
            self.attn = variants[0].0.clone();
            let nodes = self.attention_any(attn_in);
            self.attn = spec.attn.clone();
            return nodes;
        }
        let mut nodes_out = Vec::new();
        let span_of = |set: &LayerSet| -> Option<std::mem::Discriminant<AttnSpan>> {
            let mut kinds = set.iter().map(|b| {
                spec.plan[b as usize]
                    .span()
                    .map(|s| std::mem::discriminant(&s))
            });
            let first = kinds.next()??;
            kinds.all(|k| k == Some(first)).then_some(first)
        };
        let kinds: Vec<_> = variants.iter().map(|(_, set)| span_of(set)).collect();
        let by_span = kinds.iter().all(|k| k.is_some())
            && (1..kinds.len()).all(|i| !kinds[..i].contains(&kinds[i]));
        for (a, set) in variants {
            self.attn = a.clone();
            self.layers = set.clone();
            let mut nodes = self.attention_any(attn_in);
            if spec.mup.is_some() {
                self.rename_output(&mut nodes, "Yₐ");
            }
            let what = match spec.plan[set.first().unwrap_or(0) as usize].span() {
                _ if !by_span => format!("Attention, {} query heads", a.heads),
                Some(AttnSpan::Sliding(_)) => "Sliding-window attention".into(),
                Some(AttnSpan::Chunked(_)) => "Chunked attention".into(),
                Some(AttnSpan::Full) | None => "Full attention".into(),
                Some(AttnSpan::Whole) => "Bidirectional attention".into(),
            };
            nodes_out.push(framed(
                ScopeKind::Attention,
                &what,
                "Attention end",
                set,
                nodes,
            ));
        }
        self.attn = spec.attn.clone();
        self.layers = self.all_layers();
        nodes_out
    }

    /// The FFN's closing step inside its frame: the post-FFN norm where the Spec has one.
    /// Returns the steps and the name of the FFN's output.
    pub(super) fn ffn_close(&mut self, out: &str) -> Vec<Node> {
        if !self.spec.norm.place.after() {
            return Vec::new();
        }
        let title = format!("Post-MLP {}", self.norm_name());
        let normed = format!("{out}′");
        // Not in a hybrid's pre-normed recurrent layers.
        let spec = self.spec;
        let kept = self.layers.clone();
        let post = LayerSet::from_fn(spec.layers, |b| {
            kept.contains(b) && spec.place_at(b as usize).after()
        });
        self.layers = post.clone();
        let mut step = self
            .norm_step(
                &title,
                Role::PostFfnNorm,
                "γₘ",
                out,
                &normed,
                spec.hidden,
                true,
                None,
            )
            .at(Point::PostFfnNorm);
        self.layers = kept.clone();
        if post.len() != kept.len() {
            only_in(std::slice::from_mut(&mut step), &post, spec.layers);
            if let Node::Step(s) = &mut step {
                s.equation += &format!("; {normed} = {out} in the other layers");
            }
        }
        vec![step]
    }

    /// A residual causal depthwise convolution over a sublayer's output `name`, in place
    /// (Inkling's `attn_sconv`, `mlp_sconv`).
    pub(super) fn out_conv(
        &mut self,
        role: Role,
        which: &str,
        name: &str,
        c: crate::spec::ResConv,
    ) -> Vec<Node> {
        let (d, taps) = (self.spec.hidden, c.taps);
        let scaled = if c.scaled {
            format!(", all divided by √{}", taps + 1)
        } else {
            String::new()
        };
        let component = if role == Role::FfnOutConv {
            Component::Ffn
        } else {
            Component::Attention
        };
        let p = self.param(role, false, vec![d, 1, taps], component, true);
        let w = self.weight(p, "Wc", [n(d), n(taps)], None);
        let state = if role == Role::FfnOutConv {
            "S_m"
        } else {
            "S_y"
        };
        let window = self.push(state, [n(d), n(taps - 1)], TensorKind::State);
        let input = self.latest(name);
        let out = self.act(name, self.seq(d));
        let conv = self.step(Draft {
            title: format!("{which} output convolution"),
            op: Op::Conv { kernel: taps },
            category: Category::Norm,
            inputs: vec![w, window],
            output: out,
            operation: format!(
                "Mix each of the {d} output channels over its last {taps} positions, on its own, and add the result to the output"
            ),
            equation: format!(
                "{name}ₜ = {name}ₜ + Σⱼ Wc[:, j] ⊙ {name}ₜ₋₍{}₋ⱼ₎, j < {taps}{scaled}; the positions before this call come from {state}",
                taps - 1
            ),
        });
        let kept = self.push(state, [n(d), n(taps - 1)], TensorKind::State);
        let keep = self.step(Draft {
            title: format!("{which} output convolution window"),
            op: Op::Route,
            category: Category::Norm,
            inputs: vec![input],
            output: kept,
            operation: format!("Keep each channel's last {} inputs for the tokens that follow: the convolution's state", taps - 1),
            equation: format!("{state} = {name}[t−{}…t] (zeros before the first token)", taps - 1),
        });
        vec![conv, keep]
    }

    /// The block's closing step, outside the FFN's frame as the attention residual is outside
    /// the attention's: the FFN output added to the residual stream.
    pub(super) fn ffn_residual(&mut self, residual: usize, stream: &str) -> Node {
        let m = if self.spec.norm.place.after() {
            "M′"
        } else if self.spec.moe.as_ref().is_some_and(|m| m.post_norm) {
            "M (M′ in the MoE layers)"
        } else {
            "M"
        };
        // Post-residual, the sum is normed next into the block's output.
        let out = if self.spec.norm.place.on_stream() {
            "Hᵦ"
        } else {
            "Xᵦ₊₁"
        };
        let (scale, times) = self.residual_scale(Role::ResidScaleFfn, "ρₘ");
        // LongCat-Flash: the layer after a shortcut layer adds its experts' output S too.
        let spec = self.spec;
        let joins = LayerSet::from_fn(spec.layers, |b| {
            b > 0 && spec.plan[b as usize - 1].ffn == Ffn::Shortcut
        });
        let (shortcut, plus_s) = if joins.is_empty() {
            (None, String::new())
        } else {
            (
                Some(self.latest("S")),
                format!(" (+ S of layer b − 1 in layers {joins})"),
            )
        };
        let xn = self.act(out, self.seq(self.stream_width()));
        let post =
            (spec.hyper().is_some() || spec.gated_streams().is_some()).then(|| self.latest("gₘ"));
        let rate = self.ngpt_rate(Role::NgptRateFfn, "λₘ");
        let mut node = self.step(Draft {
            title: "MLP residual".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: std::iter::once(residual)
                .chain(scale)
                .chain(shortcut)
                .chain(post)
                .chain(rate)
                .collect(),
            output: xn,
            operation: if shortcut.is_some() {
                "Add the FFN output to the attention residual, and in the second layer of each pair the experts' output from the first; this is the block's output".into()
            } else {
                "Add the FFN output to the attention residual; this is the block's output".into()
            },
            equation: match self.spec.stream_mix {
                Some(mix) => format!(
                    "{out} = {} · {stream} + {} · {m}",
                    crate::fmt::float(mix.mlp.0),
                    crate::fmt::float(mix.mlp.1)
                ),
                None if spec.hyper().is_some() => self.hyper_add(Mix::Mlp, out, stream, m),
                None if spec.gated_streams().is_some() => self.gated_streams_add(Mix::Mlp, out, stream, m),
                None if spec.norm.place == NormPlace::Sphere => {
                    ngpt_mix(spec, out, stream, m, "λₘ")
                }
                None => {
                    let (d_stream, d_delta, k) = depth_factors(spec, true);
                    format!(
                        "{out} = {d_stream}{times}{stream} + {d_delta}{}{m}{plus_s}{k}",
                        residual_factor(self.spec)
                    )
                }
            },
        }).at(Point::ResidFfn);
        self.learned_residual(&mut node, true, m);
        node
    }

    /// A.X-K2's gate on a norm's output `y`: y ⊙ σ(W_up · SiLU(W_down · y)).
    pub(super) fn norm_gate(&mut self, down: Role, up: Role, y: &str) -> Vec<Node> {
        let d = self.spec.hidden;
        let r = self.spec.gated_norm.as_ref().map_or(0, |g| g.rank);
        let lin = |role, title, names, rows, cols, operation| {
            Linear::whole(role, title, names, rows, cols, Category::Norm, operation)
        };
        let mut nodes = vec![self.linear(lin(
            down,
            "Norm gate down-projection",
            ["W_gd", "Gₙ", y],
            r,
            d,
            format!("Project the normed values to a rank-{r} gate, through SiLU"),
        ))];
        if let Some(Node::Step(s)) = nodes.last_mut() {
            s.equation = format!("Gₙ = SiLU(W_gd · {y})");
        }
        nodes.push(self.linear(lin(
            up,
            "Norm gate up-projection",
            ["W_gu", "Gₙ′", "Gₙ"],
            d,
            r,
            format!("Project the gate back to {d} values"),
        )));
        let g = self.latest("Gₙ′");
        let out = self.act(y, self.seq(d));
        nodes.push(self.step(Draft {
            title: "Norm gate".into(),
            op: Op::Activation,
            category: Category::Norm,
            inputs: vec![g],
            output: out,
            operation: "Gate each normed value by a sigmoid of its own projection".into(),
            equation: format!("{y} = {y} ⊙ σ(Gₙ′)"),
        }));
        nodes
    }

    /// A residual add in `node` (after the attention, or after the FFN) that mixes the
    /// sublayer's output `y` and the stream by learned vectors: ZAYA's shifts and scales of both
    /// terms, Ergo's gate. A plain add, or Doge's scaled stream (`residual_scale`), stays as is.
    pub(super) fn learned_residual(&mut self, node: &mut Node, ffn: bool, y: &str) {
        match self.spec.residual {
            Residual::Add | Residual::Scaled => {}
            Residual::Affine => self.affine_residual(node, ffn, y),
            Residual::Gated => self.gated_residual(node, ffn, y),
        }
    }

    /// Ergo's gate: one vector w per sublayer, σ(w) ⊙ y + √(1 − σ(w)²) ⊙ stream.
    fn gated_residual(&mut self, node: &mut Node, ffn: bool, y: &str) {
        let d = self.spec.hidden;
        let (role, name) = if ffn {
            (Role::ResidGateFfn, "wₘ")
        } else {
            (Role::ResidGateAttn, "wₐ")
        };
        let p = self.param(role, false, vec![d], Component::Norm, true);
        let w = self.weight(p, name, [n(d), n(1)], None);
        if let Node::Step(s) = node {
            let out = self.tensors[s.output].name.clone();
            let stream = if ffn { "R" } else { "Xᵦ" };
            s.inputs.push(w);
            s.equation = format!(
                "{out} = σ({name}) ⊙ {y} + √(1 + σ({name})) · e^(−softplus({name})/2) ⊙ {stream}, the second factor √(1 − σ({name})²)"
            );
            s.operation += ", mixed by a learned gate that keeps the variance";
        }
    }

    /// ZAYA's residual add: both terms shifted and scaled by learned vectors.
    fn affine_residual(&mut self, node: &mut Node, ffn: bool, y: &str) {
        let d = self.spec.hidden;
        let (sub, roles) = if ffn {
            (
                "ₘ",
                [
                    Role::ResidFfnOutShift,
                    Role::ResidFfnOutScale,
                    Role::ResidFfnShift,
                    Role::ResidFfnScale,
                ],
            )
        } else {
            (
                "ₐ",
                [
                    Role::ResidAttnOutShift,
                    Role::ResidAttnOutScale,
                    Role::ResidAttnShift,
                    Role::ResidAttnScale,
                ],
            )
        };
        let names = [
            format!("βₒ{sub}"),
            format!("γₒ{sub}"),
            format!("βᵣ{sub}"),
            format!("γᵣ{sub}"),
        ];
        let mut weights = vec![];
        for (role, name) in roles.into_iter().zip(&names) {
            let p = self.param(role, false, vec![d], Component::Norm, true);
            weights.push(self.weight(p, name, [n(d), n(1)], None));
        }
        if let Node::Step(s) = node {
            let out = self.tensors[s.output].name.clone();
            let stream = if ffn { "R" } else { "Xᵦ" };
            s.inputs.extend(weights);
            s.equation = format!(
                "{out} = ({y} + {}) ⊙ {} + ({stream} + {}) ⊙ {}",
                names[0], names[1], names[2], names[3]
            );
            s.operation += ", each term shifted and scaled by learned vectors first";
        }
    }

    /// nGPT's learned rate of one residual move on the unit sphere, a vector per layer (Dory's
    /// `lambda_1`, `lambda_2`).
    pub(super) fn ngpt_rate(&mut self, role: Role, name: &str) -> Option<usize> {
        if self.spec.norm.place != NormPlace::Sphere {
            return None;
        }
        let d = self.spec.hidden;
        let p = self.param(role, false, vec![d], Component::Norm, true);
        Some(self.weight(p, name, [n(d), n(1)], None))
    }

    /// The learned vector scaling the residual stream where a sublayer joins it, where the
    /// model has one (Doge): its weight, and its factor in an equation (`ρₐ ⊙ `).
    pub(super) fn residual_scale(&mut self, role: Role, name: &str) -> (Option<usize>, String) {
        if self.spec.residual != Residual::Scaled {
            return (None, String::new());
        }
        let d = self.spec.hidden;
        let p = self.param(role, false, vec![d], Component::Norm, true);
        (
            Some(self.weight(p, name, [n(d), n(1)], None)),
            format!("{name} ⊙ "),
        )
    }

    /// Restrict an attention step to `layers` when they are not all of the attention layers
    /// (NoPE layers skip RoPE).
    pub(super) fn gate(&self, mut node: Node, layers: &LayerSet) -> Node {
        let attending = self.spec.attending_layers();
        if let Node::Step(s) = &mut node {
            if layers.len() != attending.len() {
                let skipped = LayerSet::from_fn(self.spec.layers, |b| {
                    attending.contains(b) && !layers.contains(b)
                });
                s.title += &format!(" ({} of {} layers)", layers.len(), attending.len());
                s.equation += &format!("; identity in layers {skipped} (no positional encoding)");
                s.layers = Some(layers.clone());
            }
        }
        node
    }

    /// The attention in `self.attn`: latent (MLA) or grouped-query.
    pub(super) fn attention_any(&mut self, x_in: &str) -> Vec<Node> {
        if self.attn.v4.is_some() {
            self.v4_attention(x_in)
        } else if self.attn.mla.is_some() {
            self.mla(x_in)
        } else {
            self.attention(x_in)
        }
    }

    /// Renames the output of the last step in `nodes` (a mixer's output projection, "Y") where
    /// two mixers' outputs are summed next.
    pub(super) fn rename_output(&mut self, nodes: &mut [Node], to: &str) {
        if let Some(Node::Step(s)) = nodes.last_mut() {
            let t = &mut self.tensors[s.output];
            if let Some(rest) = s.equation.strip_prefix(&format!("{} ", t.name)) {
                s.equation = format!("{to} {rest}");
            }
            t.name = to.to_string();
        }
    }

    pub(super) fn has_rope(&self) -> bool {
        matches!(self.spec.position, Position::Rope(_)) && self.spec.plan.iter().any(|l| l.rope)
    }

    /// The pre-attention norm of every layer but the first, which reads the embeddings as they
    /// are (ModernBERT).
    pub(super) fn attn_norm_after_first(&mut self) -> Node {
        let rest = LayerSet::from_fn(self.spec.layers, |b| b > 0);
        let kept = std::mem::replace(&mut self.layers, rest.clone());
        let title = format!("Attention {} (not in layer 0)", self.norm_name());
        let d = self.spec.hidden;
        let mut node = self
            .norm_step(&title, Role::AttnNorm, "γ", "Xᵦ", "Xᵦ′", d, true, None)
            .at(Point::AttnNorm);
        self.layers = kept;
        if let Node::Step(s) = &mut node {
            s.equation += "; Xᵦ′ = Xᵦ in layer 0";
            s.layers = Some(rest);
        }
        node
    }
}

/// A MiniMax mixer residual: R = α · Xᵦ′ + β · Y, with each mixer kind's factors where both
/// kinds are present and they differ.
fn mixer_mix(spec: &Spec, mix: &crate::spec::StreamMix, r: &str, stream: &str, y: &str) -> String {
    let f = crate::fmt::float;
    let linear = spec.plan.iter().any(|l| l.mixer == Mixer::Lightning);
    let attending = spec.plan.iter().any(|l| l.mixer != Mixer::Lightning);
    let (a, b) = if attending { mix.attn } else { mix.linear };
    if !(linear && attending) || mix.attn == mix.linear {
        return format!("{r} = {} · {stream} + {} · {y}", f(a), f(b));
    }
    format!(
        "{r} = α · {stream} + β · {y}; (α, β) = ({}, {}) in the attention layers, ({}, {}) in the lightning layers",
        f(mix.attn.0),
        f(mix.attn.1),
        f(mix.linear.0),
        f(mix.linear.1)
    )
}

/// nGPT's residual move (Dory): from the normed stream towards the normed output at a learned
/// rate per channel.
fn ngpt_mix(spec: &Spec, r: &str, stream: &str, y: &str, lambda: &str) -> String {
    let f = spec
        .ngpt
        .expect("a block on the unit sphere has its nGPT rates")
        .rate_factor();
    format!(
        "{r} = {stream} + |{lambda} · {}| ⊙ ({y} − {stream})",
        crate::fmt::approx(f)
    )
}

/// A depth-scaled add's factors on the stream and on the sublayer's output, and what k is
/// (Beam); empty otherwise.
fn depth_factors(spec: &Spec, ffn: bool) -> (&'static str, &'static str, &'static str) {
    match (spec.depth_scaled, ffn) {
        (false, _) => ("", "", ""),
        (true, false) => (
            "√((k − 1)/k) · ",
            "1/√k · ",
            ", k = 2b + 2 (this add's number in the model)",
        ),
        (true, true) => (
            "√((k − 1)/k) · ",
            "1/√k · ",
            ", k = 2b + 3 (this add's number in the model)",
        ),
    }
}

fn residual_factor(spec: &Spec) -> String {
    if let Some(r) = spec
        .rwkv()
        .filter(|r| r.rescale_every > 0 && r.halvings(spec.layers - 1) > 0)
    {
        return format!("2^−⌊b/{}⌋ · ", r.rescale_every);
    }
    if spec.residual_mult == 1.0 {
        String::new()
    } else {
        format!("{} · ", spec.residual_mult)
    }
}
