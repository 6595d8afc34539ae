//! BLT's byte-level stacks around its latent transformer (`ByteLatent`): the patcher, the local
//! encoder with its hashed n-gram embeddings and its patch cross-attention, and the local
//! decoder with its byte cross-attention. Each stack is built by the same block builder as any
//! model, from its own Spec; its scope (`ScopeKind::Stack`) tells every reader which Spec its
//! steps run under. The latent transformer's block, built from the model's Spec, sits between
//! the encoder and the decoder and runs once per patch.

use super::build::{n, Builder, Draft, Linear};
use super::*;
use crate::naming::Role;
use crate::spec::{ByteLatent, Patching, Stack};

impl<'s> Builder<'s> {
    /// `f` run with `spec` (one of the stacks) as the Spec being built.
    fn within<T>(&mut self, spec: &'s Spec, stack: Stack, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = (
            self.spec,
            std::mem::replace(&mut self.layers, LayerSet::all(spec.layers)),
            std::mem::replace(&mut self.attn, spec.attn.clone()),
            self.attn_in,
            self.stack,
        );
        self.spec = spec;
        self.attn_in = spec.hidden;
        self.stack = Some(stack);
        let out = f(self);
        (self.spec, self.layers, self.attn, self.attn_in, self.stack) = saved;
        out
    }

    /// The model's scopes, in the order they run.
    pub(super) fn byte_latent(&mut self, bl: &'s ByteLatent) -> Vec<Node> {
        let mut nodes = Vec::new();
        if let Some(p) = bl.patcher.as_ref() {
            nodes.push(Node::Scope(self.patcher(p, bl.patching)));
        }
        nodes.push(Node::Scope(self.local_encoder(bl)));
        let spec = self.spec;
        let wide = bl.encoder.hidden * bl.cross_k;
        // Patches wider than the latent width are projected to it.
        if wide != spec.hidden {
            let project = self.linear(Linear::whole(
                Role::TokenProj,
                "Patch projection",
                ["W_p", "X", "X"],
                spec.hidden,
                wide,
                Category::Embed,
                format!(
                    "Project each patch from the encoder's {wide} features to the latent width, {}",
                    spec.hidden
                ),
            ));
            nodes.push(Node::Scope(self.scope(
                ScopeKind::Embedding,
                "Patch input",
                "Patch input end",
                1,
                vec![project],
            )));
        }
        nodes.push(Node::Scope(self.block()));
        nodes.push(Node::Scope(self.local_decoder(bl)));
        nodes
    }

    /// The entropy model: a small byte-level language model whose next-byte entropy cuts the
    /// bytes into patches.
    fn patcher(&mut self, p: &'s Spec, patching: Patching) -> Scope {
        let mut children = self.within(p, Stack::Patcher, |b| {
            vec![
                Node::Scope(b.embedding()),
                Node::Scope(b.block()),
                Node::Scope(b.final_scope()),
            ]
        });
        let v = p.out_vocab();
        let h = self.act("Hₑ", self.seq(1));
        children.push(self.step(Draft {
            title: "Next-byte entropy".into(),
            op: Op::Softmax,
            category: Category::Embed,
            inputs: vec![],
            output: h,
            operation: format!(
                "The entropy of each position's predicted distribution over its {v} byte tokens, in nats"
            ),
            equation: "Hₑ = −Σᵥ pᵥ ln pᵥ,  p = softmax(Logits)".into(),
        }));
        let s = self.act("S", self.seq(1));
        let (rule, equation) = match patching {
            Patching::Entropy(t) => (
                format!(
                    "A patch starts at bytes 0 and 1 and after every later byte whose entropy exceeds {}: where the next byte is hard to predict",
                    crate::fmt::float(t)
                ),
                "starts = {0, 1} ∪ {t + 1 : t ≥ 1, Hₑ[t] > θ}",
            ),
            Patching::Bytes { .. } => (
                "Without a patch size the patcher's entropies go unused: every byte is a patch of its own".into(),
                "starts = {0, 1, 2, …}",
            ),
        };
        children.push(self.step(Draft {
            title: "Patch boundaries".into(),
            op: Op::Route,
            category: Category::Embed,
            inputs: vec![],
            output: s,
            operation: rule,
            equation: equation.into(),
        }));
        self.stack_scope(
            Stack::Patcher,
            "Patcher: entropy model (run once per pass)",
            children,
        )
    }

    fn stack_scope(&self, stack: Stack, title: &str, children: Vec<Node>) -> Scope {
        self.scope(
            ScopeKind::Stack(stack),
            title,
            &format!("{} end", stack.title()),
            1,
            children,
        )
    }

    /// Bytes → byte states and patch embeddings.
    fn local_encoder(&mut self, bl: &'s ByteLatent) -> Scope {
        let e = &bl.encoder;
        let k = bl.cross_k;
        self.within(e, Stack::Encoder, |b| {
            let mut embed = b.embedding();
            embed.children.extend(b.hash_embeddings(bl));
            let block = b.block();
            let mut children = vec![Node::Scope(embed), Node::Scope(block)];
            let d = e.hidden;
            let pooled = b.act("P₀", b.seq(d));
            children.push(b.step(Draft {
                title: "Max pooling per patch".into(),
                op: Op::Route,
                category: Category::Embed,
                inputs: vec![],
                output: pooled,
                operation: "Each patch starts as the elementwise maximum of its bytes' states (zeros for an empty patch)".into(),
                equation: "P₀[p] = maxₜ∈ₚ Xₗ[t]".into(),
            }));
            children.push(b.linear(Linear::whole(
                Role::PatchProj,
                "Patch query projection",
                ["W_pe", "P", "P₀"],
                d * k,
                d,
                Category::Embed,
                format!("Widen each patch to {k} queries of {d} features"),
            )));
            let cross = b.cross(bl.encoder_cross(), true, k);
            children.push(Node::Scope(cross));
            let x = b.act("X", b.seq(d * k));
            children.push(b.step(Draft {
                title: "Patch embeddings".into(),
                op: Op::Route,
                category: Category::Embed,
                inputs: vec![],
                output: x,
                operation: format!(
                    "Each patch's {k} queries side by side, {} features: the latent transformer's input, one position per patch",
                    d * k
                ),
                equation: "X = reshape(P, [patches, k · hidden])".into(),
            }));
            b.stack_scope(Stack::Encoder, "Local encoder: bytes to patches", children)
        })
    }

    /// Hashed n-gram embeddings added to each byte's own.
    fn hash_embeddings(&mut self, bl: &ByteLatent) -> Vec<Node> {
        let d = self.spec.hidden;
        let rows = bl.hash.rows();
        self.params.push(Param {
            hf: "model.encoder_hash_tok_embedding.weight".into(),
            gguf: "enc_hash_embd.weight".into(),
            shape: vec![rows, d],
            component: Component::Embedding,
            layers: None,
            experts: 1,
            active: 1,
            flat: false,
            routed: false,
            router: false,
            stack: self.stack,
            padding_rows: 0,
        });
        let p = self.params.len() - 1;
        let table = self.push(
            "Eₕ",
            [n(d), n(rows)],
            TensorKind::Weight {
                param: p,
                slice: None,
                note: Some("drawn transposed: one column per hashed n-gram".into()),
            },
        );
        let x = self.act("X", self.seq(d));
        let sizes: Vec<String> = bl.hash.sizes.iter().map(u64::to_string).collect();
        let count = bl.hash.functions * bl.hash.sizes.len() as u64;
        vec![self.step(Draft {
            title: "Hashed n-gram embeddings".into(),
            op: Op::Lookup,
            category: Category::Embed,
            inputs: vec![table],
            output: x,
            operation: format!(
                "Add {count} more rows to each byte's embedding: for each of {} hash function{} and each n in {}, the n bytes ending here (zeros before the first) hash to one of {} rows of the table's own block",
                bl.hash.functions,
                if bl.hash.functions == 1 { "" } else { "s" },
                sizes.join(", "),
                bl.hash.vocab
            ),
            equation: format!(
                "X = X + Σ_b Eₕ[b·{0} + (Σⱼ byteⱼ · p_fʲ mod {0})], one block b per hash function f (prime p_f) and size n, j over the n bytes",
                bl.hash.vocab
            ),
        })]
    }

    /// A cross-attention between bytes and patches, `count` of them (one per layer, or one):
    /// patches as queries over their own bytes (`encoder`), or bytes over their patch's keys.
    fn cross(&mut self, count: u64, encoder: bool, k: u64) -> Scope {
        let spec = self.spec;
        let a = &spec.attn;
        let (d, h, kv, hd) = (spec.hidden, a.heads, a.kv_heads, a.head_dim);
        self.layers = LayerSet::all(count);
        let (q_in, kv_in, what) = if encoder {
            (
                "P",
                "Xₗ",
                "Each patch's queries attend to the states of the patch's own bytes",
            )
        } else {
            ("Xᵦ", "Pₗ", "Each byte attends to the keys of the patch before its own (the first bytes, of the first patch)")
        };
        // Every projection reads d features: BLT's heads split the width evenly, h · hd = d.
        let lin = |role, title, names, rows, operation| {
            Linear::whole(role, title, names, rows, d, Category::Attention, operation)
        };
        // The keys' side: the bytes' states (encoder) or the patches' k keys each (decoder).
        let keys = vec![
            self.norm_step(
                "Key RMSNorm",
                Role::CrossKNorm,
                "γk",
                kv_in,
                "Kᵢ",
                d,
                true,
                None,
            ),
            self.linear(lin(
                Role::CrossK,
                "Cross-attention K projection",
                ["W_k", "K", "Kᵢ"],
                kv * hd,
                format!("{kv} key heads of {hd}"),
            )),
            self.linear(lin(
                Role::CrossV,
                "Cross-attention V projection",
                ["W_v", "V", "Kᵢ"],
                kv * hd,
                format!("{kv} value heads of {hd}"),
            )),
        ];
        // The queries' side: the patches' k queries each (encoder) or the bytes (decoder).
        let mut queries = vec![
            self.norm_step(
                "Query RMSNorm",
                Role::CrossQNorm,
                "γq",
                q_in,
                "Qᵢ",
                d,
                true,
                None,
            ),
            self.linear(lin(
                Role::CrossQ,
                "Cross-attention Q projection",
                ["W_q", "Q", "Qᵢ"],
                h * hd,
                format!("{h} query heads of {hd}"),
            )),
        ];
        let att = self.act("H", self.seq(h * hd));
        queries.push(self.step(Draft {
            title: "Patch cross-attention".into(),
            op: Op::Route,
            category: Category::Attention,
            inputs: vec![],
            output: att,
            operation: format!("{what}, with no causal order inside a patch"),
            equation: format!("H = softmax(Q Kᵀ / √{hd} + M) V, M = 0 where the byte and the patch match, else −∞"),
        }));
        queries.push(self.linear(lin(
            Role::CrossO,
            "Cross-attention output projection",
            ["W_o", "Y", "H"],
            d,
            "Project the heads back".into(),
        )));
        let out = self.act(q_in, self.seq(d));
        queries.push(self.step(Draft {
            title: "Cross-attention residual".into(),
            op: Op::Add,
            category: Category::Norm,
            inputs: vec![],
            output: out,
            operation: "The attention adds its input to its output, and the caller adds the input once more".into(),
            equation: format!("{q_in} = 2·{q_in} + Y"),
        }));
        // The side that has k rows per patch runs k times per patch.
        let per_patch = |b: &Self, what: &str, nodes| {
            Node::Scope(b.scope(
                ScopeKind::Group,
                &format!("{what} j of the patch"),
                &format!("{what} end"),
                k,
                nodes,
            ))
        };
        let nodes: Vec<Node> = if encoder {
            keys.into_iter()
                .chain([per_patch(self, "Query", queries)])
                .collect()
        } else {
            [per_patch(self, "Key", keys)]
                .into_iter()
                .chain(queries)
                .collect()
        };
        self.layers = LayerSet::all(spec.layers);
        let title = match (encoder, count) {
            (true, 1) => "Patch cross-attention (after the last layer)".to_string(),
            (true, _) => format!("Patch cross-attention (after each of {count} layers; the last one's result is kept)"),
            (false, 1) => "Byte cross-attention (before the first layer)".to_string(),
            (false, _) => format!("Byte cross-attention (before each of {count} layers' self-attention)"),
        };
        let mut s = self.scope(
            ScopeKind::PatchCross,
            &title,
            "Cross-attention end",
            count,
            nodes,
        );
        s.layers = None;
        s
    }

    /// Latent output → byte states → logits.
    fn local_decoder(&mut self, bl: &'s ByteLatent) -> Scope {
        let dec = &bl.decoder;
        let g = self.spec.hidden;
        let k = bl.cross_k;
        self.within(dec, Stack::Decoder, |b| {
            let d = dec.hidden;
            let mut children = vec![b.linear(Linear::whole(
                Role::PatchProj,
                "Patch key projection",
                ["W_pd", "Pₗ", "Xₗ"],
                d * k,
                g,
                Category::Embed,
                format!("Project each patch's latent output to {k} keys of {d} features"),
            ))];
            let x = b.act("Xᵦ", b.seq(d));
            children.push(b.step(Draft {
                title: "Decoder input".into(),
                op: Op::Route,
                category: Category::Norm,
                inputs: vec![],
                output: x,
                operation: "The decoder starts from the encoder's byte states".into(),
                equation: "Xᵦ = encoder Xₗ".into(),
            }));
            children.push(Node::Scope(b.cross(bl.decoder_cross(), false, k)));
            children.push(Node::Scope(b.block()));
            children.push(Node::Scope(b.final_scope()));
            b.stack_scope(Stack::Decoder, "Local decoder: patches to bytes", children)
        })
    }
}
