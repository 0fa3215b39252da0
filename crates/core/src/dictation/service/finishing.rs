//! Finishing a dictation: the engine's last replies → the text (or a
//! spoken command) → the AI rewrite, when on → delivery through the sink,
//! the recording's record and History's events. Each step moves the
//! service's [`Phase`] on; nothing here waits.

use std::time::Instant;

use utter_postprocess::{continues_sentence, Placeholder, Processed};

use super::super::edit_commands::{self, EditCommand, SCRATCH_WITHIN};
use super::super::events::DictationEvent;
use super::super::record_log::{self, RecordingRecord, RecordingStatus};
use super::super::recording::{Dictation, Purpose};
use super::super::rewrite_step::{PendingRewrite, RewriteReport};
use super::super::submit::{self, SubmitStep};
use super::{Erasable, Phase, Service, CONTINUE_SENTENCE_WITHIN};
use utter_ports::output::{Delivered, EditKey, Submit};

impl<E: FnMut(DictationEvent)> Service<E> {
    /// Engine replies in any phase (eager runs go on while the user speaks);
    /// Finishing → Idle once the text is complete.
    pub(super) fn on_engine_replies(&mut self) {
        let done = match &mut self.phase {
            Phase::Rewriting { .. } => false, // the engine is done with it
            phase => match phase.dictation_mut() {
                Some(d) => d.poll(&self.engine, &mut self.emit),
                None => false,
            },
        };
        if done && matches!(self.phase, Phase::Finishing(_)) {
            if let Phase::Finishing(d) = std::mem::replace(&mut self.phase, Phase::Idle) {
                self.text_ready(d);
            }
        }
    }

    /// Rewriting → Idle once the model has answered (or given up).
    pub(super) fn on_rewrite_done(&mut self) {
        let Phase::Rewriting { rewrite, .. } = &mut self.phase else {
            return;
        };
        let Some((text, report)) = rewrite.poll() else {
            return;
        };
        if let Phase::Rewriting { dictation, raw, .. } =
            std::mem::replace(&mut self.phase, Phase::Idle)
        {
            let command = matches!(dictation.purpose(), Purpose::Command { .. });
            if let Some(notice) = &report.notice {
                let message = match command {
                    true => format!(
                        "The command was not carried out; the selection is unchanged: {notice}"
                    ),
                    false => format!("Delivered as dictated: {notice}"),
                };
                (self.emit)(DictationEvent::Notice { message });
            }
            // A command that failed leaves the selection alone: nothing goes out.
            let text = match (command, &report.notice) {
                (true, Some(_)) => String::new(),
                _ => text,
            };
            // The app's text rules (no final period in a chat) hold for the model's text too.
            let text = match report.model {
                Some(_) => dictation.plan().finish_text(text),
                None => text,
            };
            self.deliver(dictation, text, raw, Some(report));
        }
    }

    /// The engine's text is complete: the text rules, then the AI rewrite
    /// (Finishing → Rewriting) or straight out (→ Idle).
    pub(super) fn text_ready(&mut self, d: Dictation) {
        let continues = self
            .last_delivered
            .is_some_and(|t| t.elapsed() < CONTINUE_SENTENCE_WITHIN)
            && continues_sentence(&self.last_text);
        let Processed {
            text,
            raw,
            snippets,
            unavailable,
        } = d.plan().rules.dictation(&d.text(), continues);
        if !unavailable.is_empty() {
            self.notice(Some(placeholders_missing(&snippets, &unavailable)));
        }
        let text = d.plan().finish_text(text);
        let edit = match d.purpose() {
            Purpose::Dictation if self.config.edit_commands => edit_commands::command(&text),
            _ => None,
        };
        if let Some(edit) = edit {
            return self.edit(d, edit, text);
        }
        if let Purpose::Command { selection } = d.purpose() {
            let selection = selection.clone();
            return self.command_ready(d, selection, text, raw);
        }
        // A partial text (the engine failed) is delivered as it is, and a
        // snippet's stored text as stored.
        let mode = match (&self.config.rewrite, &d.plan().rewrite, d.failed()) {
            (Some(step), Some(mode), None) if !text.trim().is_empty() && snippets.is_empty() => {
                Some((step, mode.clone()))
            }
            _ => None,
        };
        match mode {
            Some((step, mode)) => {
                let rewrite = step.start(&mode, &text, d.vocabulary());
                self.await_rewrite(d, raw, rewrite);
            }
            None => self.deliver(d, text, raw, None),
        }
    }

    /// A dictation that was an edit command: the keys pressed where the
    /// last text went, and the dictation ends with no text of its own.
    fn edit(&mut self, d: Dictation, edit: EditCommand, said: String) {
        self.io.keys.set_recording(false);
        let done = match edit {
            EditCommand::Press(key) => self.io.sink.press_keys(key, 1).map_err(|e| e.to_string()),
            EditCommand::ScratchThat => match self.erasable.take() {
                Some(last) if last.at.elapsed() < SCRATCH_WITHIN => self
                    .io
                    .sink
                    .press_keys(EditKey::Backspace, last.chars)
                    .map_err(|e| e.to_string()),
                Some(_) => Err("the last text went in too long ago to take it back".into()),
                None => Err("there is no text to take back (the last one went to the \
                             clipboard, was sent, or was taken back already)"
                    .into()),
            },
        };
        if let Err(why) = &done {
            self.notice(Some(format!("“{}”: {why}", said.trim())));
        }
        self.write_record(&d, RecordingStatus::Delivered, String::new());
        (self.emit)(DictationEvent::TextDelivered {
            id: d.id,
            text: String::new(),
            output: d.plan().delivery.method.name().to_string(),
            engine_ms: d.engine_ms(),
            segments: d.segments(),
            delivered: None,
            raw_text: Some(said),
            error: d.failed().map(str::to_string),
            warning: None,
            rewrite: None,
            submitted: None,
            edit: done.is_ok().then_some(edit.name().to_string()),
        });
        record_log::prune(&self.config.recordings_dir, self.config.keep_recordings);
    }

    /// A spoken command's words are in: off to the model with the selection.
    pub(super) fn command_ready(
        &mut self,
        d: Dictation,
        selection: Option<String>,
        instruction: String,
        raw: Option<String>,
    ) {
        let step = match (&self.config.rewrite, d.failed()) {
            (Some(step), None) if !instruction.trim().is_empty() => step,
            // Nothing said, or the engine failed on it: nothing to carry out.
            _ => return self.deliver(d, String::new(), raw, None),
        };
        let rewrite = step.start_command(&instruction, selection.as_deref(), d.vocabulary());
        self.await_rewrite(d, raw, rewrite);
    }

    /// → Rewriting: the model has the text; `on_rewrite_done` takes it from here.
    pub(super) fn await_rewrite(
        &mut self,
        d: Dictation,
        raw: Option<String>,
        rewrite: PendingRewrite,
    ) {
        (self.emit)(DictationEvent::Rewriting {
            id: d.id,
            mode: rewrite.mode().to_string(),
        });
        self.phase = Phase::Rewriting {
            dictation: d,
            raw,
            rewrite,
        };
    }

    /// Out it goes: to the focused app, the recording's sidecar, and the UI.
    pub(super) fn deliver(
        &mut self,
        d: Dictation,
        text: String,
        raw: Option<String>,
        rewrite: Option<RewriteReport>,
    ) {
        self.io.keys.set_recording(false);
        let command = matches!(d.purpose(), Purpose::Command { .. });
        let mut how = d.plan().delivery;
        // A command's answer replaces the selection: nothing is added after it.
        how.trailing_space &= !command;
        how.submit = if command { Submit::None } else { how.submit };
        // "…. Send.": the trigger goes, and the text is sent (Enter unless
        // a submit key is set).
        let text = match (
            command,
            submit::strip_spoken_submit(&text, &self.config.spoken_submit),
        ) {
            (false, Some(rest)) => {
                if how.submit == Submit::None {
                    how.submit = Submit::Enter;
                }
                rest
            }
            _ => text,
        };
        let status = if text.is_empty() {
            RecordingStatus::NoSpeech
        } else {
            RecordingStatus::Delivered
        };
        let delivered = if text.is_empty() {
            Ok(None)
        } else {
            self.io.sink.deliver(&text, &how).map(Some)
        };
        match &delivered {
            Ok(outcome) => self.notice(outcome.as_ref().and_then(|o| o.notice.clone())),
            Err(e) => self.error(e.to_string()),
        }
        let submitted = match &delivered {
            Ok(Some(outcome)) if how.submit != Submit::None => {
                self.submit(outcome.delivered, how.submit)
            }
            _ => None,
        };
        // What "scratch that" may take back: a text in the app, not sent.
        self.erasable = match &delivered {
            Ok(Some(outcome)) if outcome.delivered.in_app() && submitted.is_none() => {
                Some(Erasable {
                    chars: text.chars().count() + usize::from(how.trailing_space),
                    at: Instant::now(),
                })
            }
            _ => None,
        };
        // The sidecar marks the recording finished only once the text is out
        // (on a delivery or engine error it stays unfinished: the next start
        // transcribes it again). It is written before `text_delivered`, so
        // whoever sees that event finds the recording finished.
        if delivered.is_ok() && d.failed().is_none() {
            self.write_record(&d, status, text.clone());
        }
        (self.emit)(DictationEvent::TextDelivered {
            id: d.id,
            text: text.clone(),
            // The method that delivered (a paste that fell back says clipboard).
            output: match &delivered {
                Ok(Some(outcome)) => outcome.delivered.method(),
                _ => how.method,
            }
            .name()
            .to_string(),
            engine_ms: d.engine_ms(),
            segments: d.segments(),
            delivered: delivered.ok().flatten().map(|o| o.delivered),
            raw_text: raw,
            error: d.failed().map(str::to_string),
            warning: d.coverage_warning(),
            rewrite,
            submitted,
            edit: None,
        });
        if !text.is_empty() && !command {
            self.last_text = text;
            self.last_delivered = Some(Instant::now());
        }
        record_log::prune(&self.config.recordings_dir, self.config.keep_recordings);
    }

    /// Presses the submit key once the text is in the app; says why not
    /// where it is not. The key pressed, if it was.
    fn submit(&mut self, delivered: Delivered, key: Submit) -> Option<Submit> {
        let press = match submit::after_delivery(delivered, key) {
            SubmitStep::Press => true,
            SubmitStep::PressAfter(wait) => {
                std::thread::sleep(wait);
                true
            }
            SubmitStep::Skip(why) => {
                self.notice(Some(why));
                false
            }
        };
        if !press {
            return None;
        }
        match self.io.sink.press_submit(key) {
            Ok(()) => Some(key),
            Err(e) => {
                self.error(format!(
                    "the text is in the app, but {} could not be pressed to send it: {e}",
                    key.name()
                ));
                None
            }
        }
    }

    /// Tells the user what the delivery needs them to know.
    pub(super) fn notice(&mut self, notice: Option<String>) {
        if let Some(message) = notice {
            (self.emit)(DictationEvent::Notice { message });
        }
    }

    pub(super) fn write_record(&self, d: &Dictation, status: RecordingStatus, text: String) {
        let _ = record_log::write_record(
            d.audio_path(),
            &RecordingRecord {
                status,
                text,
                model: self.config.model_name.clone(),
                audio_ms: d.audio_ms(),
                finished_unix_ms: record_log::unix_ms(),
            },
        );
    }

    pub(super) fn finished(&self) -> bool {
        self.shutting_down && matches!(self.phase, Phase::Idle)
    }
}

/// What the user is told when a snippet's placeholder had no value.
fn placeholders_missing(triggers: &[String], unavailable: &[Placeholder]) -> String {
    let names: Vec<String> = unavailable.iter().map(Placeholder::to_string).collect();
    let why = if unavailable.contains(&Placeholder::Clipboard) {
        " (the clipboard held no text)"
    } else {
        ""
    };
    format!(
        "The snippet \"{}\" was inserted without {}{why}.",
        triggers.join("\", \""),
        names.join(", ")
    )
}
