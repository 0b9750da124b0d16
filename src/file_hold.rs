//! A file held by one opener at a time, for as long as it stays open: an emulator's state
//! file (through its lock file) and a bulk call's checkpoint. The system lets go of the hold
//! when the holder closes the file or its process ends, however it ends, so a crash leaves
//! none behind.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// `path` opened with `options` and held: an exclusive `flock` on Unix (held by this open
/// file, whichever process or thread opens the path next); on Windows the file opened
/// unshared. `None` when another holds it.
#[cfg(unix)]
pub fn open_held(options: &OpenOptions, path: &Path) -> io::Result<Option<File>> {
    use rustix::fs::{flock, FlockOperation};
    let file = options.open(path)?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `path` opened with `options` for this opener alone (no sharing): held until closed;
/// `None` when another has it open so (a sharing violation).
#[cfg(windows)]
pub fn open_held(options: &OpenOptions, path: &Path) -> io::Result<Option<File>> {
    use std::os::windows::fs::OpenOptionsExt;
    const ERROR_SHARING_VIOLATION: i32 = 32;
    match options.clone().share_mode(0).open(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.raw_os_error() == Some(ERROR_SHARING_VIOLATION) => Ok(None),
        Err(e) => Err(e),
    }
}
