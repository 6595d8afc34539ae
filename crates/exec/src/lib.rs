//! anatomy-exec: runs a model as its Spec and Graph describe it, on candle tensors on the CPU,
//! with weights from safetensors or GGUF (dequantized to f32), looked up by the Graph's own
//! checkpoint names.

pub mod model;
pub mod npy;
pub mod weights;

pub use model::{Cache, Model};
