//! The app's folders for one test: everything in a temporary directory but
//! the models, which come from the store the real-model tests share.
//! Included by each app test binary, which may leave part of it unused.
#![allow(dead_code)]

use std::path::Path;

use utter_app_core::Paths;

pub struct AppDirs {
    /// Where everything but the models is; removed with it.
    pub dir: tempfile::TempDir,
    pub paths: Paths,
}

pub fn app_dirs(models: &Path) -> AppDirs {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        settings: dir.path().join("config/settings.json"),
        history: dir.path().join("data/history.sqlite3"),
        recordings: dir.path().join("data/recordings"),
        meetings: dir.path().join("data/meetings"),
        models: models.to_path_buf(),
        cache: dir.path().join("cache"),
        catalog: None,
    };
    AppDirs { dir, paths }
}
