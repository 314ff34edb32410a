//! Parses each benchmark input (`bench_cli inputs`) with serde_json configured as sna-history
//! configures it (order kept, numbers kept as written), sonic-rs and simd-json, the way an import
//! reads: one record at a time, parsed then dropped. Prints the best of 5 runs of each, and for the
//! parsers that can fill a `serde_json::Value` how many records then serialize back otherwise than
//! they were written (what an import must never do).
//!
//! `cargo run --release --manifest-path scripts/parsers/Cargo.toml -- FILE...`

use std::time::Instant;

fn records(bytes: &[u8], jsonl: bool) -> Vec<&[u8]> {
    if jsonl {
        bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect()
    } else {
        vec![bytes]
    }
}

fn best(mut run: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    // Numbers as runtimes may write them: serde_json (as configured) writes each back as it was.
    let tricky = br#"{"z":1,"a":1.10,"b":1e5,"c":123456789012345678901234567890,"d":-0.0,"e":0.1}"#;
    let back = |v: serde_json::Value| serde_json::to_string(&v).unwrap();
    println!("numbers as written:        {}", String::from_utf8_lossy(tricky));
    println!("  serde_json (ours) back:  {}", back(serde_json::from_slice(tricky).unwrap()));
    println!("  sonic-rs back:           {}", sonic_rs::from_slice::<serde_json::Value>(tricky).map(back).unwrap_or_else(|e| format!("error: {e}")));
    println!("  simd-json back:          {}", simd_json::serde::from_slice::<serde_json::Value>(&mut tricky.to_vec()).map(back).unwrap_or_else(|e| format!("error: {e}")));
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        let jsonl = path.ends_with(".jsonl");
        let recs = records(&bytes, jsonl);
        let mb = bytes.len() as f64 / 1e6;
        println!("{path}: {:.1} MB, {} records", mb, recs.len());
        let show = |name: &str, ms: f64| println!("  {name:<44} {ms:7.1} ms  {:6.0} MB/s", mb / ms * 1e3);
        show("serde_json -> serde_json::Value (ours)", best(|| recs.iter().for_each(|r| drop(serde_json::from_slice::<serde_json::Value>(r).unwrap()))));
        show("sonic-rs -> sonic_rs::Value", best(|| recs.iter().for_each(|r| drop(sonic_rs::from_slice::<sonic_rs::Value>(r).unwrap()))));
        show("simd-json -> simd_json::OwnedValue", best(|| recs.iter().for_each(|r| drop(simd_json::to_owned_value(&mut r.to_vec()).unwrap()))));
        show("sonic-rs -> serde_json::Value", best(|| recs.iter().for_each(|r| drop(sonic_rs::from_slice::<serde_json::Value>(r).unwrap()))));
        show("simd-json -> serde_json::Value", best(|| recs.iter().for_each(|r| drop(simd_json::serde::from_slice::<serde_json::Value>(&mut r.to_vec()).unwrap()))));
        // Fidelity: a record parsed into serde_json::Value and written compact again, against serde_json's own.
        let differ = |parse: &dyn Fn(&[u8]) -> serde_json::Value| {
            recs.iter()
                .filter(|r| {
                    let ours = serde_json::to_string(&serde_json::from_slice::<serde_json::Value>(r).unwrap()).unwrap();
                    serde_json::to_string(&parse(r)).unwrap() != ours
                })
                .count()
        };
        println!("  records written back otherwise than serde_json's: sonic-rs {}, simd-json {}", differ(&|r| sonic_rs::from_slice(r).unwrap()), differ(&|r| simd_json::serde::from_slice(&mut r.to_vec()).unwrap()));
    }
}
