//! The NumPy export's BLT part (`ByteLatent`): the file's layer functions read the globals
//! CONFIG, PLAN, NAMES and rope_frequencies, so each stack's figures, plan, names and rotary
//! frequencies are written beside the latent transformer's, and `within(stack)` points the
//! globals at them before that stack runs. The model's forward() (blt.py) runs the layers through
//! `stack_forward`, forward.py's loop over a range of them.

use super::{config_py, freqs, name_dict, py, python_plan};
use crate::graph::Graph;
use crate::naming::Role;
use crate::spec::{ByteLatent, Patching, Spec, Stack};

/// BLT's figures: the hashed n-grams, the patching and each stack's CONFIG, PLAN, NAMES and
/// rotary frequencies, written where blt.py's functions begin.
pub(crate) fn constants(g: &Graph, bl: &ByteLatent) -> String {
    let held: std::collections::HashSet<&str> = g.params.iter().map(|p| p.hf.as_str()).collect();
    let mut stacks = String::new();
    let mut entries = vec!["    \"global\": (CONFIG, PLAN, NAMES, rope_frequencies),".to_string()];
    for (stack, spec) in bl.stacks() {
        let key = key(stack);
        let upper = key.to_uppercase();
        let cross: &[(&str, Role)] = match stack {
            Stack::Patcher => &[],
            Stack::Encoder | Stack::Decoder => CROSS_ROLES,
        };
        stacks += &format!(
            "# The {title}'s figures, plan, names and rotary frequencies.\nCONFIG_{upper} = {config}\n\nPLAN_{upper} = [\n    {plan},\n]\n\nNAMES_{upper} = {names}\n\n{rope}\n\n\n",
            title = stack.title().to_lowercase(),
            config = config_py(spec),
            plan = python_plan(spec).join(",\n    "),
            names = name_dict(spec, &held, cross).0,
            rope = rope(spec, &format!("{key}_rope_frequencies")),
        );
        entries.push(format!(
            "    {key:?}: (CONFIG_{upper}, PLAN_{upper}, NAMES_{upper}, {key}_rope_frequencies),"
        ));
    }
    let (threshold, extra) = match bl.patching {
        Patching::Entropy(t) => (crate::fmt::float(t), 0),
        Patching::Bytes { extra } => ("None".to_string(), extra),
    };
    let constants = format!(
        "# BLT: the hashed n-grams, the queries and keys per patch, how bytes are cut into patches.\nBLT = {{\n    \"hash_vocab\": {hv}, \"hash_sizes\": {sizes:?}, \"hash_functions\": {hf},\n    \"k\": {k}, \"encoder_cross_all\": {ea}, \"decoder_cross_all\": {da},\n    \"threshold\": {threshold}, \"extra_patches\": {extra}, \"max_patch\": {mp},\n    \"token_proj\": {tp},\n}}\nHASH_PRIMES = {primes:?}\nHASH_TABLE = \"model.encoder_hash_tok_embedding.weight\"\n\n{stacks}STACKS = {{\n{entries}\n}}",
        hv = bl.hash.vocab,
        sizes = bl.hash.sizes,
        hf = bl.hash.functions,
        k = bl.cross_k,
        ea = py(bl.encoder_cross_all),
        da = py(bl.decoder_cross_all),
        mp = bl.max_patch.map_or("None".into(), |m| m.to_string()),
        tp = py(bl.encoder.hidden * bl.cross_k != g.spec.hidden),
        primes = crate::spec::ByteHash::PRIMES,
        entries = entries.join("\n"),
    );
    constants + "\n\n\n"
}

const CROSS_ROLES: &[(&str, Role)] = &[
    ("cross_q_norm", Role::CrossQNorm),
    ("cross_k_norm", Role::CrossKNorm),
    ("cross_q", Role::CrossQ),
    ("cross_k", Role::CrossK),
    ("cross_v", Role::CrossV),
    ("cross_o", Role::CrossO),
    ("patch_proj", Role::PatchProj),
];

fn key(s: Stack) -> &'static str {
    match s {
        Stack::Patcher => "patcher",
        Stack::Encoder => "encoder",
        Stack::Decoder => "decoder",
    }
}

/// A stack's rotary frequencies under `name`.
fn rope(spec: &Spec, name: &str) -> String {
    let r = ByteLatent::rope(spec);
    freqs(&r.full, name, r.rotary_dim(spec.attn.head_dim))
}
