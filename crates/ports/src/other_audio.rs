//! Other audio lowered while a dictation records (ducking), so music or a
//! video playing does not reach the microphone, and given back after.

/// What lowers and restores the other programs' sound.
pub trait OtherAudio: Send {
    /// Lowers every other program's playback; the number of streams
    /// lowered, or why it could not (said to the user, once).
    fn lower(&mut self) -> Result<usize, String>;
    /// Gives back exactly what `lower` changed (a stream the user changed
    /// meanwhile keeps the user's volume).
    fn restore(&mut self) -> Result<(), String>;
}

/// Ducking off: nothing is touched.
#[derive(Debug, Default, Clone, Copy)]
pub struct LeaveOtherAudio;

impl OtherAudio for LeaveOtherAudio {
    fn lower(&mut self) -> Result<usize, String> {
        Ok(0)
    }
    fn restore(&mut self) -> Result<(), String> {
        Ok(())
    }
}
