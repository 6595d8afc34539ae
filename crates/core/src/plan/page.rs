//! The planner's figures at the stops of the page's sliders.

use super::memory::Breakdown;
use super::model::read_model;
use super::{
    devices, fit, rate, KvType, Rate, Runtime, Settings, Target, WeightFormat, Weights,
    DEFAULT_DEVICE,
};
use crate::error::Result;
use crate::graph::Graph;
use crate::stats;
use serde::Serialize;

/// The planner's figures at the stops of the page's sliders, for its panel to look up offline:
/// every number is `plan`'s for that device, runtime, weight format, context and batch.
#[derive(Debug, Clone, Serialize)]
pub struct PageTable {
    pub contexts: Vec<u64>,
    pub batches: Vec<u64>,
    pub runtimes: Vec<PageRuntime>,
    pub formats: Vec<PageFormat>,
    /// Mean FLOPs per token of a prompt of each context.
    pub prefill_flops: Vec<u64>,
    /// The devices with memory of their own (a CPU's RAM is the machine's).
    pub devices: Vec<PageDevice>,
    /// The one chosen at first: `anatomy plan`'s default.
    pub default_device: usize,
}

/// A device as the page needs it: its figures without their sources' addresses, which a page
/// that requests nothing does not carry (`anatomy plan --device list` has them).
#[derive(Debug, Clone, Serialize)]
pub struct PageDevice {
    pub id: String,
    pub name: String,
    pub memory: u64,
    pub bandwidth: f64,
    pub flops_bf16: Option<f64>,
    pub flops_fp8: Option<f64>,
    pub flops_int8: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PageRuntime {
    pub name: &'static str,
    pub kv_type: &'static str,
    pub memory_fraction: f64,
    /// Per context, then per batch: KV cache, state, compute, overhead bytes.
    pub bytes: Vec<[u64; 4]>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PageFormat {
    pub name: &'static str,
    pub bytes: u64,
    /// Bytes of weights a decode step reads, per batch.
    pub read: Vec<u64>,
    /// Which of the device's matmul rates a prefill runs at: bf16, fp8 or int8.
    pub rate: Rate,
}

/// The formats the page offers.
pub const PAGE_FORMATS: [WeightFormat; 5] = [
    WeightFormat::Bf16,
    WeightFormat::Fp8,
    WeightFormat::Q8_0,
    WeightFormat::Q4K,
    WeightFormat::Int4G128,
];

/// The runtimes the page offers (anatomy's own executor reads checkpoints, not the page's
/// formats).
pub const PAGE_RUNTIMES: [Runtime; 3] = [Runtime::LlamaCpp, Runtime::Vllm, Runtime::Transformers];

pub fn page_table(g: &Graph) -> Result<PageTable> {
    let model_max = g.spec.context.max(1);
    let mut contexts: Vec<u64> = (8..40)
        .map(|p| 1u64 << p)
        .take_while(|&c| c < model_max)
        .collect();
    contexts.push(model_max);
    let batches: Vec<u64> = (0..9).map(|p| 1u64 << p).collect();
    let device = devices::find(DEFAULT_DEVICE).expect("in the table");
    let target = |runtime, f| Target {
        device: device.clone(),
        runtime,
        settings: Settings::default(),
        context: 1,
        batch: 1,
        weights: Weights::Format(f),
        kv: None,
    };
    // On a GPU the graph's facts are the runtimes' alike: one read per format, the first
    // (bf16) serving every runtime.
    let models = PAGE_FORMATS
        .iter()
        .map(|&f| read_model(g, &target(Runtime::LlamaCpp, f)))
        .collect::<Result<Vec<_>>>()?;
    let m = &models[0];
    let mut runtimes = Vec::new();
    for r in PAGE_RUNTIMES {
        let t = target(r, WeightFormat::Bf16);
        let kv = r.default_kv(KvType::Bf16);
        let mut bytes = Vec::new();
        for &c in &contexts {
            for &b in &batches {
                let br = Breakdown::at(
                    m,
                    &Target {
                        batch: b,
                        ..t.clone()
                    },
                    kv,
                    c,
                );
                bytes.push([
                    fit(br.kv, "KV cache")?,
                    fit(br.state, "state")?,
                    fit(br.compute.bytes(), "compute")?,
                    fit(br.overhead, "overhead")?,
                ]);
            }
        }
        runtimes.push(PageRuntime {
            name: r.name(),
            kv_type: kv.name(),
            memory_fraction: r.memory_share(&t.settings),
            bytes,
        });
    }
    let formats = PAGE_FORMATS
        .iter()
        .zip(&models)
        .map(|(&f, m)| {
            Ok(PageFormat {
                name: f.name(),
                bytes: fit(m.weights_total(), "weights")?,
                read: batches.iter().map(|&b| m.read_per_step(b) as u64).collect(),
                rate: rate(&Weights::Format(f)),
            })
        })
        .collect::<Result<_>>()?;
    let with_memory: Vec<PageDevice> = devices::all()
        .into_iter()
        .filter_map(|d| {
            Some(PageDevice {
                memory: d.memory?,
                id: d.id,
                name: d.name,
                bandwidth: d.bandwidth,
                flops_bf16: d.flops_bf16,
                flops_fp8: d.flops_fp8,
                flops_int8: d.flops_int8,
            })
        })
        .collect();
    let prefill_flops = contexts
        .iter()
        .map(|&c| Ok(stats::stats(g, Some(c))?.flops.prefill_per_token))
        .collect::<Result<_>>()?;
    Ok(PageTable {
        contexts,
        batches,
        runtimes,
        formats,
        prefill_flops,
        default_device: with_memory
            .iter()
            .position(|d| d.id == DEFAULT_DEVICE)
            .unwrap_or(0),
        devices: with_memory,
    })
}
