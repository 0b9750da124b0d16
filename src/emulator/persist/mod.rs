//! The emulator's state kept across restarts: [`save`] writes the whole state to a file,
//! [`load`] reads one back. A file is written atomically, and one that is not a sound state
//! file of this format (someone else's, another version's, cut short, damaged) is refused,
//! never misread and never written over.
//!
//! - `image`: the state as the file holds it (every site and all it holds, the counters, the
//!   clock, the request log);
//!   with `chunked` the lists of millions, encoded and decoded on every core;
//! - `file`: the framing on disk, the refusals, the atomic write;
//! - `lock`: who holds a state file, so that no two emulators run on one.
//!
//! The state is encoded under the emulator's lock (requests wait meanwhile: a few hundred
//! milliseconds for a million subscribers), and written to disk after it is released.

mod chunked;
mod file;
mod image;
mod lock;
mod rows;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use self::file::{clear_leftovers, StateFileError, FORMAT, MAGIC};
use self::image::Image;
pub use self::lock::Holder;
use super::emu::Emu;
use super::state::State;

/// A save done: where, how big, how long it took.
#[derive(Debug, Clone)]
pub struct Saved {
    pub path: PathBuf,
    pub bytes: u64,
    pub took: Duration,
}

/// A state read from a file, and the default key of the emulator that saved it. No `Debug`:
/// it holds every site's key.
pub struct Loaded {
    pub state: State,
    pub default_key: String,
}

/// Writes the emulator's whole state to `path` (see `file::write_atomically`). Saves run one
/// at a time, so that an older state never lands over a newer one.
pub fn save(emu: &Emu, path: &Path) -> Result<Saved, StateFileError> {
    let _one_at_a_time = emu.saving.lock().unwrap_or_else(|e| e.into_inner());
    write(emu, path)
}

/// The save at a stop: the last one. A periodic save still under way on another thread
/// finds it done and writes nothing after it.
pub fn save_last(emu: &Emu, path: &Path) -> Result<Saved, StateFileError> {
    let _one_at_a_time = emu.saving.lock().unwrap_or_else(|e| e.into_inner());
    emu.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
    write(emu, path)
}

/// The save itself, the `saving` lock held.
fn write(emu: &Emu, path: &Path) -> Result<Saved, StateFileError> {
    let started = Instant::now();
    let encoded = {
        let st = emu.lock();
        let image = Image::of(&st, &emu.default_key);
        postcard::to_stdvec(&image)
    };
    let payload = encoded.map_err(|e| StateFileError::Encoding {
        path: path.to_owned(),
        why: e.to_string(),
    })?;
    let bytes = file::write_atomically(path, &payload)?;
    Ok(Saved {
        path: path.to_owned(),
        bytes,
        took: started.elapsed(),
    })
}

/// Reads the state saved in `path`.
pub fn load(path: &Path) -> Result<Loaded, StateFileError> {
    let bytes = file::read(path)?;
    let body = file::payload(path, &bytes)?;
    let image: Image<'_> = file::decode(path, body)?;
    let default_key = image.default_key.clone().into_owned();
    let state = image
        .into_state()
        .map_err(|why| file::inconsistent(path, why))?;
    Ok(Loaded { state, default_key })
}

/// Saves to the emulator's own state file, if it has one and anything changed since its last
/// save (the periodic save); `None` when there was nothing to do.
pub fn save_if_changed(emu: &Emu) -> Option<Result<Saved, StateFileError>> {
    let path = emu.state_file.as_deref()?;
    let _one_at_a_time = emu.saving.lock().unwrap_or_else(|e| e.into_inner());
    if emu.stopped.load(std::sync::atomic::Ordering::SeqCst) {
        return None;
    }
    let version = emu.changes.version();
    let last = emu
        .saved_version
        .swap(version, std::sync::atomic::Ordering::SeqCst);
    if last == version {
        return None;
    }
    let out = write(emu, path);
    if out.is_err() {
        // Try again at the next tick.
        emu.saved_version
            .store(u64::MAX, std::sync::atomic::Ordering::SeqCst);
    }
    Some(out)
}

#[cfg(test)]
mod tests;
