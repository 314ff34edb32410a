//! The server and the ACP agent are Cargo features of sna-cli, on by default. A build without one
//! keeps the command in `--help` and fails at once, naming the feature; a build with it runs it.
//! (`cargo test -p sna-cli --no-default-features` runs the first half.)

use std::process::Command;

fn sna(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_sna")).args(["--db"]).arg(dir.path().join("history.db")).args(args).env("HOME", dir.path()).output().unwrap()
}

fn help() -> String {
    String::from_utf8(sna(&["--help"]).stdout).unwrap()
}

#[cfg(not(feature = "serve"))]
#[test]
fn serve_without_the_feature_says_so() {
    let out = sna(&["serve", "--port", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("built without the `serve` feature") && err.lines().count() == 1, "{err}");
    assert!(out.stdout.is_empty());
    assert!(help().contains("  serve "), "still listed");
}

#[cfg(not(feature = "acp"))]
#[test]
fn acp_without_the_feature_says_so() {
    let out = sna(&["acp"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("built without the `acp` feature") && err.lines().count() == 1, "{err}");
    assert!(out.stdout.is_empty(), "nothing on the protocol's stream");
    assert!(help().contains("  acp "), "still listed");
}

/// With the features, the commands are there: an argument error is clap's (exit 2), not the
/// missing feature.
#[cfg(all(feature = "serve", feature = "acp"))]
#[test]
fn with_the_features_the_commands_run() {
    for args in [["serve", "--port", "not-a-port"], ["acp", "--permission-mode", "nonsense"]] {
        let out = sna(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!String::from_utf8(out.stderr).unwrap().contains("feature"), "{args:?}");
    }
    assert!(help().contains("  serve ") && help().contains("  acp "));
}
