//! The catalog of downloadable models (`data/catalog.json`, built by
//! `scripts/make-catalog.py`): GGUF speech models with pinned revisions and
//! per-quantisation files with size and sha256.

use serde::{Deserialize, Serialize};

/// Why a catalog file (`UTTER_CATALOG`) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("cannot read the model catalog {}: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("the model catalog {} is not valid: {source}", path.display())]
    Invalid {
        path: std::path::PathBuf,
        source: serde_json::Error,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogFile {
    pub quant: String,
    pub file: String,
    pub size: u64,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogModel {
    /// The name users type (`whisper-base.en`, `parakeet-unified-en-0.6b`).
    pub name: String,
    pub display_name: String,
    /// Repository id on the model hub.
    pub repo: String,
    /// Pinned revision (commit).
    pub revision: String,
    pub arch: String,
    pub family: String,
    pub parameters: Option<String>,
    pub description: String,
    pub license: String,
    pub languages: Vec<String>,
    pub streaming: bool,
    pub translate: bool,
    pub lang_detect: bool,
    pub timestamps: String,
    pub speed_score: Option<u32>,
    pub accuracy_score: Option<u32>,
    pub recommended: bool,
    pub default_quant: String,
    pub files: Vec<CatalogFile>,
}

impl CatalogModel {
    /// The file for `quant`, or the default quantisation.
    pub fn file(&self, quant: Option<&str>) -> Option<&CatalogFile> {
        let wanted = quant.unwrap_or(&self.default_quant);
        self.files
            .iter()
            .find(|f| f.quant.eq_ignore_ascii_case(wanted))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Catalog {
    pub version: u32,
    pub source: String,
    /// `{base}`, `{repo}`, `{revision}`, `{file}` are substituted.
    pub url_template: String,
    pub default_bases: Vec<String>,
    pub models: Vec<CatalogModel>,
}

impl Catalog {
    /// The catalog shipped with this build.
    pub fn builtin() -> Self {
        serde_json::from_str(include_str!("../data/catalog.json"))
            .expect("the built-in catalog is valid")
    }

    /// The catalog at `path` (a company's own list, or a test's), else the
    /// built-in one.
    pub fn load(path: Option<&std::path::Path>) -> Result<Self, CatalogError> {
        let Some(path) = path else {
            return Ok(Self::builtin());
        };
        let text = std::fs::read_to_string(path).map_err(|source| CatalogError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| CatalogError::Invalid {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The model called `name` (or an alias of its name, see [`crate::names`]).
    pub fn find(&self, name: &str) -> Option<&CatalogModel> {
        let name = crate::names::canonical(name);
        self.models.iter().find(|m| m.name == name)
    }

    /// Download URLs for a file, one per base, in order (mirrors after the
    /// primary; a user-set base first).
    pub fn urls(&self, model: &CatalogModel, file: &CatalogFile, bases: &[String]) -> Vec<String> {
        bases
            .iter()
            .map(|base| {
                self.url_template
                    .replace("{base}", base.trim_end_matches('/'))
                    .replace("{repo}", &model.repo)
                    .replace("{revision}", &model.revision)
                    .replace("{file}", &file.file)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_well_formed() {
        let c = Catalog::builtin();
        assert!(c.models.len() >= 60, "{}", c.models.len());
        let mut names = std::collections::HashSet::new();
        for m in &c.models {
            assert!(names.insert(&m.name), "duplicate name {}", m.name);
            assert!(m.repo.contains('/'), "{}: repo {}", m.name, m.repo);
            assert_eq!(m.revision.len(), 40, "{}: revision is a commit", m.name);
            assert!(
                m.file(None).is_some(),
                "{}: default quant {} has no file",
                m.name,
                m.default_quant
            );
            assert!(!m.files.is_empty());
            for f in &m.files {
                assert_eq!(f.sha256.len(), 64, "{}/{}", m.name, f.file);
                assert!(
                    f.sha256.chars().all(|c| c.is_ascii_hexdigit()),
                    "{}/{}",
                    m.name,
                    f.file
                );
                assert!(f.size > 0, "{}/{}", m.name, f.file);
                assert!(f.file.ends_with(".gguf"), "{}/{}", m.name, f.file);
            }
        }
    }

    #[test]
    fn urls_follow_the_template_for_each_base() {
        let c = Catalog::builtin();
        let m = c.models.iter().find(|m| m.arch == "whisper").unwrap();
        let f = m.file(None).unwrap();
        let urls = c.urls(
            m,
            f,
            &[
                "https://mirror.example/".into(),
                "https://huggingface.co".into(),
            ],
        );
        assert_eq!(
            urls[0],
            format!(
                "https://mirror.example/{}/resolve/{}/{}",
                m.repo, m.revision, f.file
            )
        );
        assert!(urls[1].starts_with("https://huggingface.co/"));
    }
}
