//! Who holds a state file: an emulator started on one keeps an advisory lock on
//! `<file>.lock` beside it for as long as it runs, and a second emulator started on the same
//! file is refused at start, naming the file and the holder. Two emulators on one file would
//! each overwrite the other's saves, and what one of them held would be lost.
//!
//! The lock is on a file of its own because the state file is replaced by a rename at each
//! save, which a lock on the state file itself would not follow. The operating system lets
//! go of it when the holder exits, however it exits, so a crash leaves no stale lock (only
//! the file, which the next holder takes over); a holder that stops removes the file,
//! before letting go of the lock, so that one who locked the removed file meanwhile sees it
//! is no longer the file at that path and tries again.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};

use crate::file_hold::open_held;

/// The lock on a state file, held until dropped.
#[derive(Debug)]
pub struct Holder {
    /// Held open: the lock lasts as long as it is.
    file: Option<File>,
    path: PathBuf,
}

impl Holder {
    /// The lock file of `state`: its name with `.lock` added, in its directory.
    pub fn path_of(state: &Path) -> PathBuf {
        let mut name = state.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        state.with_file_name(name)
    }

    /// Takes the lock on `state`, or refuses (`InvalidInput`, the caller's setting to
    /// correct) naming the file and who holds it.
    pub fn take(state: &Path) -> io::Result<Holder> {
        let path = Self::path_of(state);
        let mut tries = 0;
        let mut file = loop {
            tries += 1;
            match open_locked(&path) {
                // Locked, but a holder that stopped removed it meanwhile: not the file at
                // the path any more, so no lock on anything. Again, with the file there now.
                Ok(Some(file)) if !is_at(&file, &path) && tries < 5 => continue,
                Ok(Some(file)) => break file,
                Ok(None) => return Err(busy(state, &path)),
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("the state file's lock {}: {e}", path.display()),
                    ))
                }
            }
        };
        // Who holds it, for the message of the next one refused.
        let since = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC");
        let host = gethostname::gethostname();
        let described = format!(
            "pid {} on {}, since {since}\n",
            std::process::id(),
            host.to_string_lossy()
        );
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(described.as_bytes())?;
        file.flush()?;
        Ok(Holder {
            file: Some(file),
            path,
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        // On Unix removed while still locked (see the module), then closed, which lets go
        // of the lock; Windows removes no file another (this one) has open, so closed first.
        if cfg!(unix) {
            let _ = std::fs::remove_file(&self.path);
            drop(self.file.take());
        } else {
            drop(self.file.take());
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Why `state` is refused: who holds it, as the holder wrote it in the lock file (Windows
/// keeps a file opened for one from being read by another: the holder is unknown there).
fn busy(state: &Path, lock: &Path) -> io::Error {
    let holder = std::fs::read_to_string(lock).unwrap_or_default();
    let holder = match holder.trim() {
        "" => "another emulator".to_string(),
        described => format!("another emulator ({described})"),
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "the state file {} is in use by {holder}: two emulators on one state file would \
             overwrite each other's saves; stop that one, or give this one another state file",
            state.display()
        ),
    )
}

/// The lock file opened and held ([`open_held`]); `None` when another holds it.
fn open_locked(path: &Path) -> io::Result<Option<File>> {
    open_held(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
        path,
    )
}

/// Whether `file` is still the file at `path` (not removed or replaced since it was opened).
#[cfg(unix)]
fn is_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// Windows does not let a file be removed while another has it open: the file opened is the
/// one at the path.
#[cfg(not(unix))]
fn is_at(_file: &File, _path: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_naming_the_file_and_the_first_until_it_lets_go() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let state = dir.path().join("emulator.state");
        let first = Holder::take(&state).expect("the first takes it");
        assert_eq!(first.path(), dir.path().join("emulator.state.lock"));
        let refused = Holder::take(&state).expect_err("the second is refused");
        assert_eq!(refused.kind(), io::ErrorKind::InvalidInput);
        let message = refused.to_string();
        assert!(message.contains(&state.display().to_string()), "{message}");
        // Windows keeps the holder's file from being read by another: named on Unix only.
        if cfg!(unix) {
            assert!(
                message.contains(&format!("pid {}", std::process::id())),
                "{message}"
            );
        }
        drop(first);
        // Let go of, and no file left beside the state file.
        assert!(!dir.path().join("emulator.state.lock").exists());
        let again = Holder::take(&state).expect("free again once the first let go");
        drop(again);
    }
}
