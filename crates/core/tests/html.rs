//! The web page's markup: a snapshot of the diagram, and what it must never contain.

use anatomy_core::render::html::{escape, json_for_script, page, PageInput};
use anatomy_core::{graph, source};

fn page_of(model: &str) -> String {
    let loaded = source::load(model, false).unwrap();
    let g = graph::build(&loaded.spec).unwrap();
    page(&PageInput {
        graph: &g,
        provenance: &loaded.origin.describe(),
        context: None,
        values: None,
    })
    .unwrap()
}

#[test]
fn llama_3_2_3b_diagram() {
    let html = page_of("llama-3.2-3b");
    // The block diagram, after the layer strip's own drawing.
    let html = &html[html.find("id=\"diagram\"").unwrap()..];
    let svg = &html[html.find("<svg").unwrap()..html.find("</svg>").unwrap() + 6];
    insta::assert_snapshot!(svg.replace("><", ">\n<"));
}

#[test]
fn self_contained() {
    for model in ["llama-3.1-70b", "deepseek-v3", "gemma-3-27b"] {
        let html = page_of(model);
        for needle in ["http://", "https://", "src=\"", "@import", "url(http"] {
            let hits: Vec<_> = html
                .match_indices(needle)
                .map(|(i, _)| &html[i.saturating_sub(30)..(i + 40).min(html.len())])
                .collect();
            // The only URLs are the SVG and MathML namespaces, which are names, not requests.
            assert!(
                hits.iter().all(|h| h.contains("www.w3.org/2000/svg")
                    || h.contains("www.w3.org/1998/Math/MathML")),
                "{model}: {hits:?}"
            );
        }
    }
}

#[test]
fn escaping() {
    assert_eq!(
        escape("<a href=\"x\">'&'</a>"),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
    let v = serde_json::json!({ "s": "</script><!-- & -->" });
    let out = json_for_script(&v);
    assert!(
        !out.contains('<') && !out.contains('>') && !out.contains('&'),
        "{out}"
    );
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap(), v);
}

/// The compare page escapes what came from the inputs, as the page does.
#[test]
fn compare_page_escapes_model_names() {
    let json = anatomy_core::catalog::get("qwen3-0.6b").unwrap().json;
    let evil = "<img src=x onerror=alert(1)></script>";
    let spec = anatomy_core::families::load_json("x", json, evil, false).unwrap();
    let a = anatomy_core::graph::build(&spec).unwrap();
    let b = anatomy_core::graph::build(
        &anatomy_core::source::load("llama-3.2-1b", false)
            .unwrap()
            .spec,
    )
    .unwrap();
    let d = anatomy_core::diff::diff(&a, &b).unwrap();
    let html =
        anatomy_core::render::html::compare::page(&a, &b, &d, ("file: <x>", "catalog")).unwrap();
    assert!(!html.contains("<img src=x"), "raw markup in the page");
    assert!(!html.contains("</script>\",") && html.matches("</script>").count() == 2);
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

/// Configs of sizes and keys no catalog entry has (random toy configs of the hybrid families,
/// and each model type's defaults as transformers saves them) render a page, panicking nowhere:
/// an Inkling 2 whose layers all slide once panicked in the code of its attention box. A config
/// anatomy refuses says why; that is not this test's business.
#[test]
fn held_out_configs_render_a_page() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut drawn = 0;
    for dir in ["unseen", "saved"] {
        for f in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = f.unwrap().path();
            let Ok(loaded) = source::load(path.to_str().unwrap(), false) else {
                continue;
            };
            let g = graph::build(&loaded.spec).unwrap();
            let input = PageInput {
                graph: &g,
                provenance: "a held-out config",
                context: None,
                values: None,
            };
            assert!(page(&input).is_ok(), "{}", path.display());
            drawn += 1;
        }
    }
    assert!(drawn >= 300, "pages of {drawn} held-out configs");
}

/// An image's tower says how the image runs through it and joins the language model, with the
/// model's numbers: Qwen3-VL's token per 32×32 pixels, its M-RoPE split and deep-stack blocks;
/// Llama 4's tiles, features per tile and pixel shuffle.
#[test]
fn an_image_towers_page_says_how_its_image_joins() {
    let loaded = source::load("qwen3-vl-4b-instruct", false).unwrap();
    let Some(anatomy_core::spec::ImageEncoder::Qwen3Vl(q)) =
        loaded.spec.image.as_ref().map(|i| &i.encoder)
    else {
        panic!("Qwen3-VL runs no image: {:?}", loaded.spec.image)
    };
    let html = page_of("qwen3-vl-4b-instruct");
    let f = q.base.factor();
    for said in [
        format!("a token per {f}×{f} pixels"),
        format!(
            "pairs split {:?} among them, interleaved",
            q.base.mrope.sections
        ),
        format!("outputs of blocks {:?}", q.deepstack),
    ] {
        assert!(html.contains(&said), "{said}");
    }
    // Llama 4 Scout's: tiles of its tower's side, each tile's features, its shuffle.
    let loaded = source::load("llama-4-scout-17b-16e", false).unwrap();
    let Some(anatomy_core::spec::ImageEncoder::Llama4(l)) =
        loaded.spec.image.as_ref().map(|i| &i.encoder)
    else {
        panic!("Llama 4 runs no image: {:?}", loaded.spec.image)
    };
    let html = page_of("llama-4-scout-17b-16e");
    let side = l.tower.image;
    for said in [
        format!("tiles of {side}×{side} pixels"),
        format!("each tile's {} features", l.features()),
        format!("each {0}×{0} patches are shuffled", l.shuffle),
    ] {
        assert!(html.contains(&said), "{said}");
    }
}
