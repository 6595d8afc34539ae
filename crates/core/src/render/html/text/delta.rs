//! The page's words for the delta-rule mixers.

use super::*;

/// Gated DeltaNet in words, with this model's sizes.
pub(super) fn delta_text(d: u64, s: crate::spec::DeltaNet) -> Text {
    let (kh, vh, dk, dv, k) = (
        s.key_heads,
        s.value_heads,
        s.key_dim,
        s.value_dim,
        s.conv_kernel,
    );
    let conv = s.conv_dim();
    let state = vh * dk * dv + conv * (k - 1);
    let mut sub = vec![
        format!("The state does not grow with the context: {} values per layer ({vh} heads × {dk} × {dv}, plus the convolution's last {} inputs of {conv} channels), where attention would cache two vectors per token.", grouped(state as u128), k - 1),
        "The delta rule writes the error, not the value: with β = 1 a key's old value is replaced, not added to, so the memory does not saturate the way plain linear attention's does.".to_string(),
        "Q and K are L2-normalized per head, so a key reads and writes at most its own direction; the decay exp(g) lets each head forget everything at once.".to_string(),
        "transformers computes a prompt in chunks of 64 (the WY form of the delta rule): within a chunk the updates are solved together, between chunks the memory is carried. The result is the same as the token-by-token recurrence it decodes with, and that anatomy runs for both.".to_string(),
    ];
    if vh != kh {
        sub.push(format!("Each of the {kh} query and key heads serves {} value heads, as grouped-query attention shares K and V, the other way round.", vh / kh));
    }
    if s.beta_scale != 1.0 {
        sub.push(format!("β = {} · σ(·), in (0, {}): past 1 a write overshoots the new value, which lets the transition have negative eigenvalues (state tracking that a β below 1 cannot do).", s.beta_scale, s.beta_scale));
    }
    if s.store == crate::spec::DeltaStore::Grouped {
        sub.push("The checkpoint stores Q, K, V and z as one projection grouped by key head (each key head's q, k, then its value heads' v and z), and β and α as another.".into());
    }
    if s.channel_decay() {
        sub[2] = "Q and K are L2-normalized per head, so a key reads and writes at most its own direction; the decay is per key channel, so a head can keep some directions of its memory and let others fade.".into();
        let (f, g) = if s.store == crate::spec::DeltaStore::Kimi {
            sub.push(format!("Both gates come through rank {dk}: the forget gate's step {d} → {dk} → {} and the output gate {d} → {dk} → {}, far fewer weights than full projections.", s.keys(), s.values()));
            (
                format!("F a rank-{dk} projection of the input"),
                format!("another rank-{dk} projection"),
            )
        } else {
            (
                "F a projection of the input".to_string(),
                "another projection".to_string(),
            )
        };
        let decay = match s.gate_floor {
            Some(floor) => {
                sub.push(format!("The decay is bounded: g = {floor} · σ(exp(A_log)·(F + b)) lies in ({floor}, 0), so no token can keep more than all of its memory or wipe it in one step beyond exp({floor}) ≈ {:.4}.", floor.exp()));
                format!("g = {floor} · σ(exp(A_log)·(F + b))")
            }
            None => "g = −exp(A_log)·softplus(F + b)".to_string(),
        };
        return Text {
            summary: format!("Kimi Delta Attention: {vh} heads each carry a {dk} × {dv} memory from keys to values, each key channel decaying at its own rate, corrected token by token; no KV cache."),
            explanation: format!("Projections of the {d} features give Q, K and V ({vh} heads × {dk}), each through a causal convolution over the last {k} positions and SiLU, and β = σ(W_β x) per head. The decay is per key channel: {decay}, {f}, A_log one rate per head. Each head's memory S decays row by row by exp(g), then moves what it recalls for k toward v by β: S ← S + k ⊗ β(v − Sᵀk). It is read with q; the result is RMS-normed per head, gated by σ of {g} and projected back to {d}."),
            subtleties: sub,
        };
    }
    let beta = if s.beta_scale == 1.0 {
        "σ(β₀)".to_string()
    } else {
        format!("{} · σ(β₀)", s.beta_scale)
    };
    Text {
        summary: format!("Gated DeltaNet: {vh} heads each carry a {dk} × {dv} memory from keys to values, decayed and corrected token by token; no KV cache."),
        explanation: format!("Projections of the {d} features give Q and K ({kh} heads × {dk}), V and the gate z ({vh} heads × {dv}), and β and α per value head. A causal convolution over the last {k} positions and SiLU prepare Q, K and V. Each head's memory S decays by exp(g), g = −exp(A_log)·softplus(α + b), then moves what it recalls for k toward v by β = {beta}: S ← S + k ⊗ β(v − Sᵀk). It is read with q; the result is RMS-normed per head, gated by {gate} and projected back to {d}.", gate = if s.sigmoid_gate { "σ(z)" } else { "SiLU(z)" }),
        subtleties: sub,
    }
}
