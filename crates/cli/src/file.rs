//! Input files, read whole: a large regular file is mapped into memory rather than copied.
//!
//! `std::fs::read` copies a file from the kernel's page cache into fresh memory, which the
//! kernel must first zero, page by page: for a 35 MB log that was a fifth of the CPU time of a
//! `slo report`, all of it before the first row is read. A mapping lets the engine read the
//! page cache's own pages. Small files, and anything that is not a regular file (a pipe,
//! `/dev/stdin`, a file in /proc that says it is empty), are read the usual way.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;

/// Files at least this large (bytes) are mapped; below it, mapping saves nothing worth its
/// system calls.
const MAP_FROM: u64 = 1 << 20;

/// The bytes of a file: mapped, or read into memory.
pub enum Contents {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl Deref for Contents {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Contents::Mapped(map) => map,
            Contents::Read(bytes) => bytes,
        }
    }
}

/// The whole of the file at `path`; errors say what failed, without the path.
///
/// # Edge cases
/// A mapped file is the file's own pages: a program that shortens the file while `slo` reads
/// it (`logrotate`'s `copytruncate`) makes the read fail with SIGBUS, where a copy would have
/// read it whole or in part. Bytes appended meanwhile are not seen, as with a copy taken
/// before them. A file that cannot be mapped is read instead.
pub fn read(path: &str) -> std::io::Result<Contents> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() >= MAP_FROM {
        // SAFETY: the mapping is read-only and private, and lives as long as the `Contents`
        // that owns it. The engine assumes its bytes do not change while it reads them; a
        // file changed under it is the caveat documented above, the same one `ripgrep` takes.
        if let Ok(map) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
            return Ok(Contents::Mapped(map));
        }
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(Contents::Read(bytes))
}

#[cfg(test)]
mod tests {
    use super::{read, Contents, MAP_FROM};

    fn temp_file(name: &str, bytes: &[u8]) -> String {
        let path = std::env::temp_dir().join(format!("slo-file-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).expect("a temporary file");
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn a_large_file_is_mapped_and_reads_the_same_bytes() {
        // Not a repeating pattern: a misplaced page would show.
        let bytes: Vec<u8> = (0..MAP_FROM as usize + 12_345)
            .map(|k| (k.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let path = temp_file("large", &bytes);
        let contents = read(&path).expect("readable");
        assert!(matches!(contents, Contents::Mapped(_)));
        assert!(*contents == *bytes);
        drop(contents);
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn small_files_and_files_that_are_not_regular_are_read() {
        let path = temp_file("small", b"ttft_ms\n1\n");
        let contents = read(&path).expect("readable");
        assert!(matches!(contents, Contents::Read(_)));
        assert_eq!(&*contents, b"ttft_ms\n1\n");
        std::fs::remove_file(&path).ok();
        // Not a regular file: read as a stream, here an empty one.
        if std::path::Path::new("/dev/null").exists() {
            assert!(read("/dev/null").expect("readable").is_empty());
        }
        assert!(read("/no/such/file").is_err());
    }
}
