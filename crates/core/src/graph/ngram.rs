//! Qwen4-Exp's hashed n-gram per-layer embeddings: in the layers that have them, before the
//! mixer, the token's n-grams are hashed into rows of the layer's own table, and what they hold
//! is gated by each stream and convolved into the streams.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::fmt::float;
use crate::naming::{names, Role};
use crate::spec::NgramPle;

impl Builder<'_> {
    /// The layer's table, saved in shards (`{e}`): a tensor per PLE layer, whose sizes differ.
    fn ngram_tables(&mut self, p: &NgramPle) -> usize {
        let (hf, gguf) = names(self.spec.layout, Role::NgramTable, false);
        let (hf, gguf) = (self.spec.hf_wrap.apply(&hf), gguf);
        let mut first = None;
        for (i, b) in p.layers.iter().enumerate() {
            let (size, count) = p.shards(p.rows(i as u64));
            let last = p.rows(i as u64) - size * (count - 1);
            // Full shards as one template over `{e}`; a shorter last one apart.
            let mut push = |hf: String, gguf: String, rows: u64, shards: u64| {
                self.params.push(Param {
                    hf,
                    gguf,
                    shape: vec![rows, p.head_dim()],
                    component: Component::Embedding,
                    layers: Some(LayerSet::from_fn(self.spec.layers, |l| l == b)),
                    experts: shards,
                    active: shards,
                    routed: false,
                    router: false,
                    flat: false,
                    stack: self.stack,
                    padding_rows: 0,
                });
                self.params.len() - 1
            };
            let full = if last == size { count } else { count - 1 };
            let at = push(hf.clone(), gguf.clone(), size, full);
            if last != size {
                let e = (count - 1).to_string();
                push(hf.replace("{e}", &e), gguf.replace("{e}", &e), last, 1);
            }
            first.get_or_insert(at);
        }
        first.expect("a PLE layer")
    }

    pub(super) fn ngram_ple(&mut self, p: &NgramPle) -> Vec<Node> {
        let all = std::mem::replace(&mut self.layers, p.layers.clone());
        let (d, w, heads, hd) = (self.spec.hidden, p.width, p.heads(), p.head_dim());
        let streams = self.spec.streams();
        let nd = streams * d;
        let eps = float(self.spec.norm.eps);
        let mut steps = Vec::new();

        let buffer = |b: &mut Self, role, len, name: &str| {
            let i = b.param(role, false, vec![len], Component::Embedding, true);
            b.weight(i, name, [n(len), n(1)], None)
        };
        let mult = buffer(self, Role::NgramMultipliers, p.ngram, "μ");
        let sizes = buffer(self, Role::NgramSizes, heads, "Pₕ");
        let offsets = buffer(self, Role::NgramOffsets, heads, "Oₕ");
        let history = self.push("Sᵢ", [n(p.ngram - 1), n(1)], TensorKind::State);
        let rows = self.act("Iₙ", self.seq(heads));
        steps.push(self.step(Draft {
            title: "N-gram rows".into(),
            op: Op::Route,
            category: Category::Embed,
            inputs: vec![mult, sizes, offsets, history],
            output: rows,
            operation: format!(
                "Hash the token with the {} before it into {heads} table rows, {} heads for each of the 2- to {}-grams; an n-gram does not reach back past an end of sequence (id {})",
                p.ngram - 1,
                p.heads_per_ngram,
                p.ngram,
                p.eos
            ),
            equation: format!(
                "Iₙ[h] = (⊕ over s < n of tₜ₋ₛ · μₛ) mod Pₕ + Oₕ, head h of the n-grams, n = 2 … {}; tₜ₋ₛ = EOS past an end of sequence, the last {} ids carried in Sᵢ",
                p.ngram,
                p.ngram - 1
            ),
        }));
        let table = self.ngram_tables(p);
        let tw = self.weight(table, "Eₙ", [n(p.rows(0)), n(hd)], None);
        let e = self.act("Eₙ", self.seq(w));
        steps.push(self.step(Draft {
            title: "N-gram embedding".into(),
            op: Op::Lookup,
            category: Category::Embed,
            inputs: vec![tw],
            output: e,
            operation: format!(
                "Read each head's row, {hd} values, from the layer's own table ({} rows here; each PLE layer's differs) and concatenate them",
                p.rows(0)
            ),
            equation: format!("Eₙ = [Tₙ[Iₙ[0]]; …; Tₙ[Iₙ[{}]]]  ({heads} × {hd} = {w})", heads - 1),
        }).at(Point::NgramEmbed));
        let linear = |b: &mut Self, role, title: &str, wn, out, rows: u64, operation: String| {
            b.linear(Linear {
                role,
                title: title.into(),
                w: wn,
                out,
                input: "Eₙ",
                rows,
                cols: w,
                stored_rows: rows,
                block: None,
                bias: false,
                component: Component::Embedding,
                category: Category::Embed,
                cached: false,
                operation,
            })
        };
        steps.push(linear(
            self,
            Role::NgramValue,
            "N-gram value",
            "Wᵥₙ",
            "Vₙ",
            d,
            format!("Project the n-gram embedding to one {d}-dim value, shared by the streams"),
        ));
        steps.push(linear(
            self,
            Role::NgramKey,
            "N-gram keys",
            "Wₖₙ",
            "Kₙ",
            nd,
            format!("Project the n-gram embedding to one {d}-dim key per stream"),
        ));
        let grouped = |b: &mut Self, role, title: &str, g, input, out, what: &str| {
            let mut node = b.norm_step(title, role, g, input, out, nd, true, None);
            if let Node::Step(s) = &mut node {
                s.category = Category::Embed;
                s.operation = format!("RMS-normalize {what} per stream, {d} features each, then scale all {nd} by (1 + γ)");
                s.equation = format!(
                    "{out}ᵢ = {input}ᵢ / √(mean({input}ᵢ²) + {eps}) ⊙ (1 + {g}ᵢ), i < {streams}"
                );
            }
            node
        };
        steps.push(grouped(
            self,
            Role::NgramNormKey,
            "N-gram key norm",
            "γₖₙ",
            "Kₙ",
            "K̂ₙ",
            "the keys",
        ));
        steps.push(grouped(
            self,
            Role::NgramNormQuery,
            "Stream query norm",
            "γ_qₙ",
            "Xᵦ",
            "Q̂ₙ",
            "the streams",
        ));
        let k = self.latest("K̂ₙ");
        let v = self.latest("Vₙ");
        let u = self.act("Uₙ", self.seq(nd));
        steps.push(self.step(Draft {
            title: "N-gram gates".into(),
            op: Op::Activation,
            category: Category::Embed,
            inputs: vec![k, v],
            output: u,
            operation: "Gate the value once per stream by how well the stream matches that stream's key: a signed square root of their scaled dot product, through σ".into(),
            equation: format!("gᵢ = Q̂ₙᵢ · K̂ₙᵢ / √{d}, Uₙᵢ = σ(sign(gᵢ) √max(|gᵢ|, 10⁻⁶)) · Vₙ, i < {streams}"),
        }).at(Point::NgramGated));
        steps.push(grouped(
            self,
            Role::NgramNormConv,
            "N-gram convolution norm",
            "γ_cₙ",
            "Uₙ",
            "Ûₙ",
            "the gated values",
        ));
        let cp = self.param(
            Role::NgramConv,
            false,
            vec![nd, 1, p.kernel],
            Component::Embedding,
            true,
        );
        let cw = self.weight(cp, "W_cₙ", [n(nd), n(p.kernel)], None);
        let reach = p.reach();
        let window = self.push("Sₙ", [n(nd), n(reach)], TensorKind::State);
        let c = self.act("Cₙ", self.seq(nd));
        steps.push(self.step(Draft {
            title: "N-gram convolution".into(),
            op: Op::Conv { kernel: p.kernel },
            category: Category::Embed,
            inputs: vec![cw, window],
            output: c,
            operation: format!(
                "Mix each of the {nd} channels over {} positions {} apart, on its own, then SiLU",
                p.kernel, p.ngram
            ),
            equation: format!(
                "Cₙₜ = SiLU(Σⱼ W_cₙ[:, j] ⊙ Ûₙₜ₋{}₍{}₋ⱼ₎), j < {}; the last {reach} positions before this call come from Sₙ",
                p.ngram,
                p.kernel - 1,
                p.kernel
            ),
        }).at(Point::NgramConv));
        let normed = self.latest("Ûₙ");
        let kept = self.push("Sₙ", [n(nd), n(reach)], TensorKind::State);
        steps.push(self.step(Draft {
            title: "N-gram convolution window".into(),
            op: Op::Route,
            category: Category::Embed,
            inputs: vec![normed],
            output: kept,
            operation: format!(
                "Keep each channel's last {reach} inputs for the tokens that follow"
            ),
            equation: format!("Sₙ = Ûₙ[t−{reach}…t] (zeros before the first token)"),
        }));
        let ids = self.push("Sᵢ", [n(p.ngram - 1), n(1)], TensorKind::State);
        steps.push(self.step(Draft {
            title: "N-gram history".into(),
            op: Op::Route,
            category: Category::Embed,
            inputs: vec![],
            output: ids,
            operation: format!(
                "Keep the last {} ids for the n-grams of the tokens that follow",
                p.ngram - 1
            ),
            equation: format!(
                "Sᵢ = the last {} ids (the end of sequence, {}, before the first token)",
                p.ngram - 1,
                p.eos
            ),
        }));
        let x = self.act("Xᵦ", self.seq(nd));
        let (u, c) = (self.latest("Uₙ"), self.latest("Cₙ"));
        steps.push(self.step(Draft {
            title: "N-gram residual".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![u, c],
            output: x,
            operation: "Add the gated values and their convolution to every stream, before the mixer reads them".into(),
            equation: format!("Xᵦᵢ = Xᵦᵢ + Uₙᵢ + Cₙᵢ, i < {streams}"),
        }).at(Point::NgramResid));
        let scope = self.scope(
            ScopeKind::PerLayer,
            &format!("N-gram input (layers {})", p.layers),
            "N-gram input end",
            1,
            steps,
        );
        self.layers = all;
        let mut scope = scope;
        scope.layers = Some(p.layers.clone());
        vec![Node::Scope(scope)]
    }
}
