//! Checkpoint tensor names per layout, in Hugging Face and GGUF naming.
//!
//! One table per layout; `{b}` stands for the layer index and `{e}` for the expert index.

use crate::spec::Layout;

/// What a checkpoint tensor is, independent of how a family names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Embed,
    AttnNorm,
    Q,
    K,
    V,
    O,
    QNorm,
    KNorm,
    FfnNorm,
    Gate,
    Up,
    Down,
    FinalNorm,
    LmHead,
    Router,
    ExpertGate,
    ExpertUp,
    ExpertDown,
}

/// `(hf, gguf)` name templates of `role`'s weight (`bias = false`) or bias.
pub fn names(layout: Layout, role: Role, bias: bool) -> (String, String) {
    let (hf, gguf) = match layout {
        Layout::Llama => llama(role),
        Layout::Mixtral => mixtral(role),
    };
    let suffix = if bias { "bias" } else { "weight" };
    (format!("{hf}.{suffix}"), format!("{gguf}.{suffix}"))
}

fn llama(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        Embed => ("model.embed_tokens", "token_embd"),
        AttnNorm => ("model.layers.{b}.input_layernorm", "blk.{b}.attn_norm"),
        Q => ("model.layers.{b}.self_attn.q_proj", "blk.{b}.attn_q"),
        K => ("model.layers.{b}.self_attn.k_proj", "blk.{b}.attn_k"),
        V => ("model.layers.{b}.self_attn.v_proj", "blk.{b}.attn_v"),
        O => ("model.layers.{b}.self_attn.o_proj", "blk.{b}.attn_output"),
        QNorm => ("model.layers.{b}.self_attn.q_norm", "blk.{b}.attn_q_norm"),
        KNorm => ("model.layers.{b}.self_attn.k_norm", "blk.{b}.attn_k_norm"),
        FfnNorm => ("model.layers.{b}.post_attention_layernorm", "blk.{b}.ffn_norm"),
        Gate => ("model.layers.{b}.mlp.gate_proj", "blk.{b}.ffn_gate"),
        Up => ("model.layers.{b}.mlp.up_proj", "blk.{b}.ffn_up"),
        Down => ("model.layers.{b}.mlp.down_proj", "blk.{b}.ffn_down"),
        FinalNorm => ("model.norm", "output_norm"),
        LmHead => ("lm_head", "output"),
        Router => ("model.layers.{b}.mlp.gate", "blk.{b}.ffn_gate_inp"),
        // GGUF stacks a layer's experts into one tensor (`ffn_gate_exps`, shape [E, …]).
        ExpertGate => ("model.layers.{b}.mlp.experts.{e}.gate_proj", "blk.{b}.ffn_gate_exps"),
        ExpertUp => ("model.layers.{b}.mlp.experts.{e}.up_proj", "blk.{b}.ffn_up_exps"),
        ExpertDown => ("model.layers.{b}.mlp.experts.{e}.down_proj", "blk.{b}.ffn_down_exps"),
    }
}

fn mixtral(role: Role) -> (&'static str, &'static str) {
    use Role::*;
    match role {
        Router => ("model.layers.{b}.block_sparse_moe.gate", "blk.{b}.ffn_gate_inp"),
        ExpertGate => ("model.layers.{b}.block_sparse_moe.experts.{e}.w1", "blk.{b}.ffn_gate_exps"),
        ExpertUp => ("model.layers.{b}.block_sparse_moe.experts.{e}.w3", "blk.{b}.ffn_up_exps"),
        ExpertDown => ("model.layers.{b}.block_sparse_moe.experts.{e}.w2", "blk.{b}.ffn_down_exps"),
        other => llama(other),
    }
}

/// Fill in the layer and expert index of a template.
pub fn instantiate(template: &str, b: Option<u64>, e: Option<u64>) -> String {
    let mut s = template.to_string();
    if let Some(b) = b {
        s = s.replace("{b}", &b.to_string());
    }
    if let Some(e) = e {
        s = s.replace("{e}", &e.to_string());
    }
    s
}
