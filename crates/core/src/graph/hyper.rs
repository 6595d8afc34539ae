//! Hyper-connections (HY v4): the residual stream as n streams. The embedding starts all of
//! them; before each sublayer a learned, per-token weighing of the streams makes its input; its
//! output is written back to every stream with a gate of its own; a head weighs the streams into
//! one before the final norm.

use super::build::{n, Builder, Draft};
use super::*;
use crate::fmt::float;
use crate::naming::Role;
use crate::spec::Hyper;

/// Which of a layer's two stream mixes.
#[derive(Clone, Copy)]
pub(super) enum Mix {
    Attention,
    Mlp,
}

/// Of a stream mix's points, the one before `mix`, or the head's where `None`.
pub(super) fn pick(mix: Option<Mix>, [attention, mlp, head]: [Point; 3]) -> Point {
    match mix {
        Some(Mix::Attention) => attention,
        Some(Mix::Mlp) => mlp,
        None => head,
    }
}

impl Mix {
    fn roles(self) -> (Role, Role, Role) {
        match self {
            Mix::Attention => (Role::HcAttnFn, Role::HcAttnBase, Role::HcAttnScale),
            Mix::Mlp => (Role::HcFfnFn, Role::HcFfnBase, Role::HcFfnScale),
        }
    }

    pub(super) fn sub(self) -> &'static str {
        match self {
            Mix::Attention => "Attention",
            Mix::Mlp => "MLP",
        }
    }

    /// Subscript of its gates' names.
    pub(super) fn mark(self) -> &'static str {
        match self {
            Mix::Attention => "ₐ",
            Mix::Mlp => "ₘ",
        }
    }
}

impl Builder<'_> {
    fn hyper(&self) -> Hyper {
        self.spec
            .hyper()
            .expect("hyper-connection steps are built for a Spec that has them")
    }

    /// The width of the stream between layers: n streams of the hidden size.
    pub(super) fn stream_width(&self) -> u64 {
        self.spec.hidden * self.spec.streams()
    }

    /// After the embedding: every stream starts as the token's embedding.
    pub(super) fn hyper_widen(&mut self) -> Node {
        let streams = self.spec.streams();
        let x = self.latest("X");
        let out = self.act("X", self.seq(self.stream_width()));
        self.step(Draft {
            title: "Streams".into(),
            op: Op::Concat,
            category: Category::Norm,
            inputs: vec![x],
            output: out,
            operation: format!(
                "Copy each embedding into {streams} streams: the residual stream is {streams} copies of the hidden state from here to the {}",
                if self.spec.gated_streams().is_some() { "head" } else { "final norm" }
            ),
            equation: format!(
                "X = [X; …; X]  ({} × {} = {} features)",
                streams,
                self.spec.hidden,
                self.stream_width()
            ),
        })
    }

    /// The logits of a stream mix from the RMS-scaled streams: 2n of them before a sublayer
    /// (`mix`), n in the head (`None`).
    fn stream_logits(&mut self, mix: Option<Mix>, input: &str, out: &str) -> Node {
        let h = self.hyper();
        let width = self.stream_width();
        let (role, rows, what) = match mix {
            Some(m) => (m.roles().0, h.logits(), m.sub()),
            None => (Role::HcHeadFn, h.streams, "Head"),
        };
        let per_layer = mix.is_some();
        let p = self.param(role, false, vec![rows, width], Component::Norm, per_layer);
        let w = self.weight(p, "Wₕ", [n(rows), n(width)], None);
        let o = self.act(out, self.seq(rows));
        self.step(Draft {
            title: format!("{what} stream logits"),
            op: Op::MatMul,
            category: Category::Norm,
            inputs: vec![w],
            output: o,
            operation: format!(
                "Score the {} streams from all {width} of their features, scaled by their RMS (no learned scale)",
                h.streams
            ),
            equation: format!(
                "{out} = (Wₕ · {input}) / √(mean({input}²) + ε), ε = {}",
                float(self.spec.norm.eps)
            ),
        }).at(pick(mix, [Point::HcAttnLogits, Point::HcFfnLogits, Point::HcHeadLogits]))
    }

    /// The gates of a stream mix from its logits: with `mix`, pre (weighing the streams into the
    /// sublayer's input) and post (writing its output back); in the head, pre alone.
    fn stream_gates(&mut self, mix: Option<Mix>, logits: &str, out: &str) -> Node {
        let h = self.hyper();
        let (base, scale, rows, scales) = match mix {
            Some(m) => {
                let (_, b, s) = m.roles();
                (b, s, h.logits(), if h.sinkhorn.is_some() { 3 } else { 2 })
            }
            None => (Role::HcHeadBase, Role::HcHeadScale, h.streams, 1),
        };
        let per_layer = mix.is_some();
        let pb = self.param(base, false, vec![rows], Component::Norm, per_layer);
        let b = self.weight(pb, "bₕ", [n(rows), n(1)], None);
        let ps = self.param(scale, false, vec![scales], Component::Norm, per_layer);
        let s = self.weight(ps, "sₕ", [n(scales), n(1)], None);
        let o = self.act(out, self.seq(rows));
        let n_ = h.streams;
        let eps = float(h.eps);
        let (operation, equation) = match mix {
            Some(m) if h.sinkhorn.is_some() => (
                format!(
                    "Gate each stream twice, how much of it the {} reads and how much of the {} output it gets back, and mix the streams among themselves by a doubly stochastic matrix",
                    m.sub().to_lowercase(),
                    m.sub().to_lowercase()
                ),
                format!(
                    "pre{k} = σ(s₀ · {logits}[:{n_}] + bₕ[:{n_}]) + {eps}, post{k} = {} · σ(s₁ · {logits}[{n_}:{}] + bₕ[{n_}:{}]), C{k} = Sinkhorn(softmax(s₂ · {logits}[{}:] + bₕ[{}:]) + {eps}), {} iterations making its rows and columns sum to 1",
                    float(h.magnitude),
                    2 * n_,
                    2 * n_,
                    2 * n_,
                    2 * n_,
                    h.sinkhorn.unwrap_or(0),
                    k = m.mark()
                ),
            ),
            Some(m) => (
                format!(
                    "Gate each stream twice: how much of it the {} reads, and how much of the {} output it gets back",
                    m.sub().to_lowercase(),
                    m.sub().to_lowercase()
                ),
                format!(
                    "pre{k} = σ(s₀ · {logits}[:{n_}] + bₕ[:{n_}]) + {eps}, post{k} = {} · σ(s₁ · {logits}[{n_}:] + bₕ[{n_}:]) + {eps}",
                    float(h.magnitude),
                    k = m.mark()
                ),
            ),
            None => (
                "Gate each stream: how much of it the final norm reads".into(),
                format!("pre = σ(sₕ · {logits} + bₕ) + {eps}"),
            ),
        };
        self.step(Draft {
            title: format!("{} stream gates", mix.map_or("Head", |m| m.sub())),
            op: Op::Activation,
            category: Category::Norm,
            inputs: vec![b, s],
            output: o,
            operation,
            equation,
        })
    }

    /// The streams weighed into one hidden state by their pre gates.
    fn stream_sum(&mut self, mix: Option<Mix>, input: &str, gates: &str, out: &str) -> Node {
        let h = self.hyper();
        let g = self.latest(gates);
        let o = self.act(out, self.seq(self.spec.hidden));
        let pre = match mix {
            Some(m) => format!("pre{}", m.mark()),
            None => "pre".into(),
        };
        let reader = match mix {
            Some(m) => format!("the {}'s input", m.sub().to_lowercase()),
            None => "one hidden state for the final norm".into(),
        };
        self.step(Draft {
            title: format!("{} stream sum", mix.map_or("Head", |m| m.sub())),
            op: Op::Combine,
            category: Category::Norm,
            inputs: vec![g],
            output: o,
            operation: format!("Weigh the {} streams into {reader}", h.streams),
            equation: format!("{out} = Σᵢ {pre}ᵢ · {input}ᵢ, i < {}", h.streams),
        })
        .at(pick(mix, [Point::HcAttnIn, Point::HcFfnIn, Point::HcHead]))
    }

    /// Before a sublayer: its input from the streams `input`, named `out`.
    pub(super) fn hyper_in(&mut self, mix: Mix, input: &str, out: &str) -> Vec<Node> {
        let (logits, gates) = match mix {
            Mix::Attention => ("mₐ", "gₐ"),
            Mix::Mlp => ("mₘ", "gₘ"),
        };
        vec![
            self.stream_logits(Some(mix), input, logits),
            self.stream_gates(Some(mix), logits, gates),
            self.stream_sum(Some(mix), input, gates, out),
        ]
    }

    /// Before the final norm: the streams `input` weighed into one, named `out`.
    pub(super) fn hyper_head(&mut self, input: &str, out: &str) -> Vec<Node> {
        vec![
            self.stream_logits(None, input, "mₕ"),
            self.stream_gates(None, "mₕ", "gₕ"),
            self.stream_sum(None, input, "gₕ", out),
        ]
    }

    /// The equation of a residual add under hyper-connections: every stream gets the output
    /// times its post gate.
    pub(super) fn hyper_add(&self, mix: Mix, out: &str, stream: &str, y: &str) -> String {
        let h = self.hyper();
        if h.sinkhorn.is_some() {
            return format!(
                "{out}ᵢ = Σⱼ C{k}ⱼᵢ · {stream}ⱼ + post{k}ᵢ · {y}, i < {}",
                h.streams,
                k = mix.mark()
            );
        }
        format!(
            "{out}ᵢ = {stream}ᵢ + post{}ᵢ · {y}, i < {}",
            mix.mark(),
            h.streams
        )
    }
}
