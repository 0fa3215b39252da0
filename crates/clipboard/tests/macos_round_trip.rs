//! The macOS pasteboard across a paste, on the real general pasteboard: an
//! item with an image (PNG bytes), rich text and an app's own type, and a
//! second item with a file URL, are copied; the pasteboard is taken for the
//! dictated text as Utter's paste takes it (arboard, then marked transient);
//! the copy is written back, and every type of every item must come back
//! byte for byte. It replaces the pasteboard of whoever runs it, so it is
//! ignored by default: CI's macOS job runs it (`cargo test -p
//! utter-clipboard -- --ignored --test-threads=1`); no Mac ran it while it
//! was written.
#![cfg(target_os = "macos")]

use objc2::rc::Retained;
use objc2::runtime::ProtocolObject;
use objc2_app_kit::{NSPasteboard, NSPasteboardItem, NSPasteboardWriting};
use objc2_foundation::{NSArray, NSData, NSString};
use utter_clipboard::Snapshot;

type Items = Vec<Vec<(String, Vec<u8>)>>;

/// Every item's types and data, as on the pasteboard now.
fn read_all() -> Items {
    let pasteboard = NSPasteboard::generalPasteboard();
    let Some(items) = pasteboard.pasteboardItems() else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| {
            item.types()
                .iter()
                .filter_map(|kind| {
                    let data = item.dataForType(&kind)?;
                    Some((kind.to_string(), data.to_vec()))
                })
                .collect()
        })
        .collect()
}

fn write_all(items: &Items) {
    let objects: Vec<Retained<ProtocolObject<dyn NSPasteboardWriting>>> = items
        .iter()
        .map(|types| {
            let item = NSPasteboardItem::new();
            for (kind, data) in types {
                assert!(item.setData_forType(&NSData::with_bytes(data), &NSString::from_str(kind)));
            }
            ProtocolObject::from_retained(item)
        })
        .collect();
    let pasteboard = NSPasteboard::generalPasteboard();
    pasteboard.clearContents();
    assert!(pasteboard.writeObjects(&NSArray::from_retained_slice(&objects)));
}

#[test]
#[ignore = "replaces the pasteboard: run by CI's macOS job with --ignored"]
fn every_type_of_every_item_comes_back_byte_for_byte_after_a_paste() {
    // Not a decodable PNG; the pasteboard stores bytes without looking at them.
    let png: Vec<u8> = b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain((0..=255u8).cycle().take(4000))
        .collect();
    let copied: Items = vec![
        vec![
            ("public.png".into(), png),
            ("public.html".into(), b"<b>previous</b> clipboard".to_vec()),
            (
                "public.utf8-plain-text".into(),
                "previous clipboard ✓".as_bytes().to_vec(),
            ),
            ("com.example.utter-test".into(), (0..=255u8).collect()),
        ],
        vec![(
            "public.file-url".into(),
            b"file:///Users/me/report.pdf".to_vec(),
        )],
    ];
    write_all(&copied);
    let before = read_all();

    let mut snapshot = Snapshot::take().expect("snapshot");
    assert!(snapshot.lost().is_empty(), "lost: {:?}", snapshot.lost());

    let mut clipboard = arboard::Clipboard::new().unwrap();
    clipboard.set_text("the dictated text").unwrap();
    utter_clipboard::mark_transient();
    let during = read_all();
    assert_eq!(during.len(), 1, "{during:?}");
    assert!(
        during[0]
            .iter()
            .any(|(kind, _)| kind == "org.nspasteboard.TransientType"),
        "the dictated text is not marked transient: {during:?}"
    );

    snapshot.restore().expect("restore");
    let after = read_all();
    for (item, (was, now)) in before.iter().zip(&after).enumerate() {
        for (kind, data) in was {
            let back = now.iter().find(|(k, _)| k == kind);
            assert_eq!(back.map(|(_, d)| d), Some(data), "item {item}: {kind}");
        }
    }
    assert_eq!(before.len(), after.len());
    assert_eq!(clipboard.get_text().unwrap(), "previous clipboard ✓");
}
