use std::path::{Path, PathBuf};

/// What went wrong, by whose fault: the user's files and flags ([`CampaignError::Input`],
/// [`CampaignError::Usage`]) or the runner itself ([`CampaignError::Internal`]). Jobs that fail
/// are not errors of the runner: they are recorded in the store with their status.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    /// A campaign or suite file (or a store given as input) is malformed; `key` is the TOML path.
    #[error("{}{}: {message}", file.display(), key.as_ref().map(|k| format!(": {k}")).unwrap_or_default())]
    Input { file: PathBuf, key: Option<String>, message: String },
    /// A flag or argument is malformed (`--shard 4/3`, an unknown export format).
    #[error("{0}")]
    Usage(String),
    /// The runner failed (the store cannot be written, a report cannot be drawn).
    #[error("{0}")]
    Internal(String),
}

impl CampaignError {
    pub fn input(file: &Path, key: Option<String>, message: impl Into<String>) -> CampaignError {
        CampaignError::Input { file: file.to_path_buf(), key, message: message.into() }
    }

    pub fn usage(message: impl Into<String>) -> CampaignError {
        CampaignError::Usage(message.into())
    }

    pub fn internal(message: impl Into<String>) -> CampaignError {
        CampaignError::Internal(message.into())
    }

    /// Input and usage errors are the user's to fix (exit 2); internal ones are the runner's (exit 4).
    pub fn is_input(&self) -> bool {
        !matches!(self, CampaignError::Internal(_))
    }
}

pub type Result<T, E = CampaignError> = std::result::Result<T, E>;
