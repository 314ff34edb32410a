//! How a command fails: one line on stderr (`sna: …`) and exit status 1. An empty message means
//! there is nothing left to say (the reader of stdout went away) and the exit status is 0.

/// A failure: its message is printed as one line.
pub struct Failure(pub String);

impl From<sna_history::Error> for Failure {
    fn from(e: sna_history::Error) -> Self {
        Failure(e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // The reader went away (`sna show … | head`): nothing left to say.
            return Failure(String::new());
        }
        Failure(e.to_string())
    }
}

/// What a command returns.
pub type Outcome = Result<(), Failure>;

impl Failure {
    /// A command this build left out (`sna serve` built without the `serve` feature).
    #[cfg_attr(all(feature = "serve", feature = "acp"), allow(dead_code))]
    pub fn without_feature(command: &str) -> Self {
        Failure(format!(
            "this sna was built without the `{command}` feature, so `sna {command}` is not in it: build sna-cli with its default features (or --features {command})"
        ))
    }
}
