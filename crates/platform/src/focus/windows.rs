//! Windows: `GetForegroundWindow` (any thread may call it) → the owning
//! process → its image file name (`QueryFullProcessImageNameW`, which the
//! limited query right allows even for elevated processes).

use windows_sys::Win32::Foundation::CloseHandle;
use windows_sys::Win32::System::Threading::{
    OpenProcess, QueryFullProcessImageNameW, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{GetForegroundWindow, GetWindowThreadProcessId};

use super::{FocusError, FocusedApp};

pub fn focused() -> Result<FocusedApp, FocusError> {
    // SAFETY: plain Win32 calls; every pointer passed is to a live local.
    unsafe {
        let window = GetForegroundWindow();
        if window.is_null() {
            return Err(FocusError::NoFocus);
        }
        let mut pid = 0u32;
        GetWindowThreadProcessId(window, &mut pid);
        if pid == 0 {
            return Err(FocusError::NoFocus);
        }
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if process.is_null() {
            return Err(FocusError::Query(format!(
                "cannot open process {pid}: {}",
                std::io::Error::last_os_error()
            )));
        }
        let mut buffer = [0u16; 1024];
        let mut len = buffer.len() as u32;
        let ok =
            QueryFullProcessImageNameW(process, PROCESS_NAME_WIN32, buffer.as_mut_ptr(), &mut len);
        let error = std::io::Error::last_os_error();
        CloseHandle(process);
        if ok == 0 {
            return Err(FocusError::Query(format!(
                "cannot read process {pid}'s image name: {error}"
            )));
        }
        let path = String::from_utf16_lossy(&buffer[..len as usize]);
        let exe = path.rsplit(['\\', '/']).next().unwrap_or(&path).to_string();
        let stem = exe
            .strip_suffix(".exe")
            .or_else(|| exe.strip_suffix(".EXE"))
            .map(str::to_string);
        Ok(FocusedApp::new(exe, stem))
    }
}
