//! Where `-o/--output` writes, the same in every command: a file for one
//! input, a folder for several (or for one, when it ends in `/` or is a
//! folder already), `-` for standard output.

use std::path::{Path, PathBuf};

/// Said in each command's `--help`.
pub const HELP: &str = "Where the output goes: a file for one input, a folder for several \
     (`NAME.FORMAT` inside; also for one input when it ends in `/` or is a folder), `-` for \
     standard output";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    Stdout,
    File(PathBuf),
    Folder(PathBuf),
}

impl OutputTarget {
    /// What `-o ARG` means for `inputs` inputs.
    pub fn parse(arg: &str, inputs: usize) -> Result<Self, String> {
        if arg == "-" {
            return Ok(Self::Stdout);
        }
        let path = PathBuf::from(arg);
        let says_folder = arg.ends_with('/') || arg.ends_with(std::path::MAIN_SEPARATOR);
        let is_folder = path.is_dir();
        if inputs > 1 {
            if path.exists() && !is_folder {
                return Err(format!(
                    "--output {arg} is a file, and {inputs} inputs need a folder (one file each)"
                ));
            }
            return Ok(Self::Folder(path));
        }
        Ok(if says_folder || is_folder {
            Self::Folder(path)
        } else {
            Self::File(path)
        })
    }

    /// Creates what must exist before writing: the folder, or the file's folder.
    pub fn prepare(&self) -> std::io::Result<()> {
        let dir = match self {
            Self::Stdout => return Ok(()),
            Self::Folder(dir) => dir.as_path(),
            Self::File(file) => match file.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => return Ok(()),
            },
        };
        std::fs::create_dir_all(dir)
    }

    /// The path written for an output called `name` (in a folder), if not standard output.
    pub fn path_for(&self, name: &str) -> Option<PathBuf> {
        match self {
            Self::Stdout => None,
            Self::File(file) => Some(file.clone()),
            Self::Folder(dir) => Some(dir.join(name)),
        }
    }
}

/// Writes `bytes` to `dest` through a temporary file beside it, so a reader
/// (or a crash) never sees half a transcript.
pub fn write_whole(dest: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let tmp = dest.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_input_writes_a_file_several_a_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let existing_file = tmp.path().join("old.srt");
        std::fs::write(&existing_file, "x").unwrap();
        let dir = tmp.path().to_str().unwrap();
        let t = |arg: &str, n| OutputTarget::parse(arg, n);
        assert_eq!(t("-", 3), Ok(OutputTarget::Stdout));
        assert_eq!(t("out.srt", 1), Ok(OutputTarget::File("out.srt".into())));
        assert_eq!(t("subs/", 1), Ok(OutputTarget::Folder("subs/".into())));
        assert_eq!(t(dir, 1), Ok(OutputTarget::Folder(dir.into())));
        assert_eq!(t("subs", 2), Ok(OutputTarget::Folder("subs".into())));
        let err = t(existing_file.to_str().unwrap(), 2).unwrap_err();
        assert!(
            err.contains("is a file, and 2 inputs need a folder"),
            "{err}"
        );
        assert_eq!(
            OutputTarget::File("a/b.srt".into()).path_for("x.srt"),
            Some("a/b.srt".into())
        );
        assert_eq!(
            OutputTarget::Folder("a".into()).path_for("x.srt"),
            Some(PathBuf::from("a/x.srt"))
        );
    }
}
