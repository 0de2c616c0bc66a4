//! A minimal writer of the `newc` cpio format the kernel unpacks as its initramfs
//! (Documentation/driver-api/early-userspace/buffer-format.rst describes the format).

use std::io::{self, Write};

/// An archive being written: directories, regular files and symlinks, owned by root.
pub struct Cpio<W: Write> {
    out: W,
    ino: u32,
    written: u64,
}

const MODE_DIR: u32 = 0o040000;
const MODE_FILE: u32 = 0o100000;
const MODE_LINK: u32 = 0o120000;

impl<W: Write> Cpio<W> {
    pub fn new(out: W) -> Self {
        Cpio { out, ino: 1, written: 0 }
    }

    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) -> io::Result<()> {
        let name = name.trim_start_matches('/');
        let namesize = name.len() + 1;
        let nlink = if mode & 0o170000 == MODE_DIR { 2 } else { 1 };
        let header = format!(
            "070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
            self.ino,
            mode,
            0,
            0,
            nlink,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            namesize,
            0
        );
        self.ino += 1;
        self.put(header.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.pad()?;
        self.put(data)?;
        self.pad()
    }

    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.written += b.len() as u64;
        self.out.write_all(b)
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = (4 - self.written % 4) % 4;
        self.put(&[0u8; 3][..n as usize])
    }

    pub fn dir(&mut self, name: &str) -> io::Result<()> {
        self.entry(name, MODE_DIR | 0o755, &[])
    }

    pub fn file(&mut self, name: &str, perm: u32, data: &[u8]) -> io::Result<()> {
        self.entry(name, MODE_FILE | (perm & 0o7777), data)
    }

    pub fn symlink(&mut self, name: &str, target: &str) -> io::Result<()> {
        self.entry(name, MODE_LINK | 0o777, target.as_bytes())
    }

    /// Writes the trailer and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.ino = 0;
        self.entry("TRAILER!!!", 0, &[])?;
        let n = (512 - self.written % 512) % 512;
        self.put(&vec![0u8; n as usize])?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_aligned_and_end_with_the_trailer() {
        let mut c = Cpio::new(Vec::new());
        c.dir("/bin").unwrap();
        c.file("init", 0o755, b"#!/bin/sh\n").unwrap();
        c.symlink("bin/sh", "busybox").unwrap();
        let out = c.finish().unwrap();
        assert_eq!(out.len() % 512, 0);
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("070701"));
        // The file entry: header (110 bytes), "init\0" padded to 4, then data.
        let at = text.find("init\0").unwrap();
        assert_eq!(text.find("#!/bin/sh").unwrap() % 4, 0, "name padded so data starts aligned");
        assert_eq!(&text[at - 110 + 14..at - 110 + 22], "000081ed", "regular file, 0755");
        assert!(text.contains("#!/bin/sh\n"));
        assert!(text.contains("TRAILER!!!"));
        // Every header starts on a 4-byte boundary.
        for (i, _) in text.match_indices("070701") {
            assert_eq!(i % 4, 0);
        }
    }
}
