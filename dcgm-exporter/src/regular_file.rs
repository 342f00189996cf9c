//! Opening the files an operator names (the counters file, HPC job-mapping files) only when
//! they are regular files, without ever blocking: a FIFO put in a file's place would block
//! `open` until a writer comes (the collector thread with it), and a device such as
//! `/dev/zero` would be read without end.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

/// What a path is when it is not a regular file, in words.
fn not_regular(meta: &Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    Some(if t.is_file() {
        return None;
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    })
}

fn refuse(meta: &Metadata) -> io::Result<()> {
    match not_regular(meta) {
        None => Ok(()),
        Some(what) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {what}, not a regular file"),
        )),
    }
}

/// Opens `path` for reading if it is a regular file (symbolic links followed, as Kubernetes
/// ConfigMap volumes need).
///
/// The type is looked at before opening, so that a device is never opened, and again on the
/// open file: `O_NONBLOCK` makes an `open` of a FIFO put there in between return at once,
/// and the second look refuses it. On a regular file `O_NONBLOCK` changes nothing.
///
/// # Errors
///
/// The file cannot be opened, or it is not a regular file (`InvalidInput`, saying what it is).
pub fn open(path: &Path) -> io::Result<File> {
    refuse(&std::fs::metadata(path)?)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    refuse(&file.metadata()?)?;
    Ok(file)
}

/// Reads a regular file of at most `cap` bytes; a larger one is never read past `cap + 1`.
///
/// # Errors
///
/// As [`open`]; a read error; a file larger than `cap` bytes (`FileTooLarge`).
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    open(path)?.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("it is larger than {cap} bytes"),
        ));
    }
    Ok(buf)
}

/// [`read_capped`], with the metadata of the file as opened (what was read is that version).
///
/// # Errors
///
/// As [`read_capped`].
pub fn read_capped_versioned(path: &Path, cap: u64) -> io::Result<(Vec<u8>, Metadata)> {
    let file = open(path)?;
    let meta = file.metadata()?;
    let mut buf = Vec::new();
    file.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("it is larger than {cap} bytes"),
        ));
    }
    Ok((buf, meta))
}
