//! The Windows clipboard across a paste, on a real clipboard: another
//! program's image (CF_DIB), file list (CF_HDROP), enhanced metafile, own
//! registered format and text are copied, the clipboard is taken for the
//! dictated text as Utter's paste takes it (arboard, excluded from clipboard
//! monitors), and the copy is written back; every format must come back byte
//! for byte. It replaces the clipboard of whoever runs it, so it is ignored by
//! default: `scripts/test-wine.sh clipboard` runs it under Wine (and
//! `cargo test -p utter-clipboard -- --ignored --test-threads=1` on Windows).
#![cfg(windows)]

use std::ptr;
use std::time::{Duration, Instant};

use utter_clipboard::Snapshot;
use windows_sys::Win32::Foundation::{HANDLE, HWND};
use windows_sys::Win32::Graphics::Gdi::{
    CloseEnhMetaFile, CreateEnhMetaFileW, GetEnhMetaFileBits, Rectangle,
};
use windows_sys::Win32::System::DataExchange::{
    CloseClipboard, EmptyClipboard, EnumClipboardFormats, GetClipboardData,
    GetClipboardFormatNameW, OpenClipboard, RegisterClipboardFormatW, SetClipboardData,
};
use windows_sys::Win32::System::Memory::{
    GlobalAlloc, GlobalLock, GlobalSize, GlobalUnlock, GMEM_MOVEABLE,
};
use windows_sys::Win32::System::Ole::{CF_DIB, CF_ENHMETAFILE, CF_HDROP, CF_UNICODETEXT};
use windows_sys::Win32::UI::WindowsAndMessaging::{CreateWindowExW, DestroyWindow, HWND_MESSAGE};

const APP_FORMAT: &str = "Utter Test Private Format";

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

fn utf16_bytes(text: &str) -> Vec<u8> {
    wide(text).iter().flat_map(|u| u.to_le_bytes()).collect()
}

fn register(name: &str) -> u32 {
    let id = unsafe { RegisterClipboardFormatW(wide(name).as_ptr()) };
    assert_ne!(id, 0, "RegisterClipboardFormatW({name})");
    id
}

/// A 5×3 32-bit bottom-up DIB: BITMAPINFOHEADER then the pixels.
fn dib() -> Vec<u8> {
    let (width, height) = (5i32, 3i32);
    let mut data = Vec::new();
    data.extend(40u32.to_le_bytes()); // biSize
    data.extend(width.to_le_bytes());
    data.extend(height.to_le_bytes());
    data.extend(1u16.to_le_bytes()); // biPlanes
    data.extend(32u16.to_le_bytes()); // biBitCount
    data.extend(0u32.to_le_bytes()); // BI_RGB
    data.extend(((width * height * 4) as u32).to_le_bytes());
    data.extend([0u8; 16]); // resolution, colours used / important
    for i in 0..width * height {
        data.extend([(i * 13) as u8, (i * 29) as u8, (i * 53) as u8, 0]);
    }
    data
}

/// DROPFILES (wide names) and two paths, double-NUL terminated.
fn file_list() -> Vec<u8> {
    let mut data = Vec::new();
    data.extend(20u32.to_le_bytes()); // pFiles: the names follow the header
    data.extend([0u8; 8]); // pt
    data.extend(0u32.to_le_bytes()); // fNC
    data.extend(1u32.to_le_bytes()); // fWide
    for name in [r"C:\users\me\report.pdf", r"C:\users\me\photo é.jpg"] {
        data.extend(utf16_bytes(name));
    }
    data.extend([0u8, 0]);
    data
}

/// What another program leaves on the clipboard.
struct Copied {
    text: Vec<u8>,
    dib: Vec<u8>,
    files: Vec<u8>,
    app: Vec<u8>,
    metafile: Vec<u8>,
}

/// Puts the formats on the clipboard from a window of its own, on a thread
/// of its own that then ends, as a program that copied and moved on.
fn another_program_copies() -> Copied {
    let copied = Copied {
        text: utf16_bytes("previous clipboard ✓"),
        dib: dib(),
        files: file_list(),
        app: (0..=255u8).cycle().take(1000).collect(),
        metafile: Vec::new(),
    };
    let (text, dib, files, app) = (
        copied.text.clone(),
        copied.dib.clone(),
        copied.files.clone(),
        copied.app.clone(),
    );
    let metafile = std::thread::spawn(move || unsafe {
        let window = message_window();
        assert_ne!(OpenClipboard(window), 0, "OpenClipboard");
        assert_ne!(EmptyClipboard(), 0, "EmptyClipboard");
        set_memory(u32::from(CF_UNICODETEXT), &text);
        set_memory(u32::from(CF_DIB), &dib);
        set_memory(register(APP_FORMAT), &app);
        set_memory(u32::from(CF_HDROP), &files);
        let dc = CreateEnhMetaFileW(ptr::null_mut(), ptr::null(), ptr::null(), ptr::null());
        assert!(!dc.is_null(), "CreateEnhMetaFileW");
        Rectangle(dc, 10, 10, 200, 120);
        let emf = CloseEnhMetaFile(dc);
        let bits = metafile_bits(emf);
        assert!(!SetClipboardData(u32::from(CF_ENHMETAFILE), emf).is_null());
        CloseClipboard();
        DestroyWindow(window);
        bits
    })
    .join()
    .unwrap();
    Copied { metafile, ..copied }
}

unsafe fn message_window() -> HWND {
    let window = unsafe {
        CreateWindowExW(
            0,
            wide("STATIC").as_ptr(),
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
    assert!(!window.is_null(), "CreateWindowExW");
    window
}

unsafe fn set_memory(format: u32, bytes: &[u8]) {
    unsafe {
        let memory = GlobalAlloc(GMEM_MOVEABLE, bytes.len());
        let target = GlobalLock(memory) as *mut u8;
        ptr::copy_nonoverlapping(bytes.as_ptr(), target, bytes.len());
        GlobalUnlock(memory);
        assert!(
            !SetClipboardData(format, memory).is_null(),
            "SetClipboardData({format})"
        );
    }
}

unsafe fn metafile_bits(emf: HANDLE) -> Vec<u8> {
    unsafe {
        let size = GetEnhMetaFileBits(emf, 0, ptr::null_mut());
        let mut bits = vec![0u8; size as usize];
        GetEnhMetaFileBits(emf, size, bits.as_mut_ptr());
        bits
    }
}

/// Reads the clipboard the way a pasting program does.
struct Reader;

impl Reader {
    fn open() -> Self {
        let deadline = Instant::now() + Duration::from_secs(2);
        while unsafe { OpenClipboard(ptr::null_mut()) } == 0 {
            assert!(
                Instant::now() < deadline,
                "the clipboard stays open elsewhere"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        Self
    }

    /// Every format's name, in order.
    fn formats(&self) -> Vec<String> {
        let mut formats = Vec::new();
        let mut format = 0;
        loop {
            format = unsafe { EnumClipboardFormats(format) };
            if format == 0 {
                break;
            }
            formats.push(name(format));
        }
        formats
    }

    fn memory(&self, format: u32) -> Option<Vec<u8>> {
        unsafe {
            let handle = GetClipboardData(format);
            if handle.is_null() {
                return None;
            }
            let size = GlobalSize(handle);
            let data = GlobalLock(handle) as *const u8;
            let copy = std::slice::from_raw_parts(data, size).to_vec();
            GlobalUnlock(handle);
            Some(copy)
        }
    }

    fn metafile(&self) -> Option<Vec<u8>> {
        let handle = unsafe { GetClipboardData(u32::from(CF_ENHMETAFILE)) };
        (!handle.is_null()).then(|| unsafe { metafile_bits(handle) })
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        unsafe { CloseClipboard() };
    }
}

fn name(format: u32) -> String {
    let mut buffer = [0u16; 256];
    let n = unsafe { GetClipboardFormatNameW(format, buffer.as_mut_ptr(), 256) };
    if n > 0 {
        String::from_utf16_lossy(&buffer[..n as usize])
    } else {
        format!("#{format}")
    }
}

#[test]
#[ignore = "replaces the clipboard: run by scripts/test-wine.sh clipboard"]
fn every_format_comes_back_byte_for_byte_after_a_paste() {
    let copied = another_program_copies();
    let before = Reader::open().formats();
    println!("\nthe clipboard before: {}", before.join(", "));

    let started = Instant::now();
    let mut snapshot = Snapshot::take().expect("snapshot");
    println!(
        "snapshot in {:?}: {} (lost: {:?})",
        started.elapsed(),
        snapshot.formats().collect::<Vec<_>>().join(", "),
        snapshot.lost()
    );
    assert!(snapshot.lost().is_empty(), "lost: {:?}", snapshot.lost());

    // The paste: the dictated text, kept out of clipboard history and monitors.
    {
        use arboard::SetExtWindows;
        let mut clipboard = arboard::Clipboard::new().unwrap();
        clipboard
            .set()
            .exclude_from_monitoring()
            .text("the dictated text")
            .unwrap();
        assert_eq!(clipboard.get_text().unwrap(), "the dictated text");
    }
    {
        let reader = Reader::open();
        let during = reader.formats();
        println!("the clipboard during the paste: {}", during.join(", "));
        assert!(
            reader.memory(u32::from(CF_DIB)).is_none(),
            "the image is still there"
        );
        assert!(reader.memory(register(APP_FORMAT)).is_none());
        assert!(
            reader
                .memory(register("ExcludeClipboardContentFromMonitorProcessing"))
                .is_some(),
            "the dictated text is not kept from clipboard monitors: {during:?}"
        );
    }

    let started = Instant::now();
    snapshot.restore().expect("restore");
    println!("restored in {:?}", started.elapsed());
    assert!(snapshot.lost().is_empty(), "lost: {:?}", snapshot.lost());

    let reader = Reader::open();
    let after = reader.formats();
    println!("the clipboard after: {}", after.join(", "));
    let check = |what: &str, got: Option<Vec<u8>>, want: &[u8]| {
        let got = got.unwrap_or_else(|| panic!("{what} did not come back"));
        assert_eq!(got, want, "{what} came back different");
        println!("  {what}: {} bytes, identical", got.len());
    };
    check(
        "CF_UNICODETEXT",
        reader.memory(u32::from(CF_UNICODETEXT)),
        &copied.text,
    );
    check("CF_DIB", reader.memory(u32::from(CF_DIB)), &copied.dib);
    check(APP_FORMAT, reader.memory(register(APP_FORMAT)), &copied.app);
    check(
        "CF_HDROP",
        reader.memory(u32::from(CF_HDROP)),
        &copied.files,
    );
    check("CF_ENHMETAFILE", reader.metafile(), &copied.metafile);
    for format in &before {
        assert!(
            after.contains(format),
            "{format} did not come back: {after:?}"
        );
    }
    assert!(
        !after
            .iter()
            .any(|f| f == "ExcludeClipboardContentFromMonitorProcessing"),
        "the restored clipboard is hidden from monitors: {after:?}"
    );
    check(
        "CanIncludeInClipboardHistory",
        reader.memory(register("CanIncludeInClipboardHistory")),
        &0u32.to_ne_bytes(),
    );
    drop(reader);
    let text = arboard::Clipboard::new().unwrap().get_text().unwrap();
    assert_eq!(text, "previous clipboard ✓");
}

#[test]
#[ignore = "replaces the clipboard: run by scripts/test-wine.sh clipboard"]
fn a_clipboard_held_open_briefly_is_waited_for_and_one_held_too_long_is_an_error() {
    another_program_copies();
    let hold = |for_: Duration| {
        let (opened, wait_opened) = std::sync::mpsc::channel();
        // Another program: its own window, on its own thread.
        let holder = std::thread::spawn(move || unsafe {
            let window = message_window();
            assert_ne!(OpenClipboard(window), 0, "OpenClipboard");
            opened.send(()).unwrap();
            std::thread::sleep(for_);
            CloseClipboard();
            DestroyWindow(window);
        });
        wait_opened.recv().unwrap();
        holder
    };

    let holder = hold(Duration::from_millis(200));
    let started = Instant::now();
    let snapshot = Snapshot::take().expect("taken once the other program closed it");
    println!(
        "\nwaited {:?} for a clipboard held open 200 ms",
        started.elapsed()
    );
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert!(!snapshot.is_empty());
    holder.join().unwrap();

    let holder = hold(Duration::from_secs(3));
    let started = Instant::now();
    let err = Snapshot::take().expect_err("held past the wait");
    println!("held open 3 s: {err} (after {:?})", started.elapsed());
    assert!(
        matches!(err, utter_clipboard::ClipboardError::Busy(_)),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    holder.join().unwrap();
}
