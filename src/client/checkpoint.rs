//! A bulk call's checkpoint: a file recording each chunk it sends and each chunk the
//! service stored, so that a run killed midway can be run again with the same input and
//! send only what was not stored.
//!
//! The file is JSON lines: a header naming the operation, its segment, the site (a SHA-256
//! of the client's root and API key, never the key) and a SHA-256 of its items (a checkpoint
//! made for another input or another site is refused), then `{"sent": i}` before chunk `i` is
//! sent, then `{"stored": i}` once the service stored it or `{"failed": i}` once it failed.
//! Each record is one `write` to a file opened for appending, so it reaches the kernel before
//! the call goes on and outlives a killed process; a torn last line (the process killed
//! mid-write) is cut off when the file is opened, so that the next record starts a line of
//! its own. A chunk sent and not stored was in flight when its run stopped: it is sent
//! again, and said so (adding or removing members twice acts once).
//!
//! A run holds an exclusive lock on the file (`flock` on Unix, the file opened unshared on
//! Windows) until it ends: a second run on the same checkpoint at once is refused by name,
//! since two would each send what the other is sending.

use crate::message;
use crate::validate::FIELD;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::error::{Error, Result};
use crate::file_hold::open_held;

/// The format's version, in every header.
const VERSION: u64 = 2;

/// What an earlier run with the same checkpoint did with a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prior {
    /// The service stored it: not sent again.
    Stored,
    /// Sent, with no answer recorded (the run stopped while it was in flight): sent again.
    InFlight,
    /// Sent and failed (its error was in that run's result): sent again.
    Failed,
}

impl Prior {
    pub fn name(self) -> &'static str {
        match self {
            Prior::Stored => "stored",
            Prior::InFlight => "in_flight",
            Prior::Failed => "failed",
        }
    }
}

/// The input a checkpoint is made for.
pub struct Input<'a> {
    /// The bulk operation (`add_subscribers`, `add_profiles`, `remove_profiles`).
    pub operation: &'a str,
    /// Its segment's id or name.
    pub segment: &'a str,
    /// The site it acts on ([`Transport::site`](super::Transport::site)).
    pub site: &'a str,
    pub items: &'a [String],
    pub chunk_size: usize,
}

impl Input<'_> {
    fn header(&self) -> Value {
        let mut digest = Sha256::new();
        for item in self.items {
            // Length-prefixed: ["ab", "c"] and ["a", "bc"] differ.
            digest.update((item.len() as u64).to_le_bytes());
            digest.update(item.as_bytes());
        }
        let sha: String = digest
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        json!({
            "pushwire_checkpoint": VERSION,
            "operation": self.operation,
            "segment": self.segment,
            "site": self.site,
            "items": self.items.len(),
            "chunk_size": self.chunk_size,
            "sha256": sha,
        })
    }
}

/// An open checkpoint: what earlier runs did, and the file this run records in.
pub struct Checkpoint {
    path: PathBuf,
    file: Mutex<File>,
    prior: HashMap<usize, Prior>,
}

impl Checkpoint {
    /// Opens the checkpoint at `path` for `input`, making it if there is none; a validation
    /// error naming `checkpoint` if it was made for another input or cannot be used.
    pub fn open(path: &Path, input: &Input<'_>) -> Result<Checkpoint> {
        let unusable = |e: std::io::Error| {
            Error::validation(
                "checkpoint",
                message![FIELD, format!(" {} cannot be used: {e}", path.display())],
            )
        };
        let header = input.header();
        let mut file = open_for_this_run(path).map_err(unusable)?.ok_or_else(|| {
            Error::validation(
                "checkpoint",
                message![
                    FIELD,
                    format!(
                        " {} is in use by another run: two runs on one checkpoint would \
                             each send what the other sends; wait for that one, or give this \
                             one another path",
                        path.display()
                    )
                ],
            )
        })?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(unusable)?;
        let not_one = || {
            Error::validation(
                "checkpoint",
                format!(
                    "{} is not a pushwire checkpoint (its first line is not one's header); \
                     it was left as it is",
                    path.display()
                ),
            )
        };
        let mut prior = HashMap::new();
        let Some(first_end) = text.iter().position(|b| *b == b'\n') else {
            // No whole line: new, or killed while writing its header, and begun afresh;
            // anything else is some other file, refused untouched.
            const OPENING: &[u8] = b"{\"pushwire_checkpoint\":";
            if !(text.starts_with(OPENING) || OPENING.starts_with(&text)) {
                return Err(not_one());
            }
            file.set_len(0).map_err(unusable)?;
            let mut line = header.to_string();
            line.push('\n');
            file.write_all(line.as_bytes()).map_err(unusable)?;
            return Ok(Checkpoint {
                path: path.to_path_buf(),
                file: Mutex::new(file),
                prior,
            });
        };
        let first = &text[..first_end];
        let found: Value = serde_json::from_slice(first).map_err(|_| not_one())?;
        if found.get("pushwire_checkpoint").is_none() {
            return Err(not_one());
        }
        if found != header {
            return Err(Error::validation(
                "checkpoint",
                message![
                    FIELD,
                    format!(
                        " {} was made {}: pass another path, or delete it to start over",
                        path.display(),
                        differences(&found, &header)
                    )
                ],
            ));
        }
        // A torn last line (the process killed mid-write) cut off, once the file is
        // known to be a checkpoint of this input: the next record appended starts a line
        // of its own rather than being glued to it.
        let whole = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        if whole < text.len() {
            file.set_len(whole as u64).map_err(unusable)?;
        }
        for line in text[first_end + 1..whole].split(|b| *b == b'\n') {
            let Ok(record) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            let index = |key| record.get(key).and_then(Value::as_u64);
            let (i, state) = match (index("sent"), index("stored"), index("failed")) {
                (Some(i), _, _) => (i, Prior::InFlight),
                (_, Some(i), _) => (i, Prior::Stored),
                (_, _, Some(i)) => (i, Prior::Failed),
                _ => continue,
            };
            // The latest record of a chunk wins (a later run sent it again), but a chunk
            // once stored stays stored: it is never sent again.
            let seen = prior.entry(i as usize).or_insert(state);
            if *seen != Prior::Stored {
                *seen = state;
            }
        }
        Ok(Checkpoint {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            prior,
        })
    }

    /// What an earlier run did with chunk `index`.
    pub fn prior(&self, index: usize) -> Option<Prior> {
        self.prior.get(&index).copied()
    }

    /// Records that chunk `index` is about to be sent.
    pub fn sent(&self, index: usize) -> Result<()> {
        self.record("sent", index)
    }

    /// Records that the service stored chunk `index`.
    pub fn stored(&self, index: usize) -> Result<()> {
        self.record("stored", index)
    }

    /// Records that chunk `index` failed (the service refused it, or its outcome is not
    /// known): a rerun sends it again.
    pub fn failed(&self, index: usize) -> Result<()> {
        self.record("failed", index)
    }

    fn record(&self, what: &str, index: usize) -> Result<()> {
        let line = format!("{{\"{what}\":{index}}}\n");
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // One write per record: appended whole, never interleaved with another's.
        file.write_all(line.as_bytes()).map_err(|e| {
            Error::Config(format!(
                "the checkpoint {} could not be written: {e}",
                self.path.display()
            ))
        })
    }
}

/// Which of the header's fields differ, for the refusal's message.
fn differences(found: &Value, wanted: &Value) -> String {
    if found.get("pushwire_checkpoint") != wanted.get("pushwire_checkpoint") {
        return "by another version of pushwire".to_string();
    }
    if found.get("site") != wanted.get("site") {
        // The site first: the rest may match, and a run there would skip every chunk.
        return "against another site (another base_url or api_key)".to_string();
    }
    let names = ["operation", "segment", "items", "chunk_size", "sha256"];
    let differ: Vec<&str> = names
        .into_iter()
        .filter(|name| found.get(name) != wanted.get(name))
        .map(|name| if name == "sha256" { "the items" } else { name })
        .collect();
    if differ.is_empty() {
        "in another format".to_string()
    } else {
        format!("for another input: its {} differ", differ.join(", "))
    }
}

/// The checkpoint opened for reading and appending, held for this run alone
/// ([`open_held`]): `None` when another run holds it.
fn open_for_this_run(path: &Path) -> std::io::Result<Option<File>> {
    open_held(
        OpenOptions::new().read(true).append(true).create(true),
        path,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path of its own in the temporary directory, removed first.
    fn fresh(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "pushwire-checkpoint-{}-{name}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        path
    }

    /// Appends `bytes` with no line's end: a record the process was killed writing.
    fn tear(path: &Path, bytes: &[u8]) {
        let mut f = OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(bytes).unwrap();
    }

    fn input(items: &[String]) -> Input<'_> {
        Input {
            operation: "add_subscribers",
            segment: "7",
            site: "site-a",
            items,
            chunk_size: 2,
        }
    }

    #[test]
    fn a_checkpoint_reads_back_what_was_stored_and_what_was_in_flight() {
        let path = fresh("read-back");
        let items: Vec<String> = (0..6).map(|i| format!("h{i}")).collect();
        let first = Checkpoint::open(&path, &input(&items)).unwrap();
        assert_eq!(first.prior(0), None);
        first.sent(0).unwrap();
        first.stored(0).unwrap();
        first.sent(1).unwrap();
        first.sent(2).unwrap();
        first.failed(2).unwrap();
        drop(first);
        // A torn record (the process killed mid-write) is absent.
        tear(&path, b"{\"stor");
        let again = Checkpoint::open(&path, &input(&items)).unwrap();
        assert_eq!(again.prior(0), Some(Prior::Stored));
        assert_eq!(again.prior(1), Some(Prior::InFlight));
        assert_eq!(again.prior(2), Some(Prior::Failed));
        assert_eq!(again.prior(3), None);
        // A later run sends the failed chunk again and stores it; a stored chunk stays so.
        again.sent(2).unwrap();
        again.stored(2).unwrap();
        again.sent(0).unwrap();
        drop(again);
        let third = Checkpoint::open(&path, &input(&items)).unwrap();
        assert_eq!(third.prior(2), Some(Prior::Stored));
        assert_eq!(third.prior(0), Some(Prior::Stored));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_torn_last_line_is_cut_off_and_the_next_record_starts_its_own() {
        let path = fresh("torn");
        let items: Vec<String> = (0..6).map(|i| format!("h{i}")).collect();
        let first = Checkpoint::open(&path, &input(&items)).unwrap();
        first.sent(0).unwrap();
        first.stored(0).unwrap();
        drop(first);
        tear(&path, b"{\"sent\":1");
        let again = Checkpoint::open(&path, &input(&items)).unwrap();
        again.sent(1).unwrap();
        drop(again);
        let third = Checkpoint::open(&path, &input(&items)).unwrap();
        assert_eq!(third.prior(0), Some(Prior::Stored));
        assert_eq!(third.prior(1), Some(Prior::InFlight));
        drop(third);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<Value>(l).is_ok()),
            "{text}"
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_checkpoint_in_use_by_another_run_is_refused_until_that_run_ends() {
        let path = fresh("in-use");
        let items: Vec<String> = vec!["a".into()];
        let running = Checkpoint::open(&path, &input(&items)).unwrap();
        let Err(Error::Validation(v)) = Checkpoint::open(&path, &input(&items)) else {
            panic!("a second run must be refused");
        };
        assert!(v.to_string().contains("in use by another run"), "{v}");
        drop(running);
        assert!(Checkpoint::open(&path, &input(&items)).is_ok());
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_checkpoint_made_against_another_site_is_refused_by_name() {
        let path = fresh("another-site");
        let items: Vec<String> = vec!["a".into()];
        drop(Checkpoint::open(&path, &input(&items)).unwrap());
        let elsewhere = Input {
            site: "site-b",
            ..input(&items)
        };
        let Err(Error::Validation(v)) = Checkpoint::open(&path, &elsewhere) else {
            panic!("another site must be refused");
        };
        assert!(v.to_string().contains("against another site"), "{v}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_checkpoint_made_for_another_input_is_refused_naming_what_differs() {
        let path = fresh("another-input");
        let items: Vec<String> = vec!["ab".into(), "c".into()];
        drop(Checkpoint::open(&path, &input(&items)).unwrap());
        let moved: Vec<String> = vec!["a".into(), "bc".into()];
        let Err(Error::Validation(v)) = Checkpoint::open(&path, &input(&moved)) else {
            panic!("another input must be refused");
        };
        assert!(v.to_string().contains("the items differ"), "{v}");
        let _ = std::fs::remove_file(&path);
    }
}
