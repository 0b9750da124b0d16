//! The state file on disk: its framing (a signature, the format version, who wrote it, the
//! payload's length and checksum), the refusals of any file that is not a sound one of this
//! version, and the atomic write.
//!
//! ```text
//! offset  size  what
//! 0       24    "pushwire emulator state\n"
//! 24      4     format version, u32 little-endian
//! 28      1     n: length of the writer's name
//! 29      n     the writer, e.g. "pushwire 0.1.0"
//! 29+n    8     payload length, u64 little-endian
//! 37+n    4     CRC-32 of the payload, u32 little-endian
//! 41+n    ...   the payload: an `Image`, postcard-encoded
//! ```
//!
//! The signature, the version and the writer stay where they are in every version, so that a
//! file of another version is told apart and its writer named.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The signature every state file begins with.
pub const MAGIC: &[u8; 24] = b"pushwire emulator state\n";
/// The payload's format. A change to `Image`'s fields is a new version: a file of another is
/// refused, never misread, with a message naming both versions and the file's writer.
/// Refused rather than converted: an emulator's state is a test's fixture, remade by the
/// code that seeded it, and one reader per format keeps the file's checks in one place.
/// 3: a broadcast's targeting lists and a drip's include lists are optional (left out is
/// told apart from given empty); 2: subscribers and deliveries as compact rows (`rows.rs`);
/// 1: as their records.
pub const FORMAT: u32 = 3;

fn writer() -> String {
    format!("pushwire {}", env!("CARGO_PKG_VERSION"))
}

/// Why a state file was not read, or not written. Each message names the file; a refused
/// file is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    #[error("state file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "state file {path} is not a pushwire emulator state file (it does not begin with the \
         signature one does); it was not read, and is not written over: give another path"
    )]
    Foreign { path: PathBuf },
    #[error(
        "{path} is not a pushwire emulator state file: the state is not written over it; \
         give another path"
    )]
    NotOurs { path: PathBuf },
    #[error("the state could not be encoded for {path}: {why}")]
    Encoding { path: PathBuf, why: String },
    #[error(
        "state file {path} was written by {writer} in state format {found}; this emulator \
         ({reader}) reads format {FORMAT} only; it was not read, and is not written over: \
         start the version that wrote it, or give another path"
    )]
    OtherVersion {
        path: PathBuf,
        found: u32,
        writer: String,
        reader: String,
    },
    #[error(
        "state file {path} is cut short ({have} bytes where its header promises {want}): it \
         was not read, and is not written over"
    )]
    Truncated { path: PathBuf, have: u64, want: u64 },
    #[error("state file {path} is damaged ({why}): it was not read, and is not written over")]
    Corrupt { path: PathBuf, why: String },
}

impl StateFileError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        StateFileError::Io {
            path: path.to_owned(),
            source,
        }
    }

    fn corrupt(path: &Path, why: impl Into<String>) -> Self {
        StateFileError::Corrupt {
            path: path.to_owned(),
            why: why.into(),
        }
    }
}

/// The header before a payload.
fn header(payload: &[u8]) -> Vec<u8> {
    let writer = writer();
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    // The writer's name is short: "pushwire " and a version.
    out.push(writer.len().min(255) as u8);
    out.extend_from_slice(&writer.as_bytes()[..writer.len().min(255)]);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out
}

/// The payload of a state file's bytes, once the signature, version, length and checksum
/// say it is a sound file of this version.
pub fn payload<'b>(path: &Path, bytes: &'b [u8]) -> Result<&'b [u8], StateFileError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        // A file cut inside its signature is a truncated state file, not someone else's.
        if !bytes.is_empty() && MAGIC.starts_with(bytes) {
            return Err(StateFileError::Truncated {
                path: path.to_owned(),
                have: bytes.len() as u64,
                want: MAGIC.len() as u64,
            });
        }
        return Err(StateFileError::Foreign {
            path: path.to_owned(),
        });
    }
    let mut at = MAGIC.len();
    let truncated = |want: usize| StateFileError::Truncated {
        path: path.to_owned(),
        have: bytes.len() as u64,
        want: want as u64,
    };
    let mut take = |n: usize| -> Result<&'b [u8], StateFileError> {
        let part = bytes.get(at..at + n).ok_or_else(|| truncated(at + n))?;
        at += n;
        Ok(part)
    };
    let found = u32::from_le_bytes(take(4)?.try_into().unwrap_or_default());
    let writer_len = take(1)?[0] as usize;
    let writer_name = String::from_utf8_lossy(take(writer_len)?).into_owned();
    if found != FORMAT {
        return Err(StateFileError::OtherVersion {
            path: path.to_owned(),
            found,
            writer: writer_name,
            reader: writer(),
        });
    }
    let len = u64::from_le_bytes(take(8)?.try_into().unwrap_or_default());
    let crc = u32::from_le_bytes(take(4)?.try_into().unwrap_or_default());
    let start = at;
    let want = (start as u64).saturating_add(len);
    if (bytes.len() as u64) < want {
        return Err(StateFileError::Truncated {
            path: path.to_owned(),
            have: bytes.len() as u64,
            want,
        });
    }
    if (bytes.len() as u64) > want {
        return Err(StateFileError::corrupt(
            path,
            format!("{} bytes follow its payload", bytes.len() as u64 - want),
        ));
    }
    let body = &bytes[start..];
    if crc32fast::hash(body) != crc {
        return Err(StateFileError::corrupt(
            path,
            "its checksum does not match its content",
        ));
    }
    Ok(body)
}

/// The whole file's bytes.
pub fn read(path: &Path) -> Result<Vec<u8>, StateFileError> {
    std::fs::read(path).map_err(|e| StateFileError::io(path, e))
}

/// Decodes a checked payload.
pub fn decode<'b, T: serde::Deserialize<'b>>(
    path: &Path,
    body: &'b [u8],
) -> Result<T, StateFileError> {
    postcard::from_bytes(body).map_err(|e| StateFileError::corrupt(path, e.to_string()))
}

/// A payload that [`decode`] will not read back whole, as the damage it is.
pub fn inconsistent(path: &Path, why: String) -> StateFileError {
    StateFileError::corrupt(path, why)
}

/// A save never replaces a file that is not a state file (`emu.save("app.db")` by mistake):
/// an existing file must begin with the signature, or be empty.
fn refuse_foreign(path: &Path) -> Result<(), StateFileError> {
    use std::io::Read;
    let mut head = Vec::with_capacity(MAGIC.len());
    match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StateFileError::io(path, e)),
        Ok(f) => f
            .take(MAGIC.len() as u64)
            .read_to_end(&mut head)
            .map_err(|e| StateFileError::io(path, e))?,
    };
    if head.is_empty() || MAGIC.starts_with(&head) {
        return Ok(());
    }
    Err(StateFileError::NotOurs {
        path: path.to_owned(),
    })
}

/// The temporary files of `path`'s saves: `.NAME.` and random letters, then `.pushwire-tmp`.
fn temporary_name(path: &Path) -> (String, &'static str) {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    (format!(".{}.", name.unwrap_or_default()), ".pushwire-tmp")
}

/// Removes what saves to `path` cut short by a kill left beside it (their temporary files):
/// run at start, when no save of this state file is under way.
pub fn clear_leftovers(path: &Path) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let (prefix, suffix) = temporary_name(path);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // tempfile's six random letters between them: not the temporaries of another file
        // whose name begins with this one's (`team.state.bak`).
        let middle = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(suffix));
        if middle.is_some_and(|m| m.len() == 6 && m.bytes().all(|b| b.is_ascii_alphanumeric())) {
            // Another's removal or a file already gone is no matter: it was litter.
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Writes `payload` with its header to `path` so that, whatever happens meanwhile (a crash,
/// SIGKILL, a full disk), `path` holds either its old content or the whole new one: written
/// to a temporary file beside it, flushed to the disk, renamed over it, and the rename itself
/// flushed. The file is readable by its owner only: it holds the sites' keys. The number of
/// bytes written.
pub fn write_atomically(path: &Path, payload: &[u8]) -> Result<u64, StateFileError> {
    let fail = |e| StateFileError::io(path, e);
    refuse_foreign(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let head = header(payload);
    let (prefix, suffix) = temporary_name(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(suffix)
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(&head).map_err(fail)?;
    tmp.write_all(payload).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    // The rename is durable once the directory is: Unix only (Windows cannot open one, and
    // flushes the rename with the file). Some file systems (network and FUSE mounts, a
    // container's bind mount) cannot flush a directory, and say so: the rename is done all
    // the same, as durable as they make it.
    #[cfg(unix)]
    match std::fs::File::open(dir).and_then(|d| d.sync_all()) {
        Err(e)
            if !matches!(
                e.kind(),
                std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
            ) =>
        {
            return Err(fail(e))
        }
        _ => {}
    }
    Ok((head.len() + payload.len()) as u64)
}
