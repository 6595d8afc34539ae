//! Which pieces of the NumPy fragments a model's file holds: one line per piece, on where the
//! Spec has what it computes.

use crate::render::fragment::Pieces;
use crate::spec::Spec;

pub(super) fn pieces(spec: &Spec) -> Pieces {
    let mut p = Pieces::default();
    // Dory's nGPT: learned scales on queries, gates, the MLP's halves and the logits.
    p.set("ngpt", spec.ngpt.is_some());
    // DeepSeek-V4's layers whose experts are chosen by token id.
    p.set("hashed", spec.moe.as_ref().is_some_and(|m| m.hash_layers.is_some()));
    // Ling's clips after the activation (per layer, routed and shared apart).
    p.set("act_clips", spec.moe.as_ref().is_some_and(|m| m.act_clips.is_some()));
    // The shared experts' SwiGLU clamped as the routed ones' (HY v4).
    p.set("shared_clamp", spec.moe.as_ref().is_some_and(|m| m.shared_clamp));
    // DeepSeek-V4's compressed attention, in place of the plain one.
    p.set("v4", spec.attn.v4.is_some());
    // Hyper-connections whose streams' mix is a Sinkhorn-normalised matrix.
    p.set("sinkhorn", spec.hyper().is_some_and(|h| h.sinkhorn.is_some()));
    // Softcaps on the experts' gate and up halves.
    p.set("glu_softcaps", spec.moe.as_ref().is_some_and(|m| m.glu_softcaps.is_some()));
    p
}
