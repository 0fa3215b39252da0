//! A FLAC reader that checks the file's metadata blocks before symphonia
//! reads them. symphonia-metadata 0.5 (and 0.6) allocates a Vorbis comment
//! or picture at the length the file claims, before reading it: a corrupt
//! length asks for up to 4 GB, which fails as an abort, not an error
//! (found by `fuzz/fuzz_targets/decode_audio.rs`). Each claimed length is
//! checked against the block it sits in; a FLAC file that passes goes to
//! symphonia's own reader, unchanged.

use std::io::{Seek, SeekFrom};

use symphonia::core::errors::{Error, Result};
use symphonia::core::formats::{FormatOptions, FormatReader};
use symphonia::core::io::{MediaSourceStream, ReadBytes};
use symphonia::core::probe::{Descriptor, Instantiate, QueryDescriptor};
use symphonia::default::formats::FlacReader;

/// The error for a length that runs past its block (the decoder names it).
pub(super) const CLAIMS_TOO_MUCH: &str = "a FLAC metadata block claims more bytes than it holds";

const VORBIS_COMMENT: u8 = 4;
const PICTURE: u8 = 6;

/// The probe's entry for FLAC: symphonia's markers, our check first.
pub fn descriptor() -> Descriptor {
    Descriptor {
        inst: Instantiate::Format(open),
        ..FlacReader::query()[0]
    }
}

fn open(mut source: MediaSourceStream, options: &FormatOptions) -> Result<Box<dyn FormatReader>> {
    let start = source.pos();
    check_metadata(&mut source)?;
    source.seek(SeekFrom::Start(start))?;
    Ok(Box::new(FlacReader::try_new(source, options)?))
}

/// Walks the metadata blocks after the `fLaC` marker; the blocks whose
/// readers allocate by a claimed length are read (each ≤ 16 MiB, the
/// format's limit) and checked.
fn check_metadata(source: &mut MediaSourceStream) -> Result<()> {
    let mut marker = [0u8; 4];
    source.read_buf_exact(&mut marker)?;
    loop {
        let header = source.read_be_u32()?;
        let last = header & 0x8000_0000 != 0;
        let kind = ((header >> 24) & 0x7f) as u8;
        let len = (header & 0x00ff_ffff) as usize;
        if kind == VORBIS_COMMENT || kind == PICTURE {
            let mut block = vec![0u8; len];
            source.read_buf_exact(&mut block)?;
            let fits = if kind == VORBIS_COMMENT {
                vorbis_comment_fits(&block)
            } else {
                picture_fits(&block)
            };
            if !fits {
                return Err(Error::DecodeError(CLAIMS_TOO_MUCH));
            }
        } else {
            source.ignore_bytes(len as u64)?;
        }
        if last {
            return Ok(());
        }
    }
}

/// Reads length-prefixed fields of a block, refusing any that runs past it.
struct Fields<'a> {
    rest: &'a [u8],
}

impl Fields<'_> {
    fn u32(&mut self, little_endian: bool) -> Option<u32> {
        let (head, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        Some(if little_endian {
            u32::from_le_bytes(*head)
        } else {
            u32::from_be_bytes(*head)
        })
    }

    fn skip(&mut self, len: u32) -> Option<()> {
        self.rest = self.rest.get(len as usize..)?;
        Some(())
    }

    /// A length (in the block's byte order) and that many bytes.
    fn sized(&mut self, little_endian: bool) -> Option<()> {
        let len = self.u32(little_endian)?;
        self.skip(len)
    }
}

/// Vendor string, count, then each comment: all little-endian lengths.
fn vorbis_comment_fits(block: &[u8]) -> bool {
    let mut f = Fields { rest: block };
    (|| {
        f.sized(true)?;
        let count = f.u32(true)?;
        for _ in 0..count {
            f.sized(true)?;
        }
        Some(())
    })()
    .is_some()
}

/// Type, MIME type, description, four dimensions, then the image: big-endian.
fn picture_fits(block: &[u8]) -> bool {
    let mut f = Fields { rest: block };
    (|| {
        f.u32(false)?;
        f.sized(false)?;
        f.sized(false)?;
        f.skip(16)?;
        f.sized(false)
    })()
    .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment_block(vendor: &str, comments: &[&str], claim: Option<u32>) -> Vec<u8> {
        let mut b = (vendor.len() as u32).to_le_bytes().to_vec();
        b.extend_from_slice(vendor.as_bytes());
        b.extend_from_slice(&(comments.len() as u32).to_le_bytes());
        for (i, c) in comments.iter().enumerate() {
            let len = match claim {
                Some(n) if i + 1 == comments.len() => n,
                _ => c.len() as u32,
            };
            b.extend_from_slice(&len.to_le_bytes());
            b.extend_from_slice(c.as_bytes());
        }
        b
    }

    #[test]
    fn comments_that_fit_their_block_pass_and_an_inflated_length_does_not() {
        let good = comment_block("reference libFLAC", &["TITLE=x", "ARTIST=y"], None);
        assert!(vorbis_comment_fits(&good));
        let inflated = comment_block(
            "reference libFLAC",
            &["TITLE=x", "ARTIST=y"],
            Some(2_526_451_350),
        );
        assert!(!vorbis_comment_fits(&inflated));
        assert!(!vorbis_comment_fits(&good[..good.len() - 1]), "cut short");
    }

    #[test]
    fn a_picture_whose_data_length_runs_past_the_block_is_refused() {
        let mut p = 3u32.to_be_bytes().to_vec(); // front cover
        for field in ["image/png", ""] {
            p.extend_from_slice(&(field.len() as u32).to_be_bytes());
            p.extend_from_slice(field.as_bytes());
        }
        p.extend_from_slice(&[0u8; 16]);
        p.extend_from_slice(&4u32.to_be_bytes());
        p.extend_from_slice(b"\x89PNG");
        assert!(picture_fits(&p));
        let n = p.len();
        p[n - 8..n - 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(!picture_fits(&p));
    }
}
