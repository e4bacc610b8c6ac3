//! The functional data store: what a drive holds, by logical byte address.
//!
//! Optional (off for timing-only runs, which then pay nothing for it). When
//! on, every write's data is kept and every read returns the newest data
//! written to its addresses; trimmed and never-written bytes read as zeros
//! (the NVMe "deallocated reads as zeros" behaviour, DLFEAT = 001b). The
//! store is indexed by LBA, not by physical page: garbage collection, the
//! write buffer, SLC folding and wear levelling move only metadata in the
//! timing model, so they neither touch nor slow the store.
//!
//! Two backings, chosen by [`StoreSpec`]:
//! * **memory**: sparse, one 4 KiB chunk per chunk ever written (memory
//!   grows with the data written, not with capacity);
//! * **file**: a sparse file of the drive's capacity (holes read as zeros;
//!   a trim punches a hole where the file system allows, else writes zeros).
//!   A file given by path is kept, so a later run (fio's `verify_only`) can
//!   read it; the automatic choice's temporary file is unlinked as soon as
//!   it is open (Unix; elsewhere removed at the end), so nothing is left behind.
//!
//! Assumption (stated in docs/models/data-store.md): a write's data is taken
//! when the host submits the command and a read's data when it completes, so
//! two commands in flight at once on overlapping addresses see each other in
//! submission order, as a drive without reordering would.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Granularity of the memory backing, bytes.
pub const CHUNK: u64 = 4096;

/// Drives up to this capacity get a memory store under [`StoreSpec::Auto`]
/// (64 GiB); larger ones a sparse temporary file.
pub const AUTO_MEMORY_LIMIT: u64 = 64 << 30;

/// Which backing a run's data store uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// Memory for drives up to [`AUTO_MEMORY_LIMIT`], else a sparse temporary file.
    Auto,
    /// Sparse memory.
    Memory,
    /// A sparse file at this path (created if missing, kept afterwards).
    /// On a system of several drives, a directory holding `NAME.img` per drive.
    File(PathBuf),
}

impl StoreSpec {
    /// Parse `on|auto`, `memory`, or a path (`file:PATH` or anything else).
    pub fn parse(s: &str) -> Result<StoreSpec, String> {
        let s = s.trim();
        match s {
            "" => Err("empty data store (expected on, memory, or a file path)".into()),
            "on" | "auto" => Ok(StoreSpec::Auto),
            "memory" => Ok(StoreSpec::Memory),
            _ => {
                let p = s.strip_prefix("file:").unwrap_or(s);
                if p.is_empty() {
                    return Err("file: needs a path (file:PATH)".into());
                }
                Ok(StoreSpec::File(PathBuf::from(p)))
            }
        }
    }
}

/// A data-store failure (file I/O), with the file it concerns.
#[derive(Debug, Clone)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

enum Backing {
    Memory(HashMap<u64, Box<[u8]>>),
    File {
        file: File,
        path: PathBuf,
        /// A temporary file: unlinked at once on Unix (the store keeps its
        /// descriptor), removed when the store is dropped elsewhere.
        temporary: bool,
    },
}

/// What a drive holds (see the module documentation).
pub struct DataStore {
    capacity: u64,
    backing: Backing,
    /// Bytes written into the store (counting overwrites).
    pub bytes_written: u64,
    /// Bytes read out of it.
    pub bytes_read: u64,
    /// Bytes trimmed.
    pub bytes_trimmed: u64,
}

impl std::fmt::Debug for DataStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataStore")
            .field("capacity", &self.capacity)
            .field("backing", &self.backing_name())
            .finish()
    }
}

impl DataStore {
    /// A sparse memory store of `capacity` bytes.
    pub fn memory(capacity: u64) -> DataStore {
        DataStore {
            capacity,
            backing: Backing::Memory(HashMap::new()),
            bytes_written: 0,
            bytes_read: 0,
            bytes_trimmed: 0,
        }
    }

    /// A store in the sparse file `path` (created if missing; an existing
    /// file keeps its data and is extended or refused if larger).
    pub fn file(path: &Path, capacity: u64, remove: bool) -> Result<DataStore, StoreError> {
        let err = |what: &str, e: std::io::Error| {
            StoreError(format!("data store '{}': {what}: {e}", path.display()))
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| err("cannot open", e))?;
        let len = file.metadata().map_err(|e| err("cannot stat", e))?.len();
        if len > capacity {
            return Err(StoreError(format!(
                "data store '{}' holds {len} B, more than the drive's capacity of {capacity} B (a file from another drive? remove it or give another path)",
                path.display()
            )));
        }
        if len < capacity {
            file.set_len(capacity)
                .map_err(|e| err("cannot size the sparse file", e))?;
        }
        // A temporary file is unlinked at once where the system allows it
        // (Unix): the store keeps its descriptor, so nothing is left behind
        // however the process ends or whoever holds the store last.
        #[cfg(unix)]
        if remove {
            std::fs::remove_file(path).map_err(|e| err("cannot unlink the temporary file", e))?;
        }
        Ok(DataStore {
            capacity,
            backing: Backing::File {
                file,
                path: path.to_path_buf(),
                temporary: remove,
            },
            bytes_written: 0,
            bytes_read: 0,
            bytes_trimmed: 0,
        })
    }

    /// The store `spec` asks for, for drive `name` of `capacity` bytes;
    /// `several`: the system has more than one drive (a path is then a
    /// directory with one `NAME.img` per drive).
    pub fn open(
        spec: &StoreSpec,
        name: &str,
        capacity: u64,
        several: bool,
    ) -> Result<DataStore, StoreError> {
        match spec {
            StoreSpec::Memory => Ok(DataStore::memory(capacity)),
            StoreSpec::Auto if capacity <= AUTO_MEMORY_LIMIT => Ok(DataStore::memory(capacity)),
            StoreSpec::Auto => {
                let p = std::env::temp_dir()
                    .join(format!("ssdlab-store-{}-{name}.img", std::process::id()));
                // A leftover of an earlier process with this pid is stale.
                let _ = std::fs::remove_file(&p);
                DataStore::file(&p, capacity, true)
            }
            StoreSpec::File(p) => {
                if several {
                    std::fs::create_dir_all(p).map_err(|e| {
                        StoreError(format!(
                            "data store directory '{}' (one NAME.img per drive on a system of several drives): {e}",
                            p.display()
                        ))
                    })?;
                    DataStore::file(&p.join(format!("{name}.img")), capacity, false)
                } else {
                    DataStore::file(p, capacity, false)
                }
            }
        }
    }

    /// Capacity, bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// `memory` or `file PATH`.
    pub fn backing_name(&self) -> String {
        match &self.backing {
            Backing::Memory(_) => "memory".into(),
            Backing::File {
                path,
                temporary: true,
                ..
            } => format!("temporary file {}", path.display()),
            Backing::File { path, .. } => format!("file {}", path.display()),
        }
    }

    /// Bytes of memory (or file blocks) the data occupies now.
    pub fn resident_bytes(&self) -> u64 {
        match &self.backing {
            Backing::Memory(m) => m.len() as u64 * CHUNK,
            Backing::File { file, .. } => file_blocks(file),
        }
    }

    fn check(&self, offset: u64, len: u64) -> Result<(), StoreError> {
        if offset.checked_add(len).is_none_or(|e| e > self.capacity) {
            return Err(StoreError(format!(
                "data store: {len} B at byte {offset} lies beyond the drive's capacity of {} B",
                self.capacity
            )));
        }
        Ok(())
    }

    /// Keep `data` at byte `offset`.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        self.check(offset, data.len() as u64)?;
        self.bytes_written += data.len() as u64;
        self.write_raw(offset, data)
    }

    /// [`DataStore::write`] without counting the bytes (the drive's own
    /// bookkeeping: a power loss putting back an older version).
    pub(crate) fn write_raw(&mut self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        self.check(offset, data.len() as u64)?;
        match &mut self.backing {
            Backing::Memory(m) => {
                let mut done = 0usize;
                while done < data.len() {
                    let at = offset + done as u64;
                    let (c, within) = (at / CHUNK, (at % CHUNK) as usize);
                    let n = (CHUNK as usize - within).min(data.len() - done);
                    let chunk = m
                        .entry(c)
                        .or_insert_with(|| vec![0u8; CHUNK as usize].into_boxed_slice());
                    chunk[within..within + n].copy_from_slice(&data[done..done + n]);
                    done += n;
                }
                Ok(())
            }
            Backing::File { file, path, .. } => write_all_at(file, data, offset)
                .map_err(|e| StoreError(format!("data store '{}': write: {e}", path.display()))),
        }
    }

    /// Fill `buf` with the bytes at `offset`.
    pub fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        self.check(offset, buf.len() as u64)?;
        self.bytes_read += buf.len() as u64;
        self.read_raw(offset, buf)
    }

    /// [`DataStore::read`] without counting the bytes (the drive's own
    /// bookkeeping: the content of a version a power loss may put back).
    pub(crate) fn read_raw(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        self.check(offset, buf.len() as u64)?;
        match &self.backing {
            Backing::Memory(m) => {
                let mut done = 0usize;
                while done < buf.len() {
                    let at = offset + done as u64;
                    let (c, within) = (at / CHUNK, (at % CHUNK) as usize);
                    let n = (CHUNK as usize - within).min(buf.len() - done);
                    match m.get(&c) {
                        Some(chunk) => {
                            buf[done..done + n].copy_from_slice(&chunk[within..within + n])
                        }
                        None => buf[done..done + n].fill(0),
                    }
                    done += n;
                }
                Ok(())
            }
            Backing::File { file, path, .. } => read_exact_at(file, buf, offset)
                .map_err(|e| StoreError(format!("data store '{}': read: {e}", path.display()))),
        }
    }

    /// Deallocate `len` bytes at `offset`: they read as zeros from now on.
    pub fn trim(&mut self, offset: u64, len: u64) -> Result<(), StoreError> {
        self.check(offset, len)?;
        self.bytes_trimmed += len;
        self.trim_raw(offset, len)
    }

    /// [`DataStore::trim`] without counting the bytes (the drive's own
    /// bookkeeping: a power loss leaving a unit unmapped).
    pub(crate) fn trim_raw(&mut self, offset: u64, len: u64) -> Result<(), StoreError> {
        self.check(offset, len)?;
        match &mut self.backing {
            Backing::Memory(m) => {
                let end = offset + len;
                let mut at = offset;
                while at < end {
                    let (c, within) = (at / CHUNK, at % CHUNK);
                    let n = (CHUNK - within).min(end - at);
                    if n == CHUNK {
                        m.remove(&c);
                    } else if let Some(chunk) = m.get_mut(&c) {
                        chunk[within as usize..(within + n) as usize].fill(0);
                    }
                    at += n;
                }
                Ok(())
            }
            Backing::File { file, path, .. } => punch_hole(file, offset, len)
                .map_err(|e| StoreError(format!("data store '{}': trim: {e}", path.display()))),
        }
    }
}

/// Shared use of a file-backed store (serving: several connection threads
/// at once). Positioned reads and writes on the one file need no lock; the
/// operating system orders overlapping ones. A memory store cannot be
/// shared this way (an error says so).
impl DataStore {
    fn shared_file(&self, what: &str) -> Result<(&File, &Path), StoreError> {
        match &self.backing {
            Backing::File { file, path, .. } => Ok((file, path)),
            Backing::Memory(_) => Err(StoreError(format!(
                "data store: {what} from several threads needs a file backing"
            ))),
        }
    }

    /// [`DataStore::write`] from any thread (file backing).
    pub fn write_shared(&self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        self.check(offset, data.len() as u64)?;
        let (file, path) = self.shared_file("write")?;
        write_all_at(file, data, offset)
            .map_err(|e| StoreError(format!("data store '{}': write: {e}", path.display())))
    }

    /// [`DataStore::read`] from any thread (file backing).
    pub fn read_shared(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        self.check(offset, buf.len() as u64)?;
        let (file, path) = self.shared_file("read")?;
        read_exact_at(file, buf, offset)
            .map_err(|e| StoreError(format!("data store '{}': read: {e}", path.display())))
    }

    /// [`DataStore::trim`] from any thread (file backing).
    pub fn trim_shared(&self, offset: u64, len: u64) -> Result<(), StoreError> {
        self.check(offset, len)?;
        let (file, path) = self.shared_file("trim")?;
        punch_hole(file, offset, len)
            .map_err(|e| StoreError(format!("data store '{}': trim: {e}", path.display())))
    }

    /// Which parts of `[offset, offset + len)` hold data and which are holes
    /// (never written, or trimmed: they read as zeros), as (offset, length,
    /// data) runs in order, at the file system's block granularity. Without
    /// hole detection (or for a memory store), all of it is data.
    pub fn extents_shared(
        &self,
        offset: u64,
        len: u64,
    ) -> Result<Vec<(u64, u64, bool)>, StoreError> {
        self.check(offset, len)?;
        let end = offset + len;
        #[cfg(target_os = "linux")]
        if let Backing::File { file, .. } = &self.backing {
            use std::os::unix::io::AsRawFd;
            let fd = file.as_raw_fd();
            let seek = |at: u64, whence: libc::c_int| -> Option<u64> {
                // SAFETY: lseek on a descriptor this File owns; it moves only
                // the file offset, which positioned I/O does not use.
                let r = unsafe { libc::lseek(fd, at as libc::off_t, whence) };
                (r >= 0).then_some(r as u64)
            };
            let mut out = Vec::new();
            let mut at = offset;
            while at < end {
                // Next data at or after `at` (none: the rest is a hole).
                let data = seek(at, libc::SEEK_DATA).unwrap_or(end).min(end);
                if data > at {
                    out.push((at, data - at, false));
                    at = data;
                    continue;
                }
                let hole = seek(at, libc::SEEK_HOLE).unwrap_or(end).min(end);
                if hole <= at {
                    // No hole detection here: call the rest data.
                    out.push((at, end - at, true));
                    break;
                }
                out.push((at, hole - at, true));
                at = hole;
            }
            return Ok(out);
        }
        Ok(vec![(offset, end - offset, true)])
    }

    /// Make everything written so far durable (`fdatasync` of the file; a
    /// memory store has nothing to sync).
    pub fn sync(&self) -> Result<(), StoreError> {
        match &self.backing {
            Backing::File { file, path, .. } => file
                .sync_data()
                .map_err(|e| StoreError(format!("data store '{}': sync: {e}", path.display()))),
            Backing::Memory(_) => Ok(()),
        }
    }
}

impl Drop for DataStore {
    fn drop(&mut self) {
        #[cfg(not(unix))]
        if let Backing::File {
            path,
            temporary: true,
            ..
        } = &self.backing
        {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(unix)]
fn write_all_at(file: &File, data: &[u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, data, offset)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn write_all_at(file: &File, data: &[u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.write_all(data)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// Deallocate a byte range of the file: punch a hole (Linux), else write zeros.
fn punch_hole(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: fallocate on a descriptor this File owns; no memory is shared.
        let r = unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        if r == 0 {
            return Ok(());
        }
    }
    // No hole punching here: write zeros.
    let zeros = vec![0u8; CHUNK as usize * 16];
    let mut at = offset;
    let end = offset + len;
    while at < end {
        let n = (zeros.len() as u64).min(end - at) as usize;
        write_all_at(file, &zeros[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

/// Bytes of disk a (sparse) file occupies.
fn file_blocks(file: &File) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        file.metadata().map(|m| m.blocks() * 512).unwrap_or(0)
    }
    #[cfg(not(unix))]
    {
        file.metadata().map(|m| m.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The store against a plain byte array: random writes, trims and reads
    /// of any alignment agree, for both backings.
    fn shadow(ops: &[(u8, u64, u64, u8)], store: &mut DataStore) {
        let cap = store.capacity();
        let mut model = vec![0u8; cap as usize];
        for &(kind, off, len, val) in ops {
            let off = off % cap;
            let len = len.min(cap - off);
            match kind % 3 {
                0 => {
                    let data: Vec<u8> = (0..len).map(|i| val.wrapping_add(i as u8)).collect();
                    store.write(off, &data).unwrap();
                    model[off as usize..(off + len) as usize].copy_from_slice(&data);
                }
                1 => {
                    store.trim(off, len).unwrap();
                    model[off as usize..(off + len) as usize].fill(0);
                }
                _ => {
                    let mut buf = vec![0xAAu8; len as usize];
                    store.read(off, &mut buf).unwrap();
                    assert_eq!(buf, &model[off as usize..(off + len) as usize]);
                }
            }
        }
        let mut all = vec![0u8; cap as usize];
        store.read(0, &mut all).unwrap();
        assert_eq!(all, model);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn memory_store_matches_a_byte_array(ops in prop::collection::vec((0u8..3, 0u64..65536, 0u64..20000, any::<u8>()), 1..60)) {
            shadow(&ops, &mut DataStore::memory(65536));
        }

        #[test]
        fn file_store_matches_a_byte_array(ops in prop::collection::vec((0u8..3, 0u64..65536, 0u64..20000, any::<u8>()), 1..40)) {
            let dir = std::env::temp_dir().join(format!("ssdlab-store-test-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let p = dir.join(format!("s{}.img", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
            let mut s = DataStore::file(&p, 65536, true).unwrap();
            prop_assert!(!cfg!(unix) || !p.exists(), "a temporary store is unlinked at once");
            shadow(&ops, &mut s);
            drop(s);
            prop_assert!(!p.exists(), "a temporary store is removed");
        }
    }

    #[test]
    fn unwritten_and_trimmed_bytes_read_as_zeros_and_memory_is_freed() {
        let mut s = DataStore::memory(1 << 20);
        let mut b = vec![7u8; 8192];
        s.read(4096, &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 0));
        s.write(4096, &[1u8; 8192]).unwrap();
        assert_eq!(s.resident_bytes(), 8192);
        s.trim(4096, 8192).unwrap();
        assert_eq!(s.resident_bytes(), 0, "whole trimmed chunks are freed");
        s.read(4096, &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 0));
    }

    #[test]
    fn out_of_range_and_oversized_files_are_errors() {
        let mut s = DataStore::memory(8192);
        let e = s.write(8000, &[0u8; 512]).unwrap_err();
        assert!(e.0.contains("beyond the drive's capacity"), "{e}");
        let dir = std::env::temp_dir().join(format!("ssdlab-store-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("big.img");
        std::fs::write(&p, vec![0u8; 16384]).unwrap();
        let e = DataStore::file(&p, 8192, false).unwrap_err();
        assert!(e.0.contains("more than the drive's capacity"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_kept_file_store_holds_its_data_for_the_next_run() {
        let dir = std::env::temp_dir().join(format!("ssdlab-store-keep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("d.img");
        let _ = std::fs::remove_file(&p);
        {
            let mut s =
                DataStore::open(&StoreSpec::File(p.clone()), "nvme0", 1 << 20, false).unwrap();
            s.write(12345, b"hello").unwrap();
        }
        let mut s = DataStore::open(&StoreSpec::File(p.clone()), "nvme0", 1 << 20, false).unwrap();
        let mut b = [0u8; 5];
        s.read(12345, &mut b).unwrap();
        assert_eq!(&b, b"hello");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn spec_parses() {
        assert_eq!(StoreSpec::parse("on").unwrap(), StoreSpec::Auto);
        assert_eq!(StoreSpec::parse("memory").unwrap(), StoreSpec::Memory);
        assert_eq!(
            StoreSpec::parse("file:/tmp/x").unwrap(),
            StoreSpec::File("/tmp/x".into())
        );
        assert!(StoreSpec::parse("").is_err());
        assert!(StoreSpec::parse("file:").is_err());
    }
}
