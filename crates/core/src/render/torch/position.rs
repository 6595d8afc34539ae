//! Positions: rotary embeddings of every scaling and layout, the masks, and the bucketed position
//! bias.

use super::*;

/// The dims of a head that RoPE may turn: the whole head, or latent attention's rotary part.
pub(super) fn turnable(a: &crate::spec::Attention) -> u64 {
    a.mla.as_ref().map_or(a.head_dim, |m| m.qk_rope_head_dim)
}

/// The sliding layers' rotated dims, of their own heads.
pub(super) fn sliding_rope_dim(spec: &Spec, r: &Rope) -> u64 {
    let span = AttnSpan::Sliding(1);
    r.rotary_dim_for(span, turnable(spec.attn_for(span)))
}

/// The full layers' rotated dims, of their own heads (Gemma 4's global heads are larger).
pub(super) fn rope_dim(spec: &Spec, r: &Rope) -> u64 {
    r.rotary_dim(turnable(spec.attn_for(AttnSpan::Full)))
}

/// The function computing one set of inverse frequencies for a sequence of `seq_len` tokens.
pub(super) fn freqs_fn(name: &str, f: &RopeFreqs, dim: u64) -> String {
    let base = fmt_f(f.theta);
    let scaled = match &f.scaling {
        RopeScaling::None => String::new(),
        RopeScaling::Linear { factor } => fill(
            "    inv_freq = inv_freq / ${factor}  # linear: every position squeezed ×${factor}\n",
            &[("factor", fmt_f(*factor))],
        ),
        RopeScaling::Dynamic { factor, original } => fill(
            r#"    if seq_len > ${original}:
        # dynamic NTK: past ${original} positions the base grows with the sequence
        base = ${base} * ((${factor} * seq_len / ${original}) - (${factor} - 1)) ** (${dim} / (${dim} - 2))
        inv_freq = 1.0 / (base ** (torch.arange(0, ${dim}, 2, dtype=torch.float32) / ${dim}))
"#,
            &[
                ("original", original.to_string()),
                ("factor", fmt_f(*factor)),
                ("base", base.clone()),
                ("dim", dim.to_string()),
            ],
        ),
        RopeScaling::Llama3 {
            factor,
            low_freq_factor,
            high_freq_factor,
            original,
        } => fill(
            r#"    # llama3: wavelengths longer than ${original}/${low} slowed ×${factor}, shorter than ${original}/${high} kept, a ramp between
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > ${original} / ${low}, inv_freq / ${factor}, inv_freq)
    smooth = (${original} / wavelen - ${low}) / (${high} - ${low})
    smoothed = (1 - smooth) * scaled / ${factor} + smooth * scaled
    medium = ~(wavelen < ${original} / ${high}) & ~(wavelen > ${original} / ${low})
    inv_freq = torch.where(medium, smoothed, scaled)
"#,
            &[
                ("original", original.to_string()),
                ("factor", fmt_f(*factor)),
                ("low", fmt_f(*low_freq_factor)),
                ("high", fmt_f(*high_freq_factor)),
            ],
        ),
        RopeScaling::Yarn {
            factor,
            original,
            beta_fast,
            beta_slow,
            attention_factor,
            truncate,
        } => fill(
            r#"    # YaRN: low frequencies interpolated ×${factor}, high ones kept, a linear ramp between
    def correction_dim(rotations):
        return (${dim} * math.log(${original} / (rotations * 2 * math.pi))) / (2 * math.log(${base}))

    low, high = correction_dim(${fast}), correction_dim(${slow})
${truncate}    low, high = max(low, 0), min(high, ${dim} - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(${half}, dtype=torch.float32) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    inv_freq = inv_freq / ${factor} * (1 - extrapolation) + inv_freq * extrapolation
    attention_factor = ${attn}
"#,
            &[
                ("factor", fmt_f(*factor)),
                ("original", original.to_string()),
                ("base", base.clone()),
                ("dim", dim.to_string()),
                ("half", (dim / 2).to_string()),
                ("fast", fmt_f(*beta_fast)),
                ("slow", fmt_f(*beta_slow)),
                ("attn", attention_factor.to_string()),
                (
                    "truncate",
                    if *truncate {
                        "    low, high = math.floor(low), math.ceil(high)\n".into()
                    } else {
                        "    # the ramp's ends are not rounded to whole dims (truncate: false)\n"
                            .into()
                    },
                ),
            ],
        ),
        RopeScaling::Proportional { factor, fraction } => fill(
            "    # proportional: the first ${turning} of the ${half} pairs turn, the rest stay still\n    inv_freq = torch.where(torch.arange(${half}) < ${turning}, inv_freq / ${factor}, 0.0)\n",
            &[
                ("turning", ((fraction * dim as f64 / 2.0).floor() as u64).to_string()),
                ("half", (dim / 2).to_string()),
                ("factor", fmt_f(*factor)),
            ],
        ),
        RopeScaling::LongRope {
            short,
            original,
            mscale: Some((short_scale, long_scale)),
            ..
        } => fill(
            r#"    # LongRoPE as PhiMoE reads it: the short factors at every length; cos and sin scaled by
    # ${s} up to ${original} positions, by ${l} beyond
    factors = torch.tensor(${short}, dtype=torch.float32)
    inv_freq = 1.0 / (factors * ${base} ** (torch.arange(0, ${dim}, 2, dtype=torch.float32) / ${dim}))
    attention_factor = ${l} if seq_len > ${original} else ${s}
"#,
            &[
                ("original", original.to_string()),
                ("short", format!("{short:?}")),
                ("s", short_scale.to_string()),
                ("l", long_scale.to_string()),
                ("base", base.clone()),
                ("dim", dim.to_string()),
            ],
        ),
        RopeScaling::LongRope {
            short,
            long,
            original,
            attention_factor,
            mscale: None,
        } => {
            let list = |v: &[f64]| {
                let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                format!("[{}]", items.join(", "))
            };
            fill(
                r#"    # LongRoPE: one factor per rotated pair, the short set up to ${original} positions, the long beyond
    short = torch.tensor(${short}, dtype=torch.float32)
    long = torch.tensor(${long}, dtype=torch.float32)
    factors = long if seq_len > ${original} else short
    inv_freq = 1.0 / (factors * ${base} ** (torch.arange(0, ${dim}, 2, dtype=torch.float32) / ${dim}))
    attention_factor = ${attn}
"#,
                &[
                    ("original", original.to_string()),
                    ("short", list(short)),
                    ("long", list(long)),
                    ("base", base.clone()),
                    ("dim", dim.to_string()),
                    ("attn", attention_factor.to_string()),
                ],
            )
        }
    };
    fill(
        r#"def ${name}(seq_len):
    """Inverse frequencies of ${dim} rotated dims (${desc}), and the factor on cos and sin."""
    inv_freq = 1.0 / (${base} ** (torch.arange(0, ${dim}, 2, dtype=torch.float32) / ${dim}))
    attention_factor = 1.0
${scaled}    return inv_freq, attention_factor"#,
        &[
            ("name", name.to_string()),
            ("dim", dim.to_string()),
            ("desc", f.describe()),
            ("base", base),
            ("scaled", scaled),
        ],
    )
}

pub(super) fn rope(spec: &Spec) -> String {
    let Position::Rope(r) = &spec.position else {
        return match spec.position {
            Position::Learned => {
                "# No rotary embedding: positions enter as learned embeddings added to the tokens."
            }
            Position::Sinusoidal(_) => {
                "# No rotary embedding: positions enter as fixed sinusoids added to the tokens."
            }
            Position::Alibi(_) => {
                "# No rotary embedding: each head adds a linear penalty on key distance (ALiBi) to its scores."
            }
            Position::Buckets(_) => {
                "# No rotary embedding: each head adds a learned bias per distance bucket to its scores."
            }
            Position::None if spec.attn.rel_logits.is_some() => {
                "# No rotary embedding: each attention layer adds relative logits (RelativeLogits) to its scores."
            }
            Position::None => "# No position encoding: attention sees order only through the causal mask and any recurrent layers.",
            Position::Rope(_) => unreachable!("matched by the let-else above"),
        }
        .into();
    };
    let dim = rope_dim(spec, r);
    let mut out = vec![freqs_fn("rope_frequencies", &r.full, dim)];
    if let Some(s) = &r.sliding {
        // The sliding layers' own rotated dims where they differ (Laguna, Gemma 4's smaller
        // heads, dots.3 Note's sliding latent attention).
        let sliding_dim = if r.sliding_partial.is_some()
            || turnable(spec.attn_for(AttnSpan::Sliding(1)))
                != turnable(spec.attn_for(AttnSpan::Full))
        {
            sliding_rope_dim(spec, r)
        } else {
            dim
        };
        out.push(freqs_fn("sliding_rope_frequencies", s, sliding_dim));
    }
    // M-RoPE (Qwen2-VL): while an image runs, each pair turns by its token's time, row or column.
    let positions = match spec.image.as_ref().and_then(|i| i.encoder.mrope()) {
        Some(m) => {
            let axes = m.axes(dim as usize / 2);
            format!(
                r#"
    if IMAGE_POSITIONS is not None:  # M-RoPE: each pair turns by its token's time, row or column
        axis = torch.tensor({axes:?})  # [rotated dims / 2]: the axis each pair turns by
        angles = IMAGE_POSITIONS[axis, :T].T.float() * inv_freq[None, :]"#
            )
        }
        None => String::new(),
    };
    if !positions.is_empty() {
        out.push("IMAGE_POSITIONS = None  # while an image runs: each token's time, row and column, [3, T] (Model.forward)".into());
    }
    out.push(fill(
        r#"def rope_cos_sin(frequencies, T, dtype):
    """cos and sin of every position's angles: [T, rotated dims]."""
    inv_freq, factor = frequencies(T)
    angles = ${arange}[:, None] * inv_freq[None, :]  # [T, rotated dims / 2]${positions}
    angles = torch.cat((angles, angles), dim=-1)
    return (angles.cos() * factor).to(dtype), ${sign}(angles.sin() * factor).to(dtype)"#,
        &[
            // This model rotates backwards: its rotate_half is (x₂, −x₁).
            ("sign", if r.reversed { "-" } else { "" }.into()),
            ("positions", positions),
            // PaliGemma's positions count from 1.
            (
                "arange",
                match r.start {
                    0 => "torch.arange(T, dtype=torch.float32)".into(),
                    s => format!("torch.arange({s}, T + {s}, dtype=torch.float32)"),
                },
            ),
        ],
    ));
    out.push(if r.interleaved {
        r#"def apply_rope(x, cos, sin):  # x: [B, heads, T, d]; the first cos.shape[-1] dims rotate
    """Rotate interleaved pairs (x0, x1), (x2, x3) … as complex numbers."""
    dim = cos.shape[-1]
    rot, rest = x[..., :dim], x[..., dim:]
    a, b = rot[..., 0::2], rot[..., 1::2]
    c, s = cos[..., : dim // 2], sin[..., : dim // 2]
    rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
    return torch.cat((rot, rest), dim=-1)"#
            .to_string()
    } else {
        r#"def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, cos, sin):  # x: [B, heads, T, d]; the first cos.shape[-1] dims rotate
    dim = cos.shape[-1]
    rot, rest = x[..., :dim], x[..., dim:]
    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)"#
            .to_string()
    });
    out.join("\n\n\n")
}

pub(super) fn mask(spec: &Spec) -> String {
    let mut spans: Vec<AttnSpan> = spec.plan.iter().filter_map(|l| l.span()).collect();
    spans.sort();
    spans.dedup();
    let mut rules = String::new();
    for s in spans {
        match s {
            AttnSpan::Full => {}
            AttnSpan::Whole => rules += "    if span[0] == \"whole\":\n        allowed = torch.ones(T, T, dtype=torch.bool)  # both ways: every query sees every key, later ones too\n",
            AttnSpan::Sliding(_) => rules += "    if span[0] == \"sliding\":\n        allowed &= i - j < span[1]  # only the last span[1] keys\n",
            AttnSpan::Chunked(_) => rules += "    if span[0] == \"chunked\":\n        allowed &= (j // span[1]) == (i // span[1])  # only keys of the same chunk\n",
        }
    }
    let bias = match spec.position {
        Position::Buckets(b) => position_bias(spec, b),
        // The others add nothing to the scores here (ALiBi's slopes are written in `attend`).
        Position::Rope(_)
        | Position::Learned
        | Position::Sinusoidal(_)
        | Position::Alibi(_)
        | Position::None => String::new(),
    };
    // An image's tokens that see each other both ways (Gemma 3): the Model sets each
    // position's last key while it runs the language model on an image (a window still bounds
    // them from below); PaliGemma's input, a prompt, sees itself both ways in every span.
    let (reach, causal) = match spec.image.as_ref().is_some_and(|i| i.encoder.both_ways()) {
        true => (
            "IMAGE_REACH = None  # while an image runs: each position's last key (Model.forward)\n\n\n",
            "j <= (i if IMAGE_REACH is None else torch.maximum(i, IMAGE_REACH[:T, None]))  # causal, an image's tokens seeing their whole image",
        ),
        false => ("", "j <= i  # causal"),
    };
    let prefix = match spec.prefix_lm {
        true => "    allowed = torch.ones(T, T, dtype=torch.bool)  # the input is the prompt, a prefix that sees itself both ways\n",
        false => "",
    };
    bias + &fill(
        r#"${reach}def attention_mask(T, span):
    """True where query i may attend to key j; span is ("full", 0), ("sliding", w) or ("chunked", c)."""
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    allowed = ${causal}
${rules}${prefix}    return allowed"#,
        &[
            ("rules", rules),
            ("reach", reach.to_string()),
            ("causal", causal.to_string()),
            ("prefix", prefix.to_string()),
        ],
    )
}

/// The bucketed relative-position bias as a function of the table, for the model to compute once
/// and hand every layer.
pub(super) fn position_bias(spec: &Spec, b: crate::spec::Buckets) -> String {
    let segments = match spec.prompt {
        Some(p) => fill(
            r#"    seg = torch.where(torch.arange(T) < P, ${ps}, ${ts})  # each position's segment: the prompt's, then the text's
    across = ${buckets} + seg[:, None] * ${segments} + seg[None, :]  # a row of its own per pair of segments
    row = torch.where(seg[:, None] == seg[None, :], row, across)
"#,
            &[
                ("ps", crate::spec::PROMPT_SEGMENT.to_string()),
                ("ts", crate::spec::TEXT_SEGMENT.to_string()),
                ("buckets", b.buckets.to_string()),
                ("segments", p.segments.to_string()),
            ],
        ),
        None => String::new(),
    };
    let half = b.buckets / 2;
    let exact = half / 2;
    fill(
        r#"def position_bias(table, T, P):
    """[1, heads, T, T]: the learned bias of key j for the query at i, by bucket of j - i: ${half}
    buckets for keys before the query, ${half} for keys after it; distances below ${exact} have one
    each, longer ones share buckets spaced by log distance up to ${max}. P: the prompt's length."""
    rel = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # j - i
    a = rel.abs()
    far = ${exact} + (torch.log(a.clamp(min=1).float() / ${exact}) / math.log(${max} / ${exact}) * ${span}).to(torch.int64)
    row = (rel > 0) * ${half} + torch.where(a < ${exact}, a, far.clamp(max=${last}))
${segments}    return table[row.to(table.device)].permute(2, 0, 1).unsqueeze(0)


"#,
        &[
            ("half", half.to_string()),
            ("exact", exact.to_string()),
            ("max", b.max_distance.to_string()),
            ("span", (half - exact).to_string()),
            ("last", (half - 1).to_string()),
            ("segments", segments),
        ],
    )
}
