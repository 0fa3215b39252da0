//! What was said, kept in SQLite: every dictation, file transcription and
//! meeting with its text, time, length, model, language and audio (a
//! meeting's is its folder, which stays the Meetings page's). WAL journal (a crash
//! after a commit loses nothing), a schema version in `PRAGMA user_version`
//! and forward-only migrations.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

pub use utter_core::dictation::rewrite_step::RewriteReport;

/// Each step takes the schema from version `i` to `i + 1`. Never edit a
/// released step: append a new one.
const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    "CREATE TABLE entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        model TEXT NOT NULL,
        language TEXT,
        audio_path TEXT
    );",
    // 2: file transcriptions keep their source name and timed segments.
    "ALTER TABLE entries ADD COLUMN source_name TEXT;
     ALTER TABLE entries ADD COLUMN segments_json TEXT;
     CREATE INDEX entries_created ON entries(created_ms);",
    // 3: a dictation whose transcription failed is kept with the reason (for
    // a retry); post-processed text keeps the engine's own text alongside.
    "ALTER TABLE entries ADD COLUMN error TEXT;
     ALTER TABLE entries ADD COLUMN raw_text TEXT;",
    // 4: a dictation the AI rewrote keeps the dictated text and the model
    // (or why the dictated text was kept), as JSON.
    "ALTER TABLE entries ADD COLUMN rewrite_json TEXT;",
    // 5: speech the engine could not turn into text is listed with the
    // entry ("N s of speech could not be transcribed"), never dropped silently.
    "ALTER TABLE entries ADD COLUMN warning TEXT;",
    // 6: meetings are listed (kind 'meeting', their folder as audio_path);
    // one the user deleted from History is remembered, never added again.
    "CREATE TABLE dismissed_meetings (folder TEXT PRIMARY KEY);",
];

pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("history database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("history database was written by a newer Utter (schema {found}, this one knows {SCHEMA_VERSION})")]
    TooNew { found: u32 },
    #[error("history database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("cannot move the damaged history {path} aside: {source}")]
    MoveAside {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum EntryKind {
    Dictation,
    File,
    /// A meeting's transcript, each line `Speaker: words`; its audio path is
    /// the meeting's folder.
    Meeting,
}

impl EntryKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Dictation => "dictation",
            Self::File => "file",
            Self::Meeting => "meeting",
        }
    }

    fn from_column(kind: &str) -> Self {
        match kind {
            "file" => Self::File,
            "meeting" => Self::Meeting,
            _ => Self::Dictation,
        }
    }
}

/// A piece of a transcript with its times in the source audio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Segment {
    pub start_ms: i64,
    pub end_ms: i64,
    pub text: String,
    /// Who speaks it, where the speakers were told apart (a meeting, a file
    /// transcribed with speakers). Absent from entries kept before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub speaker: Option<String>,
}

/// What an entry records: what [`History::add`] writes and every read
/// gives back inside an [`Entry`].
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct EntryRecord {
    pub kind: EntryKind,
    pub text: String,
    pub created_ms: i64,
    pub duration_ms: i64,
    pub model: String,
    pub language: Option<String>,
    /// The recording (dictations) or the source file; `None` once
    /// retention has deleted a dictation's audio.
    #[ts(type = "string | null")]
    pub audio_path: Option<PathBuf>,
    pub source_name: Option<String>,
    /// Why the transcription failed; `text` is what was transcribed before.
    pub error: Option<String>,
    /// The engine's text, where post-processing changed it.
    pub raw_text: Option<String>,
    /// Set when the AI rewrite ran: the text as dictated, and the model
    /// that rewrote it (or why the dictated text was kept).
    pub rewrite: Option<RewriteReport>,
    /// Speech that is missing from `text` though the voice detector heard
    /// it ("N s of speech could not be transcribed").
    pub warning: Option<String>,
}

/// A stored entry.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Entry {
    pub id: i64,
    #[serde(flatten)]
    #[ts(flatten)]
    pub record: EntryRecord,
}

const COLUMNS: &str =
    "id, kind, text, created_ms, duration_ms, model, language, audio_path, source_name, error, raw_text, rewrite_json, warning";

fn entry(row: &Row) -> rusqlite::Result<Entry> {
    let kind: String = row.get(1)?;
    let audio_path: Option<String> = row.get(7)?;
    Ok(Entry {
        id: row.get(0)?,
        record: EntryRecord {
            kind: EntryKind::from_column(&kind),
            text: row.get(2)?,
            created_ms: row.get(3)?,
            duration_ms: row.get(4)?,
            model: row.get(5)?,
            language: row.get(6)?,
            audio_path: audio_path.map(PathBuf::from),
            source_name: row.get(8)?,
            error: row.get(9)?,
            raw_text: row.get(10)?,
            // Written by this code as JSON; anything unreadable is left out.
            rewrite: row
                .get::<_, Option<String>>(11)?
                .and_then(|json| serde_json::from_str(&json).ok()),
            warning: row.get(12)?,
        },
    })
}

pub struct History {
    conn: Connection,
}

/// Opens the history; a file that cannot be read as one (truncated, garbage)
/// is moved aside (never deleted) and a new history is started. Returns the
/// history and, when that happened, what to tell the user. A history written
/// by a newer Utter is left alone and refused.
pub fn open_or_start_anew(path: &Path) -> Result<(History, Option<String>), HistoryError> {
    match History::open(path) {
        Ok(h) => Ok((h, None)),
        Err(e @ HistoryError::TooNew { .. }) => Err(e),
        Err(e) => {
            let backup = path.with_extension(format!(
                "corrupt-{}.sqlite3",
                utter_core::dictation::record_log::unix_ms()
            ));
            tracing::warn!(
                "history {} unusable ({e}); moving it to {}",
                path.display(),
                backup.display()
            );
            std::fs::rename(path, &backup).map_err(|source| HistoryError::MoveAside {
                path: path.to_path_buf(),
                source,
            })?;
            // The WAL and shared-memory files belong to the damaged database.
            for suffix in ["-wal", "-shm"] {
                let mut side = path.as_os_str().to_owned();
                side.push(suffix);
                let _ = std::fs::remove_file(side);
            }
            let history = History::open(path)?;
            Ok((
                history,
                Some(format!(
                    "Your history could not be read ({e}). It was kept as {} and a new history was started; your recordings are still in their folder.",
                    backup.display()
                )),
            ))
        }
    }
}

impl History {
    pub fn open(path: &Path) -> Result<Self, HistoryError> {
        let open_err = |source| HistoryError::Open {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let mut conn = Connection::open(path).map_err(open_err)?;
        // WAL + NORMAL: a committed transaction survives a crash of the app;
        // readers never block the writer.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_err)?;
        migrate(&mut conn, SCHEMA_VERSION)?;
        Ok(Self { conn })
    }

    pub fn schema_version(&self) -> Result<u32, HistoryError> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    /// Stores `new` with a file's timed `segments` (none for a dictation).
    pub fn add(&self, new: &EntryRecord, segments: &[Segment]) -> Result<Entry, HistoryError> {
        let segments = (!segments.is_empty())
            .then(|| serde_json::to_string(segments).expect("segments serialise"));
        let rewrite = new
            .rewrite
            .as_ref()
            .map(|r| serde_json::to_string(r).expect("a rewrite report serialises"));
        self.conn.execute(
            "INSERT INTO entries (kind, text, created_ms, duration_ms, model, language, audio_path, source_name, segments_json, error, raw_text, rewrite_json, warning)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                new.kind.as_str(),
                new.text,
                new.created_ms,
                new.duration_ms,
                new.model,
                new.language,
                new.audio_path.as_ref().map(|p| p.display().to_string()),
                new.source_name,
                segments,
                new.error,
                new.raw_text,
                rewrite,
                new.warning,
            ],
        )?;
        let id = self.conn.last_insert_rowid();
        Ok(self.get(id)?.expect("just inserted"))
    }

    pub fn get(&self, id: i64) -> Result<Option<Entry>, HistoryError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM entries WHERE id = ?1"),
                [id],
                entry,
            )
            .optional()?)
    }

    pub fn segments(&self, id: i64) -> Result<Vec<Segment>, HistoryError> {
        let json: Option<String> = self
            .conn
            .query_row(
                "SELECT segments_json FROM entries WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        Ok(json
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default())
    }

    /// Newest first. `query` matches anywhere in the text or the source name,
    /// case-insensitively (ASCII).
    pub fn list(
        &self,
        query: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<Entry>, HistoryError> {
        let pattern = query.filter(|q| !q.trim().is_empty()).map(|q| {
            let escaped = q
                .trim()
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            format!("%{escaped}%")
        });
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM entries
             WHERE ?1 IS NULL OR text LIKE ?1 ESCAPE '\\' OR source_name LIKE ?1 ESCAPE '\\'
             ORDER BY created_ms DESC, id DESC LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(params![pattern, limit, offset], entry)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Replaces an entry's text after a successful retry (which clears a
    /// failure).
    pub fn update_text(
        &self,
        id: i64,
        text: &str,
        raw_text: Option<&str>,
        model: &str,
        segments: &[Segment],
    ) -> Result<Option<Entry>, HistoryError> {
        let segments =
            (!segments.is_empty()).then(|| serde_json::to_string(segments).expect("serialise"));
        self.conn.execute(
            "UPDATE entries SET text = ?2, raw_text = ?3, model = ?4, segments_json = ?5, error = NULL, warning = NULL
             WHERE id = ?1",
            params![id, text, raw_text, model, segments],
        )?;
        self.get(id)
    }

    /// The dictation recorded in this audio file, if History has it.
    pub fn dictation_with_audio(&self, audio: &Path) -> Result<Option<Entry>, HistoryError> {
        self.latest_with_audio(EntryKind::Dictation, audio)
    }

    /// The meeting kept from this folder, if History has it.
    pub fn meeting_in(&self, dir: &Path) -> Result<Option<Entry>, HistoryError> {
        self.latest_with_audio(EntryKind::Meeting, dir)
    }

    /// The newest entry of `kind` whose audio is `path`.
    fn latest_with_audio(
        &self,
        kind: EntryKind,
        path: &Path,
    ) -> Result<Option<Entry>, HistoryError> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM entries WHERE kind = ?1 AND audio_path = ?2
                     ORDER BY id DESC LIMIT 1"
                ),
                [kind.as_str(), &path.display().to_string()],
                entry,
            )
            .optional()?)
    }

    /// Keeps a meeting's transcript: a new entry, or the one already kept
    /// from the same folder brought up to date (transcribed again, a speaker
    /// renamed). Its time stays when the meeting was held. `None`: the user
    /// deleted this meeting from History, and it stays out.
    pub fn keep_meeting(
        &self,
        new: &EntryRecord,
        segments: &[Segment],
    ) -> Result<Option<Entry>, HistoryError> {
        let dir = new.audio_path.as_deref().expect("a meeting's folder");
        if self.meeting_dismissed(dir)? {
            return Ok(None);
        }
        let Some(kept) = self.meeting_in(dir)? else {
            return self.add(new, segments).map(Some);
        };
        let segments =
            (!segments.is_empty()).then(|| serde_json::to_string(segments).expect("serialise"));
        self.conn.execute(
            "UPDATE entries SET text = ?2, duration_ms = ?3, model = ?4, language = ?5,
                 source_name = ?6, segments_json = ?7, warning = ?8, error = NULL
             WHERE id = ?1",
            params![
                kept.id,
                new.text,
                new.duration_ms,
                new.model,
                new.language,
                new.source_name,
                segments,
                new.warning
            ],
        )?;
        self.get(kept.id)
    }

    /// Whether the user deleted the meeting of this folder from History.
    pub fn meeting_dismissed(&self, dir: &Path) -> Result<bool, HistoryError> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM dismissed_meetings WHERE folder = ?1",
                [dir.display().to_string()],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Deletes an entry and its audio file.
    pub fn delete(&self, id: i64) -> Result<Option<Entry>, HistoryError> {
        let Some(found) = self.get(id)? else {
            return Ok(None);
        };
        self.conn
            .execute("DELETE FROM entries WHERE id = ?1", [id])?;
        // A dictation's audio is ours; a transcribed file is the user's; a
        // meeting's folder stays the Meetings page's, and the meeting stays
        // out of History (nothing adds it back).
        match (found.record.kind, &found.record.audio_path) {
            (EntryKind::Dictation, Some(audio)) => remove_audio(audio),
            (EntryKind::Meeting, Some(dir)) => {
                self.conn.execute(
                    "INSERT OR IGNORE INTO dismissed_meetings (folder) VALUES (?1)",
                    [dir.display().to_string()],
                )?;
            }
            _ => {}
        }
        Ok(Some(found))
    }

    /// Retention: deletes the audio of entries created before `cutoff_ms`
    /// (their text stays). Returns how many audio files went.
    pub fn prune_audio(&self, cutoff_ms: i64) -> Result<usize, HistoryError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, audio_path FROM entries WHERE created_ms < ?1 AND audio_path IS NOT NULL AND kind = 'dictation'",
        )?;
        let old: Vec<(i64, String)> = stmt
            .query_map([cutoff_ms], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (id, audio) in &old {
            remove_audio(Path::new(audio));
            self.conn
                .execute("UPDATE entries SET audio_path = NULL WHERE id = ?1", [id])?;
        }
        Ok(old.len())
    }
}

/// A dictation's WAV and its sidecar go together.
fn remove_audio(path: &Path) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(path.with_extension("json"));
}

/// Applies the migrations from the database's version up to `target` in one
/// transaction each.
fn migrate(conn: &mut Connection, target: u32) -> Result<(), HistoryError> {
    let found: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(HistoryError::TooNew { found });
    }
    for version in found..target {
        let tx = conn.transaction()?;
        tx.execute_batch(MIGRATIONS[version as usize])?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
        tracing::info!("history schema migrated to version {}", version + 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dictation(text: &str, created_ms: i64, audio: Option<PathBuf>) -> EntryRecord {
        EntryRecord {
            kind: EntryKind::Dictation,
            text: text.into(),
            created_ms,
            duration_ms: 1500,
            model: "tiny.en".into(),
            language: Some("en".into()),
            audio_path: audio,
            source_name: None,
            error: None,
            raw_text: None,
            rewrite: None,
            warning: None,
        }
    }

    #[test]
    fn a_meeting_is_one_entry_brought_up_to_date_and_deleting_it_keeps_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::open(&dir.path().join("h.sqlite3")).unwrap();
        let folder = dir.path().join("meeting-1");
        std::fs::create_dir(&folder).unwrap();
        let meeting = |text: &str| EntryRecord {
            kind: EntryKind::Meeting,
            duration_ms: 60_000,
            ..dictation(text, 5000, Some(folder.clone()))
        };
        let said = [Segment {
            start_ms: 0,
            end_ms: 900,
            text: "hello".into(),
            speaker: Some("You".into()),
        }];
        let first = h
            .keep_meeting(&meeting("You: hello\nSpeaker 1: hi"), &said)
            .unwrap()
            .unwrap();
        let again = h
            .keep_meeting(&meeting("You: hello\nAnn: hi"), &said)
            .unwrap()
            .unwrap();
        assert_eq!(again.id, first.id, "the same meeting, not a second entry");
        assert_eq!(again.record.kind, EntryKind::Meeting);
        assert_eq!(again.record.text, "You: hello\nAnn: hi");
        assert_eq!(again.record.created_ms, 5000, "when it was held");
        assert_eq!(h.list(Some("Ann"), 10, 0).unwrap().len(), 1);
        assert_eq!(h.segments(first.id).unwrap(), said);
        // A dictation's audio at the same path is another entry's business.
        assert!(h.dictation_with_audio(&folder).unwrap().is_none());
        h.delete(first.id).unwrap();
        assert!(h.meeting_in(&folder).unwrap().is_none());
        assert!(folder.is_dir(), "the Meetings page's folder stays");
        // Deleted, it stays out: transcribed again or renamed, it is not added back.
        assert!(h.meeting_dismissed(&folder).unwrap());
        assert_eq!(h.keep_meeting(&meeting("You: again"), &said).unwrap(), None);
        assert!(h.list(Some("again"), 10, 0).unwrap().is_empty());
    }

    #[test]
    fn a_failed_dictation_is_found_by_its_audio_and_a_retry_clears_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::open(&dir.path().join("h.sqlite3")).unwrap();
        let wav = dir.path().join("dictation-1.wav");
        let failed = h
            .add(
                &EntryRecord {
                    error: Some("the speech engine crashed twice on this audio".into()),
                    ..dictation("", 1000, Some(wav.clone()))
                },
                &[],
            )
            .unwrap();
        assert_eq!(
            failed.record.error.as_deref(),
            Some("the speech engine crashed twice on this audio")
        );
        let found = h.dictation_with_audio(&wav).unwrap().unwrap();
        assert_eq!(found.id, failed.id);
        assert!(h
            .dictation_with_audio(&dir.path().join("other.wav"))
            .unwrap()
            .is_none());
        let retried = h
            .update_text(
                failed.id,
                "Hello, world.",
                Some("hello world"),
                "tiny.en",
                &[],
            )
            .unwrap()
            .unwrap();
        assert_eq!(retried.record.error, None);
        assert_eq!(retried.record.text, "Hello, world.");
        assert_eq!(retried.record.raw_text.as_deref(), Some("hello world"));
    }

    #[test]
    fn a_rewritten_dictation_keeps_the_dictated_text_and_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::open(&dir.path().join("h.sqlite3")).unwrap();
        let report = RewriteReport {
            mode: "clean-up".into(),
            dictated: "um send the the report".into(),
            selection: None,
            model: Some("llama3.2:3b".into()),
            notice: None,
            ms: 420,
        };
        let kept = RewriteReport {
            model: None,
            notice: Some(utter_rewrite::Notice::TimedOut { after_ms: 2000 }),
            ..report.clone()
        };
        let a = h
            .add(
                &EntryRecord {
                    rewrite: Some(report.clone()),
                    ..dictation("Send the report.", 1000, None)
                },
                &[],
            )
            .unwrap();
        let b = h
            .add(
                &EntryRecord {
                    rewrite: Some(kept.clone()),
                    ..dictation("um send the the report", 2000, None)
                },
                &[],
            )
            .unwrap();
        assert_eq!(h.get(a.id).unwrap().unwrap().record.rewrite, Some(report));
        assert_eq!(h.get(b.id).unwrap().unwrap().record.rewrite, Some(kept));
        let plain = h.add(&dictation("plain", 3000, None), &[]).unwrap();
        assert_eq!(plain.record.rewrite, None);
    }

    #[test]
    fn add_list_search_delete() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::open(&dir.path().join("h.sqlite3")).unwrap();
        assert_eq!(h.schema_version().unwrap(), SCHEMA_VERSION);
        let a = h.add(&dictation("Hello world", 1000, None), &[]).unwrap();
        let b = h
            .add(&dictation("100% sure_thing", 2000, None), &[])
            .unwrap();
        let file = h
            .add(
                &EntryRecord {
                    kind: EntryKind::File,
                    source_name: Some("Meeting.mp3".into()),
                    ..dictation("Agenda", 3000, None)
                },
                &[Segment {
                    start_ms: 0,
                    end_ms: 900,
                    text: "Agenda".into(),
                    speaker: None,
                }],
            )
            .unwrap();
        let all = h.list(None, 10, 0).unwrap();
        assert_eq!(
            all.iter().map(|e| e.id).collect::<Vec<_>>(),
            [file.id, b.id, a.id]
        );
        assert_eq!(h.list(Some("HELLO"), 10, 0).unwrap(), vec![a.clone()]);
        // LIKE wildcards in the query are literal.
        assert_eq!(h.list(Some("0% s"), 10, 0).unwrap(), vec![b.clone()]);
        assert!(h.list(Some("_"), 10, 0).unwrap().len() == 1);
        assert_eq!(h.list(Some("meeting"), 10, 0).unwrap().len(), 1);
        assert_eq!(h.list(None, 1, 1).unwrap(), vec![b.clone()]);
        assert_eq!(h.segments(file.id).unwrap()[0].text, "Agenda");

        let updated = h
            .update_text(a.id, "Hello, world.", None, "base.en", &[])
            .unwrap();
        assert_eq!(updated.unwrap().record.text, "Hello, world.");
        assert_eq!(h.delete(b.id).unwrap().unwrap().id, b.id);
        assert!(h.get(b.id).unwrap().is_none());
        assert!(h.delete(b.id).unwrap().is_none());
    }

    #[test]
    fn retention_deletes_old_audio_but_keeps_text() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::open(&dir.path().join("h.sqlite3")).unwrap();
        let old_wav = dir.path().join("old.wav");
        let new_wav = dir.path().join("new.wav");
        std::fs::write(&old_wav, b"RIFF").unwrap();
        std::fs::write(old_wav.with_extension("json"), b"{}").unwrap();
        std::fs::write(&new_wav, b"RIFF").unwrap();
        let old = h
            .add(&dictation("old", 1_000, Some(old_wav.clone())), &[])
            .unwrap();
        let new = h
            .add(&dictation("new", 9_000, Some(new_wav.clone())), &[])
            .unwrap();
        assert_eq!(h.prune_audio(5_000).unwrap(), 1);
        assert!(!old_wav.exists() && !old_wav.with_extension("json").exists());
        assert!(new_wav.exists());
        let old = h.get(old.id).unwrap().unwrap();
        assert_eq!(
            (old.record.text.as_str(), old.record.audio_path),
            ("old", None)
        );
        assert!(h.get(new.id).unwrap().unwrap().record.audio_path.is_some());
        // Deleting an entry takes its audio with it.
        h.delete(new.id).unwrap();
        assert!(!new_wav.exists());
    }

    #[test]
    fn an_older_schema_is_migrated_keeping_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite3");
        {
            // A database as the first release left it.
            let mut conn = Connection::open(&path).unwrap();
            migrate(&mut conn, 1).unwrap();
            conn.execute(
                "INSERT INTO entries (kind, text, created_ms, duration_ms, model, language, audio_path)
                 VALUES ('dictation', 'from version one', 5, 700, 'tiny.en', 'en', NULL)",
                [],
            )
            .unwrap();
        }
        let h = History::open(&path).unwrap();
        assert_eq!(h.schema_version().unwrap(), SCHEMA_VERSION);
        let rows = h.list(None, 10, 0).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].record.text, "from version one");
        assert_eq!(rows[0].record.source_name, None);
        assert!(h.segments(rows[0].id).unwrap().is_empty());
        // And the new columns work on the migrated file.
        h.add(
            &EntryRecord {
                source_name: Some("a.wav".into()),
                ..dictation("new", 6, None)
            },
            &[],
        )
        .unwrap();
        assert_eq!(h.list(Some("a.wav"), 10, 0).unwrap().len(), 1);
    }

    #[test]
    fn a_corrupt_database_is_kept_aside_and_a_new_one_started() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        for damage in [
            &b"this is not a database at all, just text"[..],
            &[0u8; 10][..],
        ] {
            std::fs::write(&path, damage).unwrap();
            let (h, notice) = open_or_start_anew(&path).unwrap();
            let notice = notice.expect("the user is told");
            assert!(notice.contains("kept as"), "{notice}");
            h.add(&dictation("after the damage", 1, None), &[]).unwrap();
            assert_eq!(h.list(None, 10, 0).unwrap().len(), 1);
            drop(h);
            let backups = std::fs::read_dir(dir.path())
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .contains("corrupt-")
                })
                .count();
            assert!(backups >= 1);
            std::fs::remove_file(&path).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // A sound database opens without a notice.
        History::open(&path).unwrap();
        assert!(open_or_start_anew(&path).unwrap().1.is_none());
    }

    #[test]
    fn a_full_database_refuses_a_write_with_a_message_and_the_next_write_after_space_is_freed_works(
    ) {
        let dir = tempfile::tempdir().unwrap();
        let h = History::open(&dir.path().join("h.sqlite3")).unwrap();
        h.add(&dictation("before", 1, None), &[]).unwrap();
        // SQLite's own "disk full": no page may be added beyond the current ones.
        let pages: i64 = h
            .conn
            .pragma_query_value(None, "page_count", |r| r.get(0))
            .unwrap();
        h.conn.pragma_update(None, "max_page_count", pages).unwrap();
        let big = "word ".repeat(20_000);
        let err = h
            .add(&dictation(&big, 2, None), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("full"), "{err}");
        assert_eq!(
            h.list(None, 10, 0).unwrap().len(),
            1,
            "nothing half-written"
        );
        h.conn
            .pragma_update(None, "max_page_count", 1_000_000)
            .unwrap();
        h.add(&dictation(&big, 3, None), &[]).unwrap();
        assert_eq!(h.list(None, 10, 0).unwrap().len(), 2);
    }

    #[test]
    fn a_newer_schema_is_refused_not_clobbered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite3");
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let err = History::open(&path).err().expect("refused").to_string();
        assert!(err.contains("newer Utter"), "{err}");
    }

    /// Not a test on its own: the child process of
    /// `a_commit_survives_a_kill`, which writes one entry and then waits to be killed.
    #[test]
    #[ignore]
    fn child_writer_waits_for_kill() {
        let Some(path) = std::env::var_os("UTTER_HISTORY_CHILD_DB") else {
            return;
        };
        let h = History::open(Path::new(&path)).unwrap();
        h.add(&dictation("survives the kill", 42, None), &[])
            .unwrap();
        println!("COMMITTED");
        std::thread::sleep(std::time::Duration::from_secs(60));
    }

    #[test]
    fn a_commit_survives_a_kill() {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite3");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "history::tests::child_writer_waits_for_kill",
                "--ignored",
                "--nocapture",
            ])
            .env("UTTER_HISTORY_CHILD_DB", &path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let committed = std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .any(|l| l.contains("COMMITTED"));
        assert!(committed, "the child never committed");
        child.kill().unwrap(); // SIGKILL: no destructors, no checkpoint
        child.wait().unwrap();
        // The WAL still holds the commit; opening recovers it.
        assert!(dir.path().join("h.sqlite3-wal").exists());
        let h = History::open(&path).unwrap();
        let rows = h.list(None, 10, 0).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].record.text, "survives the kill");
    }
}
