//! Gated residual streams (Qwen4-Exp): the residual stream as n streams. Before each sublayer
//! the streams are RMS-normed, a low-rank gate weighs their features and the sublayer reads the
//! gated mean; its output joins each stream by an injection weight of that stream's own. A last
//! mix without injection makes the head's input: there is no final norm.

use super::build::{n, Builder, Draft};
use super::hyper::{pick, Mix};
use super::*;
use crate::fmt::float;
use crate::naming::Role;
use crate::spec::GatedStreams;

/// The roles of one mix: norm, down, up, and the injection (none in the head's).
fn roles(mix: Option<Mix>) -> (Role, Role, Role, Option<Role>) {
    match mix {
        Some(Mix::Attention) => (
            Role::GsAttnNorm,
            Role::GsAttnDown,
            Role::GsAttnUp,
            Some(Role::GsAttnInject),
        ),
        Some(Mix::Mlp) => (
            Role::GsFfnNorm,
            Role::GsFfnDown,
            Role::GsFfnUp,
            Some(Role::GsFfnInject),
        ),
        None => (Role::GsHeadNorm, Role::GsHeadDown, Role::GsHeadUp, None),
    }
}

impl Builder<'_> {
    fn gated(&self) -> GatedStreams {
        self.spec
            .gated_streams()
            .expect("gated-stream steps are built for a Spec that has them")
    }

    /// Before a sublayer (`mix`) or the head (`None`): the streams `input` normed, gated and
    /// averaged into `out`; before a sublayer also the injection weights `gₐ` or `gₘ`.
    pub(super) fn gated_in(&mut self, mix: Option<Mix>, input: &str, out: &str) -> Vec<Node> {
        let g = self.gated();
        let (d, width) = (self.spec.hidden, self.stream_width());
        let (norm, down, up, inject) = roles(mix);
        let per_layer = mix.is_some();
        let what = mix.map_or("Head", |m| m.sub());
        let mark = mix.map_or("", |m| m.mark());
        let normed = format!("X̂{mark}");
        let gates = format!("a{mark}");
        let eps = float(self.spec.norm.eps);
        let mut steps = Vec::new();

        let p = self.param(norm, false, vec![width], Component::Norm, per_layer);
        let w = self.weight(p, "γₛ", [n(width), n(1)], None);
        let o = self.act(&normed, self.seq(width));
        steps.push(self.step(Draft {
            title: format!("{what} stream norm"),
            op: Op::Norm,
            category: Category::Norm,
            inputs: vec![w],
            output: o,
            operation: format!(
                "RMS-normalize each of the {} streams on its own, then scale all {width} features by (1 + γₛ); no other norm comes before the {}",
                g.streams,
                mix.map_or("head".into(), |m| m.sub().to_lowercase())
            ),
            equation: format!(
                "{normed}ᵢ = {input}ᵢ / √(mean({input}ᵢ²) + {eps}) ⊙ (1 + γₛᵢ), i < {}",
                g.streams
            ),
        }).at(pick(mix, [Point::GsAttnNorm, Point::GsFfnNorm, Point::GsHeadNorm])));

        let pd = self.param(down, false, vec![g.rank, width], Component::Norm, per_layer);
        let wd = self.weight(pd, "W↓", [n(g.rank), n(width)], None);
        let pu = self.param(up, false, vec![width, g.rank], Component::Norm, per_layer);
        let wu = self.weight(pu, "W↑", [n(width), n(g.rank)], None);
        let o = self.act(&gates, self.seq(width));
        steps.push(self.step(Draft {
            title: format!("{what} input gates"),
            op: Op::MatMul,
            category: Category::Norm,
            inputs: vec![wd, wu],
            output: o,
            operation: format!(
                "Gate every feature of every stream through a rank-{} bottleneck read from all the streams",
                g.rank
            ),
            equation: format!(
                "{gates} = σ(W↑ · SiLU(W↓ · {normed} / {}))",
                g.streams
            ),
        }).at(pick(mix, [Point::GsAttnGates, Point::GsFfnGates, Point::GsHeadGates])));

        let o = self.act(out, self.seq(d));
        let gi = self.latest(&gates);
        steps.push(
            self.step(Draft {
                title: format!("{what} stream mean"),
                op: Op::Combine,
                category: Category::Norm,
                inputs: vec![gi],
                output: o,
                operation: match mix {
                    Some(m) => format!(
                        "Average the gated streams into the {}'s input",
                        m.sub().to_lowercase()
                    ),
                    None => "Average the gated streams into the head's input".into(),
                },
                equation: format!(
                    "{out} = (1/{n_}) Σᵢ {gates}ᵢ ⊙ {normed}ᵢ, i < {n_}",
                    n_ = g.streams
                ),
            })
            .at(pick(mix, [Point::HcAttnIn, Point::HcFfnIn, Point::HcHead])),
        );

        if let (Some(role), Some(m)) = (inject, mix) {
            let pi = self.param(role, false, vec![g.streams, width], Component::Norm, true);
            let wi = self.weight(pi, "Wᵢₙⱼ", [n(g.streams), n(width)], None);
            let name = format!("g{}", m.mark());
            let o = self.act(&name, self.seq(g.streams));
            steps.push(
                self.step(Draft {
                    title: format!("{} injection weights", m.sub()),
                    op: Op::MatMul,
                    category: Category::Norm,
                    inputs: vec![wi],
                    output: o,
                    operation: format!(
                        "Weigh how much of the {} output each stream gets back, between 0 and 2",
                        m.sub().to_lowercase()
                    ),
                    equation: format!("{name} = 2σ(Wᵢₙⱼ · {normed} / {})", g.streams),
                })
                .at(match m {
                    Mix::Attention => Point::GsAttnInject,
                    Mix::Mlp => Point::GsFfnInject,
                }),
            );
        }
        steps
    }

    /// The equation of a residual add under gated streams: every stream (as it was, not
    /// normed) gets the output times its injection weight.
    pub(super) fn gated_streams_add(&self, mix: Mix, out: &str, stream: &str, y: &str) -> String {
        format!(
            "{out}ᵢ = {stream}ᵢ + g{}ᵢ · {y}, i < {}",
            mix.mark(),
            self.gated().streams
        )
    }
}
