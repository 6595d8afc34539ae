//! The line between a key anatomy must understand and one it may accept unread is transformers
//! itself (`families::reads`): over every catalog config, keys no part of transformers reads are
//! accepted with the same numbers and listed, and a key transformers reads is never listed as
//! unread: it is understood, known inert, or refused.

use anatomy_core::{catalog, families, graph, stats};
use serde_json::{json, Value};

fn total(v: &Value) -> anatomy_core::Result<(u128, anatomy_core::spec::Spec)> {
    let spec = families::load_json("config.json", &v.to_string(), "t", false)?;
    let g = graph::build(&spec)?;
    Ok((stats::stats(&g, None)?.total_params as u128, spec))
}

#[test]
fn keys_transformers_never_reads_change_nothing_and_are_listed() {
    let extra = [
        ("attention_method", json!("MLA")),
        ("language_model_only", json!(false)),
        ("zz_published_note", json!({"by": "a user", "n": [1, 2]})),
    ];
    for e in catalog::ENTRIES {
        let v = e.value();
        let (base, spec) = total(&v).unwrap();
        // Some of these keys a type's transformers code does read: only the others go in.
        let top_type = v["model_type"].as_str().unwrap_or_default().to_string();
        let unread: Vec<&(&str, Value)> = extra
            .iter()
            .filter(|(k, _)| {
                families::reads::reads(&top_type, k) == Some(false) && v.get(*k).is_none()
            })
            .collect();
        for n in 1..=unread.len() {
            let mut w = v.clone();
            for (k, val) in &unread[..n] {
                w[*k] = val.clone();
            }
            let (count, with) = total(&w).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert_eq!(count, base, "{}", e.name);
            let listed: Vec<&str> = with.not_read.iter().map(|i| i.key.as_str()).collect();
            for (k, _) in &unread[..n] {
                assert!(
                    listed.contains(k),
                    "{}: {k} not listed in {listed:?}",
                    e.name
                );
            }
            assert_eq!(with.not_read.len(), spec.not_read.len() + n, "{}", e.name);
        }
    }
}

#[test]
fn a_key_transformers_reads_is_never_listed_as_unread() {
    for e in catalog::ENTRIES {
        let v = e.value();
        let t = v["model_type"].as_str().unwrap_or_default().to_string();
        let Some(keys) = families::reads::keys(&t) else {
            continue;
        };
        for k in keys.into_iter().filter(|k| v.get(*k).is_none()) {
            let mut w = v.clone();
            w[k] = json!({"a value": "no config class takes"});
            if let Ok((_, spec)) = total(&w) {
                assert!(
                    spec.not_read.iter().all(|i| i.key != k),
                    "{}: {k} is read by transformers for {t}, yet listed as unread",
                    e.name
                );
            }
        }
    }
}
