//! Whether a toolgate binary is built to be hard to exploit: position
//! independent (so the kernel loads it at a random address: ASLR, libc's
//! code included in a static build) with full RELRO (relocated data and the
//! GOT made read-only before `main`, every symbol bound at start). The
//! daemon of a separated set-up parses agent-written text with C code
//! (tree-sitter, SQLite) as a more privileged user than the agent, so
//! `toolgate setup separated` refuses a binary without both
//! (docs/decisions/0021-aslr-for-every-process.md).
//!
//! Read from the ELF file itself: its type, its program headers and its
//! dynamic section. Nothing is run or loaded.

use std::path::Path;

/// What an executable's ELF headers say about its hardening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hardening {
    /// `ET_DYN`: position independent, loaded at a random address.
    pub pie: bool,
    /// A `PT_GNU_RELRO` segment and `BIND_NOW`: full RELRO.
    pub full_relro: bool,
}

impl Hardening {
    /// Both: what a separated daemon needs.
    pub(crate) fn hardened(self) -> bool {
        self.pie && self.full_relro
    }
}

const PT_DYNAMIC: u32 = 2;
const PT_GNU_RELRO: u32 = 0x6474_e552;
const DT_NULL: u64 = 0;
const DT_FLAGS: u64 = 30;
const DT_FLAGS_1: u64 = 0x6fff_fffb;
const DF_BIND_NOW: u64 = 0x8;
const DF_1_NOW: u64 = 0x1;

/// The hardening of the 64-bit little-endian ELF executable at `path`;
/// `None` for anything else (another format, a truncated file).
pub(crate) fn of_file(path: &Path) -> Option<Hardening> {
    let bytes = std::fs::read(path).ok()?;
    of_bytes(&bytes)
}

/// [`of_file`] on the file's bytes.
pub(crate) fn of_bytes(b: &[u8]) -> Option<Hardening> {
    // ELF magic, ELFCLASS64, ELFDATA2LSB.
    if b.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let u16_at = |o: usize| Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
    let pie = u16_at(16)? == 3;
    let phoff = usize::try_from(u64_at(32)?).ok()?;
    let phentsize = usize::from(u16_at(54)?);
    let phnum = usize::from(u16_at(56)?);
    let mut relro = false;
    let mut now = false;
    for i in 0..phnum {
        let ph = phoff.checked_add(i.checked_mul(phentsize)?)?;
        match u32_at(ph)? {
            PT_GNU_RELRO => relro = true,
            PT_DYNAMIC => {
                let off = usize::try_from(u64_at(ph + 8)?).ok()?;
                let size = usize::try_from(u64_at(ph + 32)?).ok()?;
                let mut at = off;
                while at + 16 <= off.checked_add(size)? {
                    let (tag, val) = (u64_at(at)?, u64_at(at + 8)?);
                    match tag {
                        DT_NULL => break,
                        DT_FLAGS if val & DF_BIND_NOW != 0 => now = true,
                        DT_FLAGS_1 if val & DF_1_NOW != 0 => now = true,
                        _ => {}
                    }
                    at += 16;
                }
            }
            _ => {}
        }
    }
    Some(Hardening {
        pie,
        full_relro: relro && now,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This very test binary is built with the workspace's flags, as the
    /// toolgate binary is: position independent, full RELRO.
    #[test]
    fn the_build_is_position_independent_with_full_relro() {
        let me = std::env::current_exe().unwrap();
        let h = of_file(&me).expect("an ELF file");
        assert!(h.pie, "{} is not position independent", me.display());
        assert!(h.full_relro, "{} lacks full RELRO", me.display());
    }

    #[test]
    fn anything_but_a_64_bit_elf_is_not_judged() {
        assert_eq!(of_bytes(b""), None);
        assert_eq!(of_bytes(b"#!/bin/sh\necho hi\n"), None);
        assert_eq!(of_bytes(b"\x7fELF\x01\x01\x01"), None);
        let mut truncated = b"\x7fELF\x02\x01\x01".to_vec();
        truncated.resize(40, 0);
        assert_eq!(of_bytes(&truncated), None);
    }

    /// A minimal header with no program headers: its type decides `pie`,
    /// and without RELRO nothing is full RELRO.
    #[test]
    fn the_type_decides_position_independence() {
        let mut h = vec![0u8; 64];
        h[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        h[16] = 2; // ET_EXEC
        assert_eq!(
            of_bytes(&h),
            Some(Hardening {
                pie: false,
                full_relro: false
            })
        );
        h[16] = 3; // ET_DYN
        assert!(of_bytes(&h).unwrap().pie);
        assert!(!of_bytes(&h).unwrap().hardened());
    }
}
