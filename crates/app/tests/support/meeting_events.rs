//! Waiting for the app's meeting events, for the app tests that record one.

use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use utter_app_core::meetings::MeetingStatus;
use utter_app_core::AppEvent;

/// The first meeting status `until` accepts, within `within`; other events
/// are passed over.
pub fn wait_meeting(
    rx: &Receiver<AppEvent>,
    within: Duration,
    until: impl Fn(&MeetingStatus) -> bool,
) -> MeetingStatus {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(AppEvent::Meeting(s)) if until(&s) => return s,
            Ok(_) => {}
            Err(e) => panic!("no such meeting event: {e}"),
        }
    }
}
