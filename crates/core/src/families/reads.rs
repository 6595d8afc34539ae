//! The config keys transformers reads, per model type (`transformers_reads.txt`, made from its
//! source by `scripts/transformers_reads.py`; a test holds it to the installed transformers). A
//! key that neither a type's config class nor its modeling code reads cannot change the model
//! transformers builds: anatomy accepts it and lists it, rather than refusing the config.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

const DATA: &str = include_str!("transformers_reads.txt");

struct Reads {
    shared: HashSet<&'static str>,
    by_type: HashMap<&'static str, HashSet<&'static str>>,
}

fn table() -> &'static Reads {
    static T: OnceLock<Reads> = OnceLock::new();
    T.get_or_init(|| {
        let mut shared = HashSet::new();
        let mut by_type = HashMap::new();
        for line in DATA.lines().filter(|l| !l.starts_with('#')) {
            let mut words = line.split(' ');
            let Some(head) = words.next() else { continue };
            let keys: HashSet<&'static str> = words.collect();
            if head == "*" {
                shared = keys;
            } else {
                by_type.insert(head, keys);
            }
        }
        Reads { shared, by_type }
    })
}

/// Does transformers read `key` (a top-level key of its config) for `model_type`? None when the
/// table does not hold the type.
pub fn reads(model_type: &str, key: &str) -> Option<bool> {
    let t = table();
    let keys = t.by_type.get(model_type)?;
    Some(keys.contains(key) || t.shared.contains(key))
}

/// The keys transformers reads for `model_type` besides those every model's shared code reads,
/// sorted; None when the table does not hold the type.
pub fn keys(model_type: &str) -> Option<Vec<&'static str>> {
    let mut k: Vec<&'static str> = table().by_type.get(model_type)?.iter().copied().collect();
    k.sort_unstable();
    Some(k)
}

/// The model types the table holds.
pub fn types() -> impl Iterator<Item = &'static str> {
    table().by_type.keys().copied()
}

/// The version of transformers the table was made from (its first line).
pub fn version() -> &'static str {
    DATA.lines()
        .next()
        .and_then(|l| l.strip_prefix("# transformers "))
        .and_then(|l| l.split(':').next())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_keys_transformers_never_reads_are_known_as_such() {
        // Keys of published configs that no config class or modeling file reads.
        for (t, k) in [
            ("longcat_flash", "attention_method"),
            ("dots1", "moe_layer_freq"),
            ("nemotron_h", "attention_head_dim"),
            ("qwen3_5_text", "mlp_only_layers"),
            ("qwen3_5", "language_model_only"),
        ] {
            assert_eq!(reads(t, k), Some(false), "{t}.{k}");
        }
        for (t, k) in [
            ("llama", "rope_theta"),
            ("llama", "hidden_size"),
            ("qwen3_moe", "mlp_only_layers"),
            ("mistral", "sliding_window"),
        ] {
            assert_eq!(reads(t, k), Some(true), "{t}.{k}");
        }
        assert_eq!(reads("no-such-type", "x"), None);
        assert!(version().starts_with('5'), "{}", version());
    }
}
