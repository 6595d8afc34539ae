//! The terminal walkthrough: snapshots of what a person sees, and fitting any width.

use anatomy_core::{catalog, graph, render, source};
use unicode_width::UnicodeWidthStr;

fn show(model: &str, width: usize, step: Option<usize>) -> String {
    let loaded = source::load(model, false).unwrap();
    let g = graph::build(&loaded.spec).unwrap();
    render::render(
        &g,
        &render::Options {
            width,
            color: false,
            step,
        },
    )
    .unwrap()
}

#[test]
fn llama_3_2_3b_default() {
    insta::assert_snapshot!(show("llama-3.2-3b", 100, None));
}

#[test]
fn llama_3_2_3b_step_2_callout() {
    insta::assert_snapshot!(show("llama-3.2-3b", 100, Some(2)));
}

#[test]
fn llama_3_2_3b_step_4_callout_names_checkpoint_rows() {
    let out = show("llama-3.2-3b", 160, Some(4));
    assert!(
        out.contains("model.layers.{b}.self_attn.k_proj.weight[128*i:128*(i+1), :]"),
        "{out}"
    );
    assert!(
        out.contains("GGUF blk.{b}.attn_k.weight[128*i:128*(i+1), :]"),
        "{out}"
    );
}

/// Seven query heads per K/V head, and biases on q, k and v.
#[test]
fn qwen2_5_group_ratio_and_biases() {
    insta::assert_snapshot!(show("qwen2.5-0.5b", 110, None));
}

/// Per-head RMSNorm on Q and K.
#[test]
fn qwen3_qk_norm() {
    insta::assert_snapshot!(show("qwen3-0.6b", 110, Some(5)));
}

/// Router, top-k selection, experts ×128 with 8 active, and their weighted sum.
#[test]
fn qwen3_moe_router_and_experts() {
    insta::assert_snapshot!(show("qwen3-30b-a3b", 110, Some(19)));
}

/// RoPE runs in three layers of four: the step names the layers it skips.
#[test]
fn smollm3_no_rope_layers() {
    insta::assert_snapshot!(show("smollm3-3b", 120, Some(5)));
}

/// LayerNorm with bias, learned positions, q/k/v as column blocks of one Conv1D, plain GELU MLP.
#[test]
fn gpt2_fused_conv1d_and_learned_positions() {
    insta::assert_snapshot!(show("gpt-2", 120, Some(5)));
}

/// Q, K and V as row blocks of `qkv_proj`; gate and up as halves of `gate_up_proj`.
#[test]
fn phi3_fused_weights() {
    insta::assert_snapshot!(show("phi-3-mini-4k", 120, Some(7)));
}

/// Norms before and after both sublayers, (1 + w), embedding scale, softcaps, local/global layers.
#[test]
fn gemma2_sandwich_norms_and_softcaps() {
    insta::assert_snapshot!(show("gemma-2-9b", 120, Some(10)));
}

/// Norms after each sublayer only; QK-norm over all heads together.
#[test]
fn olmo2_post_norms_and_full_qk_norm() {
    insta::assert_snapshot!(show("olmo-2-1124-7b", 120, Some(4)));
}

/// A multimodal wrapper: the language model is drawn, then each tower with its steps and the
/// tensors each stores (their names and shapes tested exact in `exactness`).
#[test]
fn gemma3_wrapper_names_what_is_towers() {
    let out = show("gemma-3-27b", 120, None);
    let first = out.lines().nth(1).unwrap();
    assert!(
        first.starts_with("towers: vision tower (vision_tower.*, ")
            && first.contains(" parameters), multimodal projector (multi_modal_projector.*, ")
            && !first.contains("not counted"),
        "{out}"
    );
    // After the language model's last frame: every tower, each step, each tensor, in order.
    let after = out.split("┘\n").last().unwrap();
    let spec = source::load("gemma-3-27b", false).unwrap().spec;
    let mut want = Vec::new();
    for t in &spec.towers {
        let params = anatomy_core::fmt::grouped(t.params().unwrap() as u128);
        want.push(format!("{} ({}*) · {params} params", t.what, t.prefix));
        for b in t.steps() {
            want.push(format!("  {}", b.label()));
            for (name, shape) in &b.tensors {
                want.push(format!("    {}{name} {shape:?}", t.prefix));
            }
        }
    }
    assert!(want.len() > 20, "{want:?}");
    let mut rest = after;
    for line in &want {
        let at = rest
            .find(line.as_str())
            .unwrap_or_else(|| panic!("{line:?} in order in {after}"));
        rest = &rest[at + line.len()..];
    }
    assert!(
        out.contains(
            "layers differ · attention: full in 5, 11, 17 … 59 (every 6th) · sliding 1024 in 0–4"
        ),
        "{out}"
    );
}

/// Latent Q and KV projections, the shared rotary key, dense and MoE layer runs, shared expert,
/// sigmoid routing with correction bias, the auxiliary multi-token-prediction module.
#[test]
fn deepseek_v3_latent_attention_and_variants() {
    insta::assert_snapshot!(show("deepseek-v3", 130, Some(6)));
}

/// The learned sink logit of each head joins the softmax; biased router and experts.
#[test]
fn gpt_oss_sinks() {
    insta::assert_snapshot!(show("gpt-oss-20b", 130, Some(10)));
}

/// Layers with an attention of their own: the sliding-window layers' frame, twice the K/V heads
/// and a sink per head, beside the full layers'.
#[test]
fn mimo_v2_flash_layer_variants() {
    insta::assert_snapshot!(show("mimo-v2-flash", 130, Some(20)));
}

/// Chunked RoPE layers with weightless QK-norm, full NoPE layers, a shared expert.
#[test]
fn llama4_chunked_and_nope_layers() {
    insta::assert_snapshot!(show("llama-4-scout-17b-16e", 130, Some(6)));
}

/// Mixtral keeps one tensor per expert under `block_sparse_moe.experts.{e}.w1`.
#[test]
fn mixtral_expert_names() {
    let out = show("mixtral-8x7b-v0.1", 220, Some(18));
    assert!(out.contains("[18/25] GATE PROJECTION"), "{out}");
    assert!(
        out.contains("model.layers.{b}.block_sparse_moe.experts.{e}.w1.weight"),
        "{out}"
    );
    assert!(out.contains("GGUF blk.{b}.ffn_gate_exps.weight"), "{out}");
    assert!(out.contains("Expert e ×8 (2 active per token)"), "{out}");
}

#[test]
fn glm45_group_routing() {
    let out = show("glm-4.5-air", 220, Some(21));
    assert!(out.contains("[21/40] TOP-8 EXPERT SELECTION"), "{out}");
    assert!(out.contains("σ(Lᵣ) + bᵣ"), "{out}");
    assert!(
        out.contains("model.layers.{b}.mlp.gate.e_score_correction_bias"),
        "{out}"
    );
    let out = show("glm-4.5-air", 220, Some(5));
    assert!(
        out.contains("first 50% of dims rotated"),
        "partial rotary: {out}"
    );
}

/// `anatomy ops`: glyphs, repeats (active experts of all), layer variants, named dims.
#[test]
fn deepseek_ops_list() {
    let g = graph::build(&source::load("deepseek-v3", false).unwrap().spec).unwrap();
    insta::assert_snapshot!(anatomy_core::render::report::ops(&g));
}

#[test]
fn llama_3_2_3b_has_the_22_steps_of_seed_000() {
    let g = graph::build(&source::load("llama-3.2-3b", false).unwrap().spec).unwrap();
    let titles: Vec<String> = g.steps().iter().map(|v| v.step.title.clone()).collect();
    assert_eq!(
        titles,
        [
            "Token embedding",
            "Block input",
            "Attention RMSNorm",
            "K projection",
            "K rotary position encoding",
            "V projection",
            "Q projection",
            "Q rotary position encoding",
            "Attention scores",
            "Causal softmax",
            "Weighted value aggregation",
            "Head concatenation",
            "Attention output projection",
            "Attention residual",
            "MLP RMSNorm",
            "Gate projection",
            "Up projection",
            "Gated activation",
            "Down projection",
            "MLP residual",
            "Final RMSNorm",
            "Language-model head",
        ]
    );
    let out = show("llama-3.2-3b", 100, None);
    for frame in [
        "Embedding",
        "Llama Block b ×28",
        "GQA Group i ×8",
        "Query Head j ×3",
        "MLP",
        "Final",
    ] {
        assert!(
            out.contains(&format!("┌─ {frame} ")),
            "missing frame {frame}"
        );
    }
}

#[test]
fn every_catalog_model_fits_every_width() {
    for entry in catalog::ENTRIES {
        for width in [30, 60, 80, 100, 132, 200] {
            for step in [None, Some(1), Some(4)] {
                let out = show(entry.name, width, step);
                for line in out.lines() {
                    assert!(
                        line.width() <= width,
                        "{} at width {width}: {line:?} is {} wide",
                        entry.name,
                        line.width()
                    );
                }
            }
        }
    }
}

#[test]
fn step_out_of_range_is_an_error() {
    let g = graph::build(&source::load("llama-3.2-3b", false).unwrap().spec).unwrap();
    let e = render::render(
        &g,
        &render::Options {
            width: 100,
            color: false,
            step: Some(23),
        },
    )
    .unwrap_err();
    assert!(e.message.contains("this model has 22 steps"), "{e}");
}

#[test]
fn color_only_when_asked() {
    let g = graph::build(&source::load("smollm2-135m", false).unwrap().spec).unwrap();
    let plain = render::render(
        &g,
        &render::Options {
            width: 100,
            color: false,
            step: None,
        },
    )
    .unwrap();
    let color = render::render(
        &g,
        &render::Options {
            width: 100,
            color: true,
            step: None,
        },
    )
    .unwrap();
    assert!(!plain.contains('\x1b'));
    assert!(color.contains("\x1b[34m"), "attention steps are blue");
}

/// A state-space model: the mixer step by step, its state a rounded box (the legend says so),
/// the scan's callout.
#[test]
fn mamba2_state_and_scan() {
    insta::assert_snapshot!(show("mamba-codestral-7b", 110, Some(15)));
}

/// A hybrid of one sublayer per layer: the mixer and FFN halves each gated to their layers.
#[test]
fn nemotron_h_layers_of_one_sublayer() {
    insta::assert_snapshot!(show("nemotron-3-nano-30b-a3b", 120, None));
}

#[path = "../../../tests/support/fixtures.rs"]
mod fixtures;

/// Every attention's weighted sum reads values drawn as activations (cached where the layer keeps
/// its own): never a state, such as a convolution's window drawn beside them.
#[test]
fn weighted_sums_read_the_values() {
    let specs = catalog::ENTRIES
        .iter()
        .map(|e| source::load(e.name, false).unwrap().spec)
        .chain(fixtures::all().into_iter().map(|d| {
            let path = d.join("config.json");
            source::load(path.to_str().unwrap(), false).unwrap().spec
        }));
    for spec in specs {
        let g = graph::build(&spec).unwrap();
        for v in g.steps() {
            if let graph::Op::WeightedSum { .. } = v.step.op {
                for &i in &v.step.inputs {
                    let t = g.tensor(i);
                    assert!(
                        matches!(t.kind, graph::TensorKind::Activation { .. }),
                        "{}: {} reads {} ({:?})",
                        spec.name,
                        v.step.title,
                        t.name,
                        t.kind
                    );
                }
            }
        }
    }
}

/// A Gemma 4 assistant's ops: its target's state projected in, layers that read the target's
/// keys, the clustered head and the projection back (the draft fixture's config).
#[test]
fn gemma4_assistant_ops_list() {
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../exec/tests/fixtures/draft/gemma4-assistant/assistant/config.json"
    );
    let g = graph::build(&source::load(config, false).unwrap().spec).unwrap();
    insta::assert_snapshot!(anatomy_core::render::report::ops(&g));
}
