//! Checkpoint tensor names per layout, in Hugging Face and GGUF naming: each layout's table
//! (`tables`) over a parent's, looked up by role.

mod role;
#[rustfmt::skip]
mod tables;

use crate::spec::Layout;
pub use role::Role;
use tables::{At, End, Table};

/// `(hf, gguf)` names of `role`'s weight (`bias = false`) or bias as `layout` stores them, or
/// `None` where no table of the layout's names one.
pub fn lookup(layout: Layout, role: Role, bias: bool) -> Option<(String, String)> {
    find(tables::of(layout), layout, role, bias)
}

fn find(t: &Table, layout: Layout, role: Role, bias: bool) -> Option<(String, String)> {
    let Some(row) = t.rows.iter().find(|r| r.role == role) else {
        let (mut hf, gguf) = find(t.parent?, layout, role, bias)?;
        for (from, to) in t.rename {
            hf = hf.replacen(from, to, 1);
        }
        return Some((hf, gguf));
    };
    let hf = match row.hf {
        At::Name(name) => name.to_string(),
        At::Beside(of, name) => {
            let (module, _) = lookup(layout, of, false)?;
            let module = module.strip_suffix(".weight").unwrap_or(&module);
            let parent = module.rsplit_once('.').map_or("", |(p, _)| p);
            format!("{parent}.{name}")
        }
    };
    Some((
        end(&hf, row.ends[0], bias),
        end(row.gguf, row.ends[1], bias),
    ))
}

fn end(name: &str, end: End, bias: bool) -> String {
    let what = if bias { "bias" } else { "weight" };
    match end {
        End::Dot => format!("{name}.{what}"),
        End::Bare => name.to_string(),
        End::Under => format!("{name}_{what}"),
        End::BiasOnly if bias => format!("{name}_bias"),
        End::BiasOnly => name.to_string(),
    }
}

/// `lookup`'s names, for a role the caller knows `layout` names: one of a graph that was built
/// (`graph::build` refuses a graph with a tensor no table names). Otherwise a name that says
/// what is missing, never a panic.
pub fn names(layout: Layout, role: Role, bias: bool) -> (String, String) {
    lookup(layout, role, bias).unwrap_or_else(|| {
        let missing = format!("unnamed.{layout:?}.{role:?}");
        (missing.clone(), missing)
    })
}

/// Whether `layout` stores a per-head QK norm (`QkNorm::HeadWeights`) as one tensor per head
/// (StableLM's `q_layernorm.norms.{e}`) rather than one [heads, head_dim] tensor.
pub fn qk_norm_per_head(layout: Layout) -> bool {
    names(layout, Role::QNorm, false).0.contains("{e}")
}

/// Whether `layout` stores `role`'s linear weight [in, out] rather than PyTorch's [out, in]:
/// every one of GPT-2's Conv1D layers; Ergo's router and shared expert.
pub fn stored_in_out(layout: Layout, role: Role) -> bool {
    match layout {
        Layout::Ergo => matches!(role, Role::Router | Role::SharedUp | Role::SharedDown),
        other => other.stores_in_out(),
    }
}

/// The name transformers loads a stored tensor as, where a layout's released checkpoints name it
/// otherwise than transformers writes it (its conversion mapping): Dory's store each layer as two
/// blocks, `layers.{2b}.mixer` (the attention) and `layers.{2b+1}.mixer` (the MLP), with their
/// residual rates `layers.{2b}.attn_alpha` and `layers.{2b+1}.mlp_alpha`.
pub fn canonical(layout: Layout, stored: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    if layout != Layout::Dory {
        return Cow::Borrowed(stored);
    }
    let Some(rest) = stored.strip_prefix("backbone.layers.") else {
        return Cow::Borrowed(stored);
    };
    let Some((n, tail)) = rest.split_once('.') else {
        return Cow::Borrowed(stored);
    };
    let Ok(n) = n.parse::<u64>() else {
        return Cow::Borrowed(stored);
    };
    let (b, attention) = (n / 2, n % 2 == 0);
    let tail = match (tail.strip_prefix("mixer."), tail, attention) {
        (Some(t), _, true) => format!("self_attn.{t}"),
        (Some(t), _, false) => format!("mlp.{t}"),
        (None, "attn_alpha", true) => "lambda_1".into(),
        (None, "mlp_alpha", false) => "lambda_2".into(),
        _ => return Cow::Borrowed(stored),
    };
    Cow::Owned(format!("backbone.layers.{b}.{tail}"))
}

/// Fill in the layer and expert index of a template; `{p}` and `{s}` are layer b's checkpoint
/// layer and its sublayer there, where a checkpoint layer holds two (LongCat-Flash).
pub fn instantiate(template: &str, b: Option<u64>, e: Option<u64>) -> String {
    let mut s = template.to_string();
    if let Some(b) = b {
        s = s.replace("{b}", &b.to_string());
        s = s.replace("{p}", &(b / 2).to_string());
        s = s.replace("{b-1}", &b.saturating_sub(1).to_string());
        s = s.replace("{s}", &(b % 2).to_string());
    }
    if let Some(e) = e {
        s = s.replace("{e}", &e.to_string());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tensor of every model of the sweep is named by its layout's tables: `graph::build`
    /// refuses a graph holding one that is not, so each builds, and no name is the stand-in
    /// `names` gives for a role no table names.
    #[test]
    fn every_tensor_of_the_sweep_is_named_by_its_layouts_tables() {
        let models = crate::corpus::models();
        assert!(models.len() > 400, "{}", models.len());
        for m in models {
            let g = crate::graph::build(&m.spec).unwrap_or_else(|e| panic!("{}: {e}", m.name));
            for p in &g.params {
                assert!(!p.hf.contains("unnamed."), "{}: {}", m.name, p.hf);
            }
        }
    }

    /// A model with a tensor its layout's tables do not name is refused, naming the role; not
    /// named at random.
    #[test]
    fn a_tensor_no_table_names_is_refused_by_role() {
        let mut spec = crate::corpus::models()
            .into_iter()
            .find(|m| m.spec.attn.o_bias_last)
            .expect("GPT-NeoX-Japanese's last-layer output bias is in the sweep")
            .spec;
        spec.layout = Layout::Llama;
        let e = crate::graph::build(&spec).unwrap_err();
        assert!(e.message.contains("DenseBias"), "{e}");
    }

    /// A table names each role once: a second row for a role would never be read.
    #[test]
    fn no_table_names_a_role_twice() {
        let mut layouts: Vec<Layout> = crate::corpus::models()
            .iter()
            .map(|m| m.spec.layout)
            .collect();
        layouts.dedup();
        for layout in layouts {
            let mut t = Some(tables::of(layout));
            while let Some(table) = t {
                for (i, r) in table.rows.iter().enumerate() {
                    let again = table.rows[i + 1..].iter().any(|o| o.role == r.role);
                    assert!(!again, "{layout:?}: {:?} named twice in one table", r.role);
                }
                t = table.parent;
            }
        }
    }

    /// The ends a row can give a stored name.
    #[test]
    fn names_end_as_their_rows_say() {
        let both = |role| {
            (
                names(Layout::Llama, role, false),
                names(Layout::Llama, role, true),
            )
        };
        assert_eq!(
            both(Role::Q),
            (
                (
                    "model.layers.{b}.self_attn.q_proj.weight".into(),
                    "blk.{b}.attn_q.weight".into()
                ),
                (
                    "model.layers.{b}.self_attn.q_proj.bias".into(),
                    "blk.{b}.attn_q.bias".into()
                )
            )
        );
        let lru = names(Layout::RecurrentGemma, Role::LruInGate, true).0;
        assert_eq!(
            lru,
            "model.layers.{b}.temporal_block.rg_lru.input_gate_bias"
        );
        let stacked = |bias| names(Layout::GptOss, Role::ExpertDown, bias).0;
        assert_eq!(stacked(false), "model.layers.{b}.mlp.experts.down_proj");
        assert_eq!(stacked(true), "model.layers.{b}.mlp.experts.down_proj_bias");
        // Beside the mixer's output projection, wherever a layout puts it.
        assert_eq!(
            names(Layout::Mamba2, Role::SsmD, false).0,
            "backbone.layers.{b}.mixer.D"
        );
        // A parent's names renamed: Dory's under `backbone.`.
        assert_eq!(
            names(Layout::Dory, Role::NgptRateAttn, false).0,
            "backbone.layers.{b}.lambda_1"
        );
        assert_eq!(lookup(Layout::Llama, Role::V4Kv, false), None);
    }

    #[test]
    fn canonical_reads_dorys_two_blocks_as_one_layer_and_leaves_the_rest() {
        let d = |s| canonical(Layout::Dory, s).into_owned();
        assert_eq!(
            d("backbone.layers.6.mixer.q_proj.weight"),
            "backbone.layers.3.self_attn.q_proj.weight"
        );
        assert_eq!(
            d("backbone.layers.7.mixer.up_proj.weight"),
            "backbone.layers.3.mlp.up_proj.weight"
        );
        assert_eq!(
            d("backbone.layers.6.attn_alpha"),
            "backbone.layers.3.lambda_1"
        );
        assert_eq!(
            d("backbone.layers.7.mlp_alpha"),
            "backbone.layers.3.lambda_2"
        );
        // Names transformers writes, and pairings the layout does not have, stay as they are.
        for kept in [
            "backbone.layers.3.self_attn.q_proj.weight",
            "backbone.layers.7.attn_alpha",
            "backbone.embeddings.weight",
            "lm_head.weight",
        ] {
            assert_eq!(d(kept), kept);
        }
        let other = canonical(Layout::Llama, "backbone.layers.6.mixer.q_proj.weight");
        assert!(matches!(other, std::borrow::Cow::Borrowed(_)));
    }
}
