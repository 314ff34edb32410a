//! The API list the bindings' parity tests check (tests/api/surface.json) is core's: every name in
//! it is a public function of core (and the idioms name real ones too).

use std::path::Path;

#[test]
fn every_listed_name_is_a_public_function_of_core() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let list: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root.join("../tests/api/surface.json")).unwrap()).unwrap();
    let mut sources = String::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push_str(&std::fs::read_to_string(path).unwrap());
            }
        }
    }
    let mut names: Vec<String> = Vec::new();
    for key in ["Store", "Session", "Host", "Agent"] {
        names.extend(list[key].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()));
    }
    assert!(names.len() > 25);
    for name in names {
        assert!(sources.contains(&format!("pub fn {name}(")) || sources.contains(&format!("pub fn {name}<")), "core has no public fn {name}");
    }
    for (name, idiom) in list["idioms"].as_object().unwrap() {
        let core = idiom["core"].as_str().unwrap();
        assert!(sources.contains(core), "{name}: core has no {core:?}");
    }
    for name in list["functions"].as_array().unwrap() {
        assert!(list["idioms"].get(name.as_str().unwrap()).is_some(), "{name}: module functions name their core item in idioms");
    }
}
