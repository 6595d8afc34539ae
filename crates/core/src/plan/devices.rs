//! Accelerators and CPUs the planner knows by name: memory, memory bandwidth and peak dense
//! matmul throughput per dtype, as their makers' datasheets state them (no sparsity).

use serde::Serialize;

/// Where a device's memory sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Memory of its own, beside the host's RAM: llama.cpp offloads layers to it.
    Gpu,
    /// One memory for CPU and GPU (Apple's).
    Unified,
    /// The host's RAM.
    Cpu,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Device {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    /// Bytes the device holds; `None` where it is the machine's choice (a CPU's RAM).
    pub memory: Option<u64>,
    /// Bytes per second.
    pub bandwidth: f64,
    /// Dense matmul FLOP/s at 16-bit floats (bf16 or fp16), 8-bit floats and 8-bit integers;
    /// `None` where the maker does not state one or the device lacks the type.
    pub flops_bf16: Option<f64>,
    pub flops_fp8: Option<f64>,
    pub flops_int8: Option<f64>,
    /// Where the figures come from.
    pub source: String,
}

const GIB: f64 = (1u64 << 30) as f64;
const GB_S: f64 = 1e9;
const TFLOPS: f64 = 1e12;

/// (id, name, kind, memory GiB, bandwidth GB/s, bf16, fp8, int8 TFLOP/s, source).
type Row = (
    &'static str,
    &'static str,
    Kind,
    Option<f64>,
    f64,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    &'static str,
);

const TABLE: &[Row] = &[
    ("b200", "NVIDIA B200 (HGX)", Kind::Gpu, Some(180.0), 8000.0, Some(2250.0), Some(4500.0), Some(4500.0),
        "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200, per GPU: 1.4 TB over 8, 64 TB/s over 8; dense = half the sparse figures)"),
    ("h200", "NVIDIA H200 SXM", Kind::Gpu, Some(141.0), 4800.0, Some(989.0), Some(1979.0), Some(1979.0),
        "https://www.nvidia.com/en-us/data-center/h200/ (dense = half the sparse figures)"),
    ("h100-sxm", "NVIDIA H100 SXM", Kind::Gpu, Some(80.0), 3350.0, Some(989.0), Some(1979.0), Some(1979.0),
        "https://www.nvidia.com/en-us/data-center/h100/ (dense = half the sparse figures)"),
    ("h100-pcie", "NVIDIA H100 PCIe", Kind::Gpu, Some(80.0), 2000.0, Some(756.0), Some(1513.0), Some(1513.0),
        "https://www.nvidia.com/en-us/data-center/h100/ (H100 NVL column for PCIe bandwidth excluded; dense = half the sparse figures)"),
    ("a100-80g", "NVIDIA A100 80GB SXM", Kind::Gpu, Some(80.0), 2039.0, Some(312.0), None, Some(624.0),
        "https://www.nvidia.com/en-us/data-center/a100/ (no fp8 units)"),
    ("l40s", "NVIDIA L40S", Kind::Gpu, Some(48.0), 864.0, Some(362.0), Some(733.0), Some(733.0),
        "https://www.nvidia.com/en-us/data-center/l40s/ (dense = half the sparse figures)"),
    ("l4", "NVIDIA L4", Kind::Gpu, Some(24.0), 300.0, Some(121.0), Some(242.5), Some(242.5),
        "https://www.nvidia.com/en-us/data-center/l4/ (dense = half the sparse figures)"),
    ("rtx-4090", "NVIDIA GeForce RTX 4090", Kind::Gpu, Some(24.0), 1008.0, Some(165.2), Some(330.3), Some(660.6),
        "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix table 2 (fp16 and fp8 with fp32 accumulate, dense)"),
    ("rtx-3090", "NVIDIA GeForce RTX 3090", Kind::Gpu, Some(24.0), 936.0, Some(71.0), None, Some(284.0),
        "NVIDIA Ampere GA102 GPU architecture whitepaper, table 9 (fp16 with fp32 accumulate, dense; no fp8 units)"),
    ("mi300x", "AMD Instinct MI300X", Kind::Gpu, Some(192.0), 5300.0, Some(1307.4), Some(2614.9), Some(2614.9),
        "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html (dense)"),
    ("m4-max", "Apple M4 Max (128 GB)", Kind::Unified, Some(128.0), 546.0, None, None, None,
        "https://www.apple.com/macbook-pro/specs/ (unified memory; Apple states no FLOP/s; Metal lets the GPU use about 75% of it by default)"),
    ("m3-ultra", "Apple M3 Ultra (512 GB)", Kind::Unified, Some(512.0), 819.0, None, None, None,
        "https://www.apple.com/mac-studio/specs/ (unified memory; Apple states no FLOP/s)"),
    ("epyc-9654", "AMD EPYC 9654, 12 channels DDR5-4800", Kind::Cpu, None, 460.8, None, None, None,
        "12 channels × 8 bytes × 4800 MT/s (AMD's 4th-gen EPYC datasheet); RAM as installed: give --memory"),
    ("xeon-8480", "Intel Xeon Platinum 8480+, 8 channels DDR5-4800", Kind::Cpu, None, 307.2, None, None, None,
        "8 channels × 8 bytes × 4800 MT/s (ark.intel.com); RAM as installed: give --memory"),
    ("ddr5-2ch", "A desktop CPU with 2 channels of DDR5-5600", Kind::Cpu, None, 89.6, None, None, None,
        "2 channels × 8 bytes × 5600 MT/s; RAM as installed: give --memory"),
];

/// Every device of the table.
pub fn all() -> Vec<Device> {
    TABLE
        .iter()
        .map(
            |&(id, name, kind, mem, bw, bf16, fp8, int8, source)| Device {
                id: id.to_string(),
                name: name.to_string(),
                kind,
                memory: mem.map(|g| (g * GIB) as u64),
                bandwidth: bw * GB_S,
                flops_bf16: bf16.map(|t| t * TFLOPS),
                flops_fp8: fp8.map(|t| t * TFLOPS),
                flops_int8: int8.map(|t| t * TFLOPS),
                source: source.to_string(),
            },
        )
        .collect()
}

/// The device with this id, or `None`.
pub fn find(id: &str) -> Option<Device> {
    all().into_iter().find(|d| d.id.eq_ignore_ascii_case(id))
}

/// The ids, for an error's list of what is valid.
pub fn ids() -> String {
    TABLE.iter().map(|r| r.0).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_found() {
        let all = all();
        for d in &all {
            assert_eq!(all.iter().filter(|e| e.id == d.id).count(), 1, "{}", d.id);
            assert_eq!(find(&d.id.to_uppercase()).as_ref(), Some(d));
            assert!(d.bandwidth > 0.0 && !d.source.is_empty(), "{}", d.id);
        }
    }
}
