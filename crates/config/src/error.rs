use std::path::PathBuf;

/// A problem in a system file, located by file and key (`controller.model`, `branch[2].update.h`).
#[derive(Debug, thiserror::Error)]
#[error("{}: {}{message}", file.display(), key.as_ref().map(|k| format!("key `{k}`: ")).unwrap_or_default())]
pub struct ConfigError {
    pub file: PathBuf,
    pub key: Option<String>,
    pub message: String,
}

impl ConfigError {
    pub fn new(file: impl Into<PathBuf>, key: Option<String>, message: impl Into<String>) -> ConfigError {
        ConfigError { file: file.into(), key, message: message.into() }
    }
}
