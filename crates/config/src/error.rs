use std::path::PathBuf;

/// A problem in a system file, located by file and key (`controller.model`, `branch[2].update.h`).
#[derive(Debug, thiserror::Error)]
#[error("{}: {}{message}", file.display(), key.as_ref().map(|k| format!("key `{k}`: ")).unwrap_or_default())]
pub struct ConfigError {
    /// The system file (as given on the command line).
    pub file: PathBuf,
    /// The key at fault, a TOML path (`state.x.domain`, `branch[2].update.h`); `None` when the
    /// problem is the file as a whole (unreadable, not TOML, an override that does not apply).
    pub key: Option<String>,
    /// What is wrong, one sentence or more; the key is not repeated in it.
    pub message: String,
}

impl ConfigError {
    /// An error in `file`, at `key` when there is one.
    pub fn new(file: impl Into<PathBuf>, key: Option<String>, message: impl Into<String>) -> ConfigError {
        ConfigError { file: file.into(), key, message: message.into() }
    }
}
