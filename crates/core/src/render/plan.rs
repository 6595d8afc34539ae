//! `anatomy plan`'s text: memory by component, whether it fits, the longest context that fits,
//! llama.cpp's offload, and the decode and prefill ceilings, each with its basis.

use crate::fmt::{bytes, context, grouped};
use crate::plan::Plan;
use std::fmt::Write;

pub fn plan(p: &Plan) -> String {
    let b = |n: u64| bytes(n as u128);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} under {} on {}, {} tokens × {} sequence{}",
        p.model,
        p.runtime,
        p.device.name,
        context(p.context),
        p.batch,
        if p.batch == 1 { "" } else { "s" }
    );
    let _ = writeln!(s, "\nMemory");
    // The label column fits the longest kind (BLT's name their stack) or format.
    let kinds = p.kv_cache.by_kind.iter().map(|k| k.kind.len());
    let formats = p.weights.by_format.iter().map(|f| f.format.len());
    let w = kinds.chain(formats).map(|n| n + 2).fold(17, usize::max);
    let v = w - 2;
    let _ = writeln!(
        s,
        "  {:<w$}{:>12}  {}",
        "weights",
        b(p.weights.bytes),
        p.weights.basis
    );
    for f in &p.weights.by_format {
        let _ = writeln!(
            s,
            "    {:<v$}{:>12}  {} tensors, {} values, {:.2} bits a value",
            f.format,
            b(f.bytes),
            grouped(f.tensors as u128),
            grouped(f.values as u128),
            f.bytes as f64 * 8.0 / f.values.max(1) as f64
        );
    }
    let _ = writeln!(
        s,
        "  {:<w$}{:>12}  {}",
        "KV cache",
        b(p.kv_cache.bytes),
        p.kv_cache.basis
    );
    for k in &p.kv_cache.by_kind {
        let _ = writeln!(
            s,
            "    {:<v$}{:>12}  {} layer{}, {} cells, {} a token",
            k.kind,
            b(k.bytes),
            k.layers,
            if k.layers == 1 { "" } else { "s" },
            grouped(k.cells as u128),
            b(k.bytes_per_token)
        );
    }
    if p.state.bytes > 0 {
        let _ = writeln!(
            s,
            "  {:<w$}{:>12}  {}",
            "state",
            b(p.state.bytes),
            p.state.basis
        );
    }
    let _ = writeln!(
        s,
        "  {:<w$}{:>12}  {}",
        "compute",
        b(p.compute.bytes),
        p.compute.basis
    );
    let _ = writeln!(
        s,
        "  {:<w$}{:>12}  {}",
        "overhead",
        b(p.overhead.bytes),
        p.overhead.basis
    );
    let _ = writeln!(s, "  {:<w$}{:>12}", "total", b(p.total));
    match p.usable_memory {
        Some(m) => {
            let _ = writeln!(
                s,
                "\n{} in {} of {}{}",
                if p.total <= m { "Fits" } else { "Does not fit" },
                b(m),
                p.device.name,
                if m < p.device.memory.unwrap_or(m) {
                    " (the runtime's share)"
                } else {
                    ""
                }
            );
        }
        None => {
            let _ = writeln!(
                s,
                "\n{} leaves memory to the machine: give --memory to know whether it fits",
                p.device.name
            );
        }
    }
    match &p.max_context {
        Some(c) if c.limited_by == "model" => {
            let _ = writeln!(
                s,
                "Longest context: the model's own, {} tokens",
                context(c.tokens)
            );
        }
        Some(c) => {
            let _ = writeln!(
                s,
                "Longest context that fits: {} tokens",
                grouped(c.tokens as u128)
            );
        }
        None if p.usable_memory.is_some() => {
            let _ = writeln!(s, "Not even one token of context fits");
        }
        None => {}
    }
    if let Some(o) = &p.offload {
        let _ = writeln!(
            s,
            "Offload: -ngl {} of {} puts {} on the device and leaves {} in RAM ({})",
            o.gpu_layers,
            o.of,
            b(o.gpu_bytes),
            b(o.cpu_bytes),
            o.basis
        );
    }
    let _ = writeln!(s, "\nCeilings");
    let _ = writeln!(
        s,
        "  decode   {:>10.1} tokens/s  {} a step; {}",
        p.decode.tokens_per_s,
        b(p.decode.bytes_per_step),
        p.decode.basis
    );
    match p.prefill.tokens_per_s {
        Some(t) => {
            let _ = writeln!(
                s,
                "  prefill  {:>10.1} tokens/s  {} a token; {}",
                t,
                crate::fmt::flops(p.prefill.flops_per_token as f64),
                p.prefill.basis
            );
        }
        None => {
            let _ = writeln!(s, "  prefill  {}", p.prefill.basis);
        }
    }
    let _ = writeln!(s, "\nRules: {}", p.runtime_source);
    let _ = writeln!(s, "Device figures: {}", p.device.source);
    s
}
