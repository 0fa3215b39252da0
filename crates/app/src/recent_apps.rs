//! The apps the user dictated into lately, newest first, for Settings →
//! Apps (one click makes a profile for one of them). Kept in memory: the
//! list is a convenience, not history.

use serde::Serialize;

/// How many apps the list keeps.
const KEEP: usize = 20;

/// An app dictated into, and the profile its last dictation followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct RecentApp {
    pub app: String,
    pub profile: Option<String>,
}

#[derive(Debug, Default)]
pub struct RecentApps(Vec<RecentApp>);

impl RecentApps {
    /// `app` was just dictated into, following `profile`.
    pub fn note(&mut self, app: &str, profile: Option<&str>) {
        self.0.retain(|r| r.app != app);
        self.0.insert(
            0,
            RecentApp {
                app: app.to_string(),
                profile: profile.map(str::to_string),
            },
        );
        self.0.truncate(KEEP);
    }

    pub fn list(&self) -> Vec<RecentApp> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_first_without_repeats_and_bounded() {
        let mut recent = RecentApps::default();
        recent.note("XTerm", Some("X terminals (Shift+Insert)"));
        recent.note("firefox", None);
        recent.note("XTerm", None);
        let apps: Vec<_> = recent
            .list()
            .into_iter()
            .map(|r| (r.app, r.profile))
            .collect();
        assert_eq!(
            apps,
            [("XTerm".to_string(), None), ("firefox".to_string(), None)]
        );
        for i in 0..30 {
            recent.note(&format!("app{i}"), None);
        }
        assert_eq!(recent.list().len(), KEEP);
        assert_eq!(recent.list()[0].app, "app29");
    }
}
