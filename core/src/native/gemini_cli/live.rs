//! The live driver: `gemini --acp` kept alive (being written).

use crate::error::{Error, Result};
use crate::native::live::{Live, LiveSpec, Sink};

/// Starts `gemini --acp` for one session.
pub(super) fn start(_spec: LiveSpec, _sink: Sink) -> Result<Box<dyn Live>> {
    Err(Error::Unsupported("the Gemini CLI live driver is not written yet".into()))
}
