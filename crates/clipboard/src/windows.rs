//! The whole Windows clipboard across a paste, through the Win32 clipboard API
//! (<https://learn.microsoft.com/windows/win32/dataxchg/clipboard>).
//!
//! Before the paste every format is read while the clipboard is open
//! (EnumClipboardFormats, GetClipboardData) and its data copied into our own
//! memory; afterwards the clipboard is emptied and each format set again from
//! fresh GlobalAlloc memory. Formats the system synthesizes from another one
//! (CF_TEXT from CF_UNICODETEXT, CF_BITMAP from CF_DIB...) are not copied: the
//! system makes them again from the one we give back. Formats whose handle is
//! not memory we can copy (most GDI objects, owner-drawn and private formats)
//! are named in [`Snapshot::lost`].

use std::io;
use std::marker::PhantomData;
use std::ptr;
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{
    GetLastError, GlobalFree, SetLastError, ERROR_SUCCESS, HANDLE, HWND,
};
use windows_sys::Win32::Graphics::Gdi::{
    DeleteEnhMetaFile, GetEnhMetaFileBits, SetEnhMetaFileBits,
};
use windows_sys::Win32::System::DataExchange::{
    CloseClipboard, EmptyClipboard, EnumClipboardFormats, GetClipboardData,
    GetClipboardFormatNameW, OpenClipboard, RegisterClipboardFormatW, SetClipboardData,
};
use windows_sys::Win32::System::Memory::{
    GlobalAlloc, GlobalLock, GlobalSize, GlobalUnlock, GMEM_MOVEABLE,
};
use windows_sys::Win32::System::Ole::{
    CF_BITMAP, CF_DIB, CF_DIBV5, CF_DIF, CF_DSPBITMAP, CF_DSPENHMETAFILE, CF_DSPMETAFILEPICT,
    CF_DSPTEXT, CF_ENHMETAFILE, CF_GDIOBJFIRST, CF_GDIOBJLAST, CF_HDROP, CF_LOCALE,
    CF_METAFILEPICT, CF_OEMTEXT, CF_OWNERDISPLAY, CF_PALETTE, CF_PENDATA, CF_PRIVATEFIRST,
    CF_PRIVATELAST, CF_RIFF, CF_SYLK, CF_TEXT, CF_TIFF, CF_UNICODETEXT, CF_WAVE, CLIPBOARD_FORMAT,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{CreateWindowExW, DestroyWindow, HWND_MESSAGE};

use crate::{MAX_BYTES, SNAPSHOT_BUDGET};

/// How long to keep asking for the clipboard while another program has it
/// open (OpenClipboard fails then, and programs hold it only briefly).
const OPEN_WAIT: Duration = Duration::from_millis(500);
const OPEN_RETRY: Duration = Duration::from_millis(5);
/// Registered formats numbered from here up (RegisterClipboardFormat docs).
const FIRST_REGISTERED: CLIPBOARD_FORMAT = 0xC000;
/// Formats that keep Windows' clipboard history (Win+V) and cloud clipboard
/// from recording the clipboard, with a DWORD 0 as their data ("Cloud
/// Clipboard and Clipboard History Formats" in the Clipboard Formats docs).
const NOT_IN_HISTORY: &str = "CanIncludeInClipboardHistory";
const NOT_IN_CLOUD: &str = "CanUploadToCloudClipboard";

/// Why the clipboard could not be copied or given back.
#[derive(Debug, thiserror::Error)]
pub enum ClipboardError {
    #[error("another program keeps the clipboard open: {0}")]
    Busy(#[source] io::Error),
    #[error("cannot list the clipboard's formats: {0}")]
    Enumerate(#[source] io::Error),
    #[error("cannot empty the clipboard: {0}")]
    Empty(#[source] io::Error),
    #[error("cannot create a window to own the clipboard: {0}")]
    Window(#[source] io::Error),
}

/// One format's name: a standard format's number, or a registered format's
/// name, since a registered number is only valid in this session.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Format {
    Standard(CLIPBOARD_FORMAT),
    Registered(String),
}

/// One format's data, copied out of the clipboard's handle.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Data {
    /// The bytes of an HGLOBAL memory object.
    Memory(Vec<u8>),
    /// An enhanced metafile's bits (GetEnhMetaFileBits).
    EnhMetafile(Vec<u8>),
}

/// What the clipboard held before a paste, format by format in the owner's
/// order, and the formats that could not be copied (for the notice).
#[derive(Debug, Default)]
pub struct Snapshot {
    items: Vec<(Format, Data)>,
    lost: Vec<String>,
}

/// What to do with one enumerated format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// The system makes it from a format we keep ("Synthesized Clipboard
    /// Formats", Clipboard Formats docs): not copied.
    Synthesized,
    /// Its handle is nothing we can copy: named in the notice.
    Lost,
    /// Copy the memory of this format (CF_DIB for a CF_BITMAP: the system
    /// renders it from the bitmap, and makes the bitmap again from it).
    Memory(CLIPBOARD_FORMAT),
    /// An HENHMETAFILE, copied as its bits.
    EnhMetafile,
}

/// The plan for each of `formats` (in enumeration order). Of each family the
/// system converts between, the first enumerated is the one the owner set:
/// the system enumerates the formats it can synthesize after it. (Windows'
/// own conversions are lossless between these, so keeping the first is safe
/// even where an owner set two members itself.)
fn plans(formats: &[CLIPBOARD_FORMAT]) -> Vec<Plan> {
    let has_bitmap = formats
        .iter()
        .any(|f| matches!(*f, CF_BITMAP | CF_DIB | CF_DIBV5));
    let (mut text, mut bitmap, mut metafile) = (false, false, false);
    let first = |seen: &mut bool, plan: Plan| {
        if std::mem::replace(seen, true) {
            Plan::Synthesized
        } else {
            plan
        }
    };
    formats
        .iter()
        .map(|&format| match format {
            CF_TEXT | CF_OEMTEXT | CF_UNICODETEXT => first(&mut text, Plan::Memory(format)),
            CF_BITMAP => first(&mut bitmap, Plan::Memory(CF_DIB)),
            CF_DIB | CF_DIBV5 => first(&mut bitmap, Plan::Memory(format)),
            CF_METAFILEPICT | CF_ENHMETAFILE => first(&mut metafile, Plan::EnhMetafile),
            // Synthesized from a DIB; alone, a GDI palette handle.
            CF_PALETTE if has_bitmap => Plan::Synthesized,
            CF_PALETTE | CF_OWNERDISPLAY | CF_DSPBITMAP | CF_DSPMETAFILEPICT
            | CF_DSPENHMETAFILE => Plan::Lost,
            // Private formats' handles mean what their owner says; the GDI
            // range's memory is freed by its owner, not by the system.
            CF_PRIVATEFIRST..=CF_PRIVATELAST | CF_GDIOBJFIRST..=CF_GDIOBJLAST => Plan::Lost,
            // CF_HDROP, CF_LOCALE, CF_DSPTEXT, CF_DIF, CF_TIFF..., and
            // registered formats: HGLOBAL memory.
            _ => Plan::Memory(format),
        })
        .collect()
}

impl Snapshot {
    /// Copies every format on the clipboard. An empty clipboard is an empty
    /// snapshot, not an error.
    pub fn take() -> Result<Self, ClipboardError> {
        let deadline = Instant::now() + SNAPSHOT_BUDGET;
        let _open = Open::clipboard(ptr::null_mut(), Instant::now() + OPEN_WAIT)?;
        let formats = enumerate()?;
        let mut snapshot = Self::default();
        let mut bytes = 0usize;
        for (&format, plan) in formats.iter().zip(plans(&formats)) {
            let name = format_name(format);
            let left = MAX_BYTES.saturating_sub(bytes);
            let copied = match plan {
                Plan::Synthesized => continue,
                Plan::Lost => Err("its handle is not data that can be copied"),
                _ if Instant::now() >= deadline => Err("the copy ran out of time"),
                // SAFETY: the clipboard is open on this thread (`_open`).
                Plan::Memory(read) => {
                    unsafe { read_memory(read, left) }.map(|d| (read, Data::Memory(d)))
                }
                // SAFETY: as above.
                Plan::EnhMetafile => unsafe { read_enh_metafile(left) }
                    .map(|d| (CF_ENHMETAFILE, Data::EnhMetafile(d))),
            };
            match copied {
                Ok((read, data)) => {
                    bytes += match &data {
                        Data::Memory(d) | Data::EnhMetafile(d) => d.len(),
                    };
                    // A registered format goes back by name; one whose name
                    // cannot be read keeps its number, valid in this session.
                    let format = match registered_name(read) {
                        Some(name) if read >= FIRST_REGISTERED => Format::Registered(name),
                        _ => Format::Standard(read),
                    };
                    snapshot.items.push((format, data));
                }
                Err(why) => {
                    tracing::debug!("clipboard format {name} not kept: {why}");
                    snapshot.lost.push(name);
                }
            }
        }
        Ok(snapshot)
    }

    /// The formats that could not be copied (or, after [`Self::restore`],
    /// set again).
    pub fn lost(&self) -> &[String] {
        &self.lost
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The names of the formats this snapshot holds, in order.
    pub fn formats(&self) -> impl Iterator<Item = String> + '_ {
        self.items.iter().map(|(format, _)| match format {
            Format::Standard(id) => format_name(*id),
            Format::Registered(name) => name.clone(),
        })
    }

    /// Makes the copy the clipboard again. Also marks it for Windows'
    /// clipboard history and cloud clipboard to skip (unless it carries its
    /// own say): it is what the user copied before, which they recorded then,
    /// and would otherwise come back as a second entry after every dictation.
    /// A format that cannot be set again moves to [`Self::lost`].
    pub fn restore(&mut self) -> Result<(), ClipboardError> {
        // Owned by a window of ours: EmptyClipboard gives the clipboard to the
        // window that opened it, and with none "SetClipboardData fails"
        // (EmptyClipboard docs). Dropped after `_open`: the clipboard is
        // closed first, then the window destroyed, so that no other program's
        // EmptyClipboard waits on a window nobody pumps messages for.
        let owner = OwnerWindow::new()?;
        let _open = Open::clipboard(owner.0, Instant::now() + OPEN_WAIT)?;
        // SAFETY: the clipboard is open on this thread.
        if unsafe { EmptyClipboard() } == 0 {
            return Err(ClipboardError::Empty(io::Error::last_os_error()));
        }
        let mut failed = Vec::new();
        for (format, data) in &self.items {
            let id = match format {
                Format::Standard(id) => Some(*id),
                Format::Registered(name) => register(name),
            };
            // SAFETY: the clipboard is open on this thread.
            let set = id
                .ok_or("it cannot be registered")
                .and_then(|id| unsafe { set(id, data) });
            if let Err(why) = set {
                let name = self.name_of(format);
                tracing::warn!("clipboard format {name} not given back: {why}");
                failed.push(format.clone());
            }
        }
        for marker in [NOT_IN_HISTORY, NOT_IN_CLOUD] {
            if !self.has_registered(marker) {
                let data = Data::Memory(0u32.to_ne_bytes().to_vec());
                // SAFETY: the clipboard is open on this thread.
                if let Some(Err(why)) = register(marker).map(|id| unsafe { set(id, &data) }) {
                    tracing::debug!("cannot mark the restored clipboard {marker}: {why}");
                }
            }
        }
        for format in failed {
            self.lost.push(self.name_of(&format));
            self.items.retain(|(f, _)| *f != format);
        }
        Ok(())
    }

    fn name_of(&self, format: &Format) -> String {
        match format {
            Format::Standard(id) => format_name(*id),
            Format::Registered(name) => name.clone(),
        }
    }

    fn has_registered(&self, name: &str) -> bool {
        self.items
            .iter()
            .any(|(f, _)| matches!(f, Format::Registered(n) if n.eq_ignore_ascii_case(name)))
    }
}

/// The clipboard, open on this thread until dropped. Not `Send`: it must be
/// closed by the thread that opened it.
struct Open(PhantomData<*const ()>);

impl Open {
    /// Opens the clipboard for `owner` (null: no window), retrying while
    /// another program has it open, until `deadline`.
    fn clipboard(owner: HWND, deadline: Instant) -> Result<Self, ClipboardError> {
        loop {
            // SAFETY: plain call; `owner` is null or a window of this thread.
            if unsafe { OpenClipboard(owner) } != 0 {
                return Ok(Self(PhantomData));
            }
            let e = io::Error::last_os_error();
            if Instant::now() >= deadline {
                return Err(ClipboardError::Busy(e));
            }
            std::thread::sleep(OPEN_RETRY);
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        // SAFETY: opened by this thread (`Open` is not `Send`).
        unsafe { CloseClipboard() };
    }
}

/// A message-only window (never shown, no message loop needed while it
/// lives only for one restore) to own the restored clipboard.
struct OwnerWindow(HWND);

impl OwnerWindow {
    fn new() -> Result<Self, ClipboardError> {
        let class = wide("STATIC");
        // SAFETY: a predefined class, a message-only parent, no create data.
        let hwnd = unsafe {
            CreateWindowExW(
                0,
                class.as_ptr(),
                ptr::null(),
                0,
                0,
                0,
                0,
                0,
                HWND_MESSAGE,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null(),
            )
        };
        if hwnd.is_null() {
            return Err(ClipboardError::Window(io::Error::last_os_error()));
        }
        Ok(Self(hwnd))
    }
}

impl Drop for OwnerWindow {
    fn drop(&mut self) {
        // SAFETY: created by this thread in `new`, destroyed once. Data set
        // with real handles stays on the clipboard after its owner is gone.
        unsafe { DestroyWindow(self.0) };
    }
}

/// Every format on the open clipboard, in order.
fn enumerate() -> Result<Vec<CLIPBOARD_FORMAT>, ClipboardError> {
    let mut formats = Vec::new();
    let mut format = 0u32;
    loop {
        // SAFETY: plain calls; the caller has the clipboard open. A zero
        // ends the list, and GetLastError tells the end (ERROR_SUCCESS) from
        // a failure (EnumClipboardFormats docs).
        format = unsafe {
            SetLastError(ERROR_SUCCESS);
            EnumClipboardFormats(format)
        };
        if format == 0 {
            let error = unsafe { GetLastError() };
            if error != ERROR_SUCCESS {
                return Err(ClipboardError::Enumerate(io::Error::from_raw_os_error(
                    error as i32,
                )));
            }
            return Ok(formats);
        }
        // Format numbers are 16-bit (0xC000-0xFFFF the registered ones).
        if let Ok(f) = CLIPBOARD_FORMAT::try_from(format) {
            formats.push(f);
        }
    }
}

/// Copies the HGLOBAL memory of `format`.
///
/// # Safety
/// The clipboard must be open on this thread.
unsafe fn read_memory(format: CLIPBOARD_FORMAT, limit: usize) -> Result<Vec<u8>, &'static str> {
    // "The clipboard controls the handle that the GetClipboardData function
    // returns, not the application. The application should copy the data
    // immediately. The application must not free the handle nor leave it
    // locked." (GetClipboardData docs). For a delay-rendered format this asks
    // its owner to render it now.
    let handle = unsafe { GetClipboardData(u32::from(format)) };
    if handle.is_null() {
        return Err("its owner did not render it");
    }
    let size = unsafe { GlobalSize(handle) };
    if size == 0 {
        return Err("it is not a memory object");
    }
    if size > limit {
        return Err("it is too large");
    }
    let data = unsafe { GlobalLock(handle) } as *const u8;
    if data.is_null() {
        return Err("its memory cannot be locked");
    }
    // SAFETY: a locked memory object of `size` bytes.
    let copy = unsafe { std::slice::from_raw_parts(data, size) }.to_vec();
    unsafe { GlobalUnlock(handle) };
    Ok(copy)
}

/// Copies the clipboard's enhanced metafile as its bits.
///
/// # Safety
/// The clipboard must be open on this thread.
unsafe fn read_enh_metafile(limit: usize) -> Result<Vec<u8>, &'static str> {
    let handle = unsafe { GetClipboardData(u32::from(CF_ENHMETAFILE)) };
    if handle.is_null() {
        return Err("its owner did not render it");
    }
    let size = unsafe { GetEnhMetaFileBits(handle, 0, ptr::null_mut()) };
    if size == 0 {
        return Err("its bits cannot be read");
    }
    if size as usize > limit {
        return Err("it is too large");
    }
    let mut bits = vec![0u8; size as usize];
    if unsafe { GetEnhMetaFileBits(handle, size, bits.as_mut_ptr()) } != size {
        return Err("its bits cannot be read");
    }
    Ok(bits)
}

/// Puts `data` on the clipboard as `format`.
///
/// # Safety
/// The clipboard must be open on this thread, and emptied by it.
unsafe fn set(format: CLIPBOARD_FORMAT, data: &Data) -> Result<(), &'static str> {
    let (handle, free): (HANDLE, unsafe fn(HANDLE)) = match data {
        Data::Memory(bytes) => {
            // A memory object for SetClipboardData "must have been allocated
            // using the GlobalAlloc function with the GMEM_MOVEABLE flag"
            // (SetClipboardData docs).
            let memory = unsafe { GlobalAlloc(GMEM_MOVEABLE, bytes.len()) };
            if memory.is_null() {
                return Err("out of memory");
            }
            let target = unsafe { GlobalLock(memory) } as *mut u8;
            if target.is_null() {
                unsafe { GlobalFree(memory) };
                return Err("its memory cannot be locked");
            }
            // SAFETY: `target` has room for `bytes.len()` bytes (GlobalAlloc above).
            unsafe {
                ptr::copy_nonoverlapping(bytes.as_ptr(), target, bytes.len());
                GlobalUnlock(memory);
            }
            (memory, free_memory)
        }
        Data::EnhMetafile(bits) => {
            let size = u32::try_from(bits.len()).map_err(|_| "it is too large")?;
            let metafile = unsafe { SetEnhMetaFileBits(size, bits.as_ptr()) };
            if metafile.is_null() {
                return Err("its bits do not make a metafile");
            }
            (metafile, free_metafile)
        }
    };
    // "If SetClipboardData succeeds, the system owns the object identified by
    // the hMem parameter. The application may not write to or free the data
    // once ownership has been transferred to the system" (SetClipboardData
    // docs); on failure it is still ours to free.
    if unsafe { SetClipboardData(u32::from(format), handle) }.is_null() {
        unsafe { free(handle) };
        return Err("SetClipboardData failed");
    }
    Ok(())
}

unsafe fn free_memory(handle: HANDLE) {
    unsafe { GlobalFree(handle) };
}

unsafe fn free_metafile(handle: HANDLE) {
    unsafe { DeleteEnhMetaFile(handle) };
}

/// The number of the registered format `name` in this session.
fn register(name: &str) -> Option<CLIPBOARD_FORMAT> {
    let name = wide(name);
    // SAFETY: a NUL-terminated UTF-16 string.
    let id = unsafe { RegisterClipboardFormatW(name.as_ptr()) };
    CLIPBOARD_FORMAT::try_from(id).ok().filter(|&id| id != 0)
}

/// A format's name: its CF_ constant's, or a registered format's own.
fn format_name(format: CLIPBOARD_FORMAT) -> String {
    let standard = match format {
        CF_TEXT => "CF_TEXT",
        CF_BITMAP => "CF_BITMAP",
        CF_METAFILEPICT => "CF_METAFILEPICT",
        CF_SYLK => "CF_SYLK",
        CF_DIF => "CF_DIF",
        CF_TIFF => "CF_TIFF",
        CF_OEMTEXT => "CF_OEMTEXT",
        CF_DIB => "CF_DIB",
        CF_PALETTE => "CF_PALETTE",
        CF_PENDATA => "CF_PENDATA",
        CF_RIFF => "CF_RIFF",
        CF_WAVE => "CF_WAVE",
        CF_UNICODETEXT => "CF_UNICODETEXT",
        CF_ENHMETAFILE => "CF_ENHMETAFILE",
        CF_HDROP => "CF_HDROP (a file list)",
        CF_LOCALE => "CF_LOCALE",
        CF_DIBV5 => "CF_DIBV5",
        CF_OWNERDISPLAY => "CF_OWNERDISPLAY",
        CF_DSPTEXT => "CF_DSPTEXT",
        CF_DSPBITMAP => "CF_DSPBITMAP",
        CF_DSPMETAFILEPICT => "CF_DSPMETAFILEPICT",
        CF_DSPENHMETAFILE => "CF_DSPENHMETAFILE",
        _ => "",
    };
    if !standard.is_empty() {
        return standard.to_string();
    }
    registered_name(format).unwrap_or_else(|| format!("clipboard format {format:#06x}"))
}

/// A registered format's name (GetClipboardFormatNameW).
fn registered_name(format: CLIPBOARD_FORMAT) -> Option<String> {
    let mut buffer = [0u16; 256];
    // SAFETY: the buffer's length is passed with it.
    let n = unsafe {
        GetClipboardFormatNameW(u32::from(format), buffer.as_mut_ptr(), buffer.len() as i32)
    };
    match usize::try_from(n) {
        Ok(n) if n > 0 => Some(String::from_utf16_lossy(&buffer[..n])),
        _ => None,
    }
}

/// `text` as a NUL-terminated UTF-16 string.
fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_each_family_is_copied_and_the_synthesized_ones_are_not() {
        let registered = 0xC123;
        let plans = plans(&[
            CF_UNICODETEXT,
            registered,
            CF_DIBV5,
            CF_LOCALE,
            CF_TEXT,
            CF_OEMTEXT,
            CF_BITMAP,
            CF_DIB,
            CF_PALETTE,
        ]);
        assert_eq!(
            plans,
            [
                Plan::Memory(CF_UNICODETEXT),
                Plan::Memory(registered),
                Plan::Memory(CF_DIBV5),
                Plan::Memory(CF_LOCALE),
                Plan::Synthesized,
                Plan::Synthesized,
                Plan::Synthesized,
                Plan::Synthesized,
                Plan::Synthesized,
            ]
        );
    }

    #[test]
    fn a_bitmap_is_copied_as_a_dib_and_gdi_handles_are_lost() {
        assert_eq!(
            plans(&[CF_BITMAP, CF_DIB, CF_DIBV5]),
            [Plan::Memory(CF_DIB), Plan::Synthesized, Plan::Synthesized]
        );
        assert_eq!(
            plans(&[CF_METAFILEPICT, CF_ENHMETAFILE]),
            [Plan::EnhMetafile, Plan::Synthesized]
        );
        assert_eq!(
            plans(&[
                CF_PALETTE,
                CF_OWNERDISPLAY,
                CF_PRIVATEFIRST + 1,
                CF_GDIOBJFIRST
            ]),
            [Plan::Lost; 4]
        );
    }
}
