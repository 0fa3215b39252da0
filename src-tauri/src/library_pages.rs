//! Gives the kernel back the pages of WebKit's and Mesa's libraries once no
//! web view is left (Linux).
//!
//! The first page load makes WebKit's UI side (this process) set up an EGL
//! display, which loads Mesa's driver and its LLVM, and runs much of
//! libwebkit2gtk and JavaScriptCore. With the web process running, those
//! pages were shared with it; once the window is gone they are the app's
//! alone (~55 MB in the tray against ~0 for a `--hidden` start that never
//! loaded a page) and nothing here touches them until a window opens again.
//! `MADV_PAGEOUT` asks the kernel to reclaim them now: it keeps what a mapping
//! holds (unlike `MADV_DONTNEED`): clean file pages are dropped and read back
//! from the file on the next touch, modified ones (relocated data) go to swap
//! where there is swap and stay otherwise, and pages another process maps are
//! left alone. See madvise(2).

/// Library file names (prefixes) that only a web view runs in this process.
const WEBVIEW_ONLY: &[&str] = &[
    "libwebkit2gtk-",
    "libjavascriptcoregtk-",
    "libLLVM",
    "libgallium",
    "swrast_dri.so",
    "libEGL_mesa.so",
    "libglapi.so",
];

/// Asks the kernel to reclaim the pages of [`WEBVIEW_ONLY`]'s mappings;
/// returns how many bytes of mappings were advised.
pub fn page_out_webview_libraries() -> usize {
    page_out(WEBVIEW_ONLY)
}

/// Asks the kernel to reclaim the pages of the mappings of the libraries
/// named (file name prefixes); returns how many bytes were advised.
fn page_out(libraries: &[&str]) -> usize {
    let maps = match std::fs::read_to_string("/proc/self/maps") {
        Ok(maps) => maps,
        Err(e) => {
            tracing::warn!("cannot read /proc/self/maps: {e}");
            return 0;
        }
    };
    let mut advised = 0;
    for (start, end) in mapped_ranges(&maps, libraries) {
        // SAFETY: the range is one of this process's own mappings as listed
        // just now (libraries are never unmapped: GLib and Mesa keep them
        // loaded), and MADV_PAGEOUT does not change what the memory holds.
        let result =
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT) };
        if result == 0 {
            advised += end - start;
        } else {
            // EINVAL on kernels before 5.4; nothing is lost but the saving.
            let e = std::io::Error::last_os_error();
            tracing::debug!("madvise(MADV_PAGEOUT) {start:x}-{end:x}: {e}");
        }
    }
    advised
}

/// The address ranges of `maps` (the text of /proc/PID/maps) whose file's
/// name starts with one of `libraries`.
fn mapped_ranges(maps: &str, libraries: &[&str]) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|line| {
            // address perms offset dev inode path (the path may hold spaces).
            let mut fields = line.splitn(6, char::is_whitespace);
            let range = fields.next()?;
            let path = fields.nth(4)?.trim();
            let name = path.rsplit('/').next()?;
            if !libraries.iter().any(|prefix| name.starts_with(prefix)) {
                return None;
            }
            let (start, end) = range.split_once('-')?;
            Some((
                usize::from_str_radix(start, 16).ok()?,
                usize::from_str_radix(end, 16).ok()?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_web_views_libraries_are_picked_from_the_maps() {
        let maps = "\
7f0000000000-7f0000100000 r--p 00000000 fd:01 123 /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1
7f0000100000-7f0000200000 r-xp 00100000 fd:01 123 /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1
7f0000200000-7f0000300000 r-xp 00000000 fd:01 124 /usr/lib/x86_64-linux-gnu/libgtk-3.so.0.2406.32
7f0000300000-7f0000400000 rw-p 00000000 00:00 0 
7f0000400000-7f0000500000 r-xp 00000000 fd:01 125 /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7f0000600000-7f0000700000 r-xp 00000000 fd:01 126                        /opt/my apps/libwebkit2gtk-4.1.so.0
";
        assert_eq!(
            mapped_ranges(maps, WEBVIEW_ONLY),
            vec![
                (0x7f00_0000_0000, 0x7f00_0010_0000),
                (0x7f00_0010_0000, 0x7f00_0020_0000),
                (0x7f00_0040_0000, 0x7f00_0050_0000),
                (0x7f00_0060_0000, 0x7f00_0070_0000),
            ]
        );
    }

    #[test]
    fn the_kernel_takes_the_advice_for_a_mapped_library() {
        // The test binary does not load WebKit (the linker drops it), but libc it does.
        assert!(page_out(&["libc.so"]) > 0);
        assert_eq!(page_out(&["no-such-library.so"]), 0);
    }
}
