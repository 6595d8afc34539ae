//! Convolutions over the keys and values (Inkling 2): each head's K and V mixed with those of the
//! tokens before, by static or input-made taps.

use super::attention::rows;
use super::build::{n, Builder, Draft};
use super::*;
use crate::naming::Role;

impl Builder<'_> {
    /// A residual causal depthwise convolution over one K/V head's channels of `letter`, in
    /// place (Inkling's `k_sconv`, `v_sconv`): `letter` + conv(`letter`).
    pub(super) fn head_conv(
        &mut self,
        letter: &str,
        idx: Option<&str>,
        kc: crate::spec::KvConv,
        cached: bool,
        x_in: &str,
    ) -> Vec<Node> {
        let taps = kc.conv.taps;
        let hd = if letter == "V" {
            self.attn.v_head_dim
        } else {
            self.attn.head_dim
        };
        let (kv, stored) = (self.attn.kv_heads, self.attn.kv_heads * hd);
        let slice = match idx {
            Some(i) => Some(rows(0, hd, i)),
            None if stored == hd => None,
            None => Some(format!("0:{hd}")),
        };
        let w = format!("Wc{}", letter.to_lowercase());
        let mut inputs = Vec::new();
        if kc.dynamic {
            // Inkling 2's full layers: stored taps [taps, channels] (tap 0 the current token),
            // plus per-token taps projected from the K or V input, one set per K/V head.
            let (stat, dynamic) = if letter == "V" {
                (Role::VConvStatic, Role::VConvDyn)
            } else {
                (Role::KConvStatic, Role::KConvDyn)
            };
            let p = self.param(stat, false, vec![taps, stored], Component::Attention, true);
            let cols = slice.as_deref().map(|s| format!("[:, {s}]"));
            inputs.push(self.weight(p, &w, [n(taps), n(hd)], cols));
            let d = self.spec.hidden;
            let pd = self.param(
                dynamic,
                false,
                vec![kv * taps, d],
                Component::Attention,
                true,
            );
            let block = idx.map(|i| rows(0, taps, i));
            inputs.push(self.weight(pd, &format!("{w}ᵈ"), [n(taps), n(d)], block));
            inputs.push(self.latest(x_in));
        } else {
            let role = if letter == "V" {
                Role::VConv
            } else {
                Role::KConv
            };
            let p = self.param(
                role,
                false,
                vec![stored, 1, taps],
                Component::Attention,
                true,
            );
            inputs.push(self.weight(p, &w, [n(hd), n(taps)], slice));
        }
        let state = format!("S_{}", letter.to_lowercase());
        let window = self.push(&state, [n(hd), n(taps - 1)], TensorKind::State);
        let input = self.latest(letter);
        let out = if cached {
            self.cached(letter, self.seq(hd))
        } else {
            self.act(letter, self.seq(hd))
        };
        inputs.push(window);
        let scaled = match (kc.dynamic, kc.conv.scaled) {
            (true, _) => format!(", all divided by √{}", 2 * taps + 1),
            (false, true) => format!(", all divided by √{}", taps + 1),
            (false, false) => String::new(),
        };
        let taps_of = if kc.dynamic {
            format!("the stored taps {w} plus this token's own taps {w}ᵈ · {x_in} (one set per K/V head)")
        } else {
            w.to_string()
        };
        let conv = self.step(Draft {
            title: format!("{letter} convolution"),
            op: Op::Conv { kernel: taps },
            category: Category::Attention,
            inputs,
            output: out,
            operation: format!(
                "Mix each of the head's {hd} {letter} channels over its last {taps} positions, on its own, and add the result to {letter}"
            ),
            equation: format!(
                "{letter}ₜ = {letter}ₜ + Σⱼ w[:, j] ⊙ {letter}ₜ₋₍{}₋ⱼ₎, j < {taps}, w = {taps_of}{scaled}; the positions before this call come from {state}",
                taps - 1
            ),
        });
        let kept = self.push(&state, [n(hd), n(taps - 1)], TensorKind::State);
        let keep = self.step(Draft {
            title: format!("{letter} convolution window"),
            op: Op::Route,
            category: Category::Attention,
            inputs: vec![input],
            output: kept,
            operation: format!("Keep each channel's last {} {letter} inputs for the tokens that follow: the convolution's state", taps - 1),
            equation: format!("{state} = {letter}[t−{}…t] as projected (zeros before the first token)", taps - 1),
        });
        vec![conv, keep]
    }
}
