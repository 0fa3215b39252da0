//! GPT-2 byte-level BPE: token strings in tokenizer files use a printable
//! stand-in character for every byte; whisper.cpp wants the raw bytes back.

use std::collections::HashMap;

/// The GPT-2 `bytes_to_unicode` table, inverted: stand-in char → byte.
pub fn unicode_to_byte() -> HashMap<char, u8> {
    let printable = |b: u32| {
        (u32::from(b'!')..=u32::from(b'~')).contains(&b)
            || (0xA1..=0xAC).contains(&b)
            || (0xAE..=0xFF).contains(&b)
    };
    let mut map = HashMap::with_capacity(256);
    let mut shifted = 0u32;
    for b in 0u32..256 {
        let c = if printable(b) {
            b
        } else {
            shifted += 1;
            255 + shifted
        };
        map.insert(char::from_u32(c).expect("valid scalar"), b as u8);
    }
    map
}

/// Decodes one byte-level BPE piece (e.g. `"Ġworld"`) into raw bytes (`b" world"`).
/// Returns `None` when a character is not in the byte table (special tokens).
pub fn decode_piece(piece: &str, table: &HashMap<char, u8>) -> Option<Vec<u8>> {
    piece.chars().map(|c| table.get(&c).copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_newline_and_high_bytes_round_trip() {
        let t = unicode_to_byte();
        assert_eq!(t.len(), 256);
        assert_eq!(decode_piece("Ġworld", &t).unwrap(), b" world");
        assert_eq!(decode_piece("Ċ", &t).unwrap(), b"\n");
        assert_eq!(decode_piece("!", &t).unwrap(), b"!");
        // "é" in UTF-8 is C3 A9, which GPT-2 spells "Ã©".
        assert_eq!(decode_piece("Ã©", &t).unwrap(), "é".as_bytes());
        assert_eq!(
            decode_piece("<|endoftext|>", &t),
            Some(b"<|endoftext|>".to_vec())
        );
        assert_eq!(decode_piece("日", &t), None);
    }
}
