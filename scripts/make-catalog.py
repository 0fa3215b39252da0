#!/usr/bin/env python3
"""Builds crates/models/data/catalog.json, Utter's model catalog, from a facts
file (the MIT-licensed model facts of the Handy project: ids, pinned
revisions, files with size and sha256, capabilities, languages, licences).

    python3 scripts/make-catalog.py FACTS.json > crates/models/data/catalog.json
"""
import json, sys

# Utter's one name for a model where the facts' slug differs: the English Moonshine models are
# `-en` like their packaged installs and their -ar/-ja/... siblings (crates/models/src/names.rs
# accepts the slugs as aliases).
RENAMED = {"moonshine-tiny": "moonshine-tiny-en", "moonshine-base": "moonshine-base-en"}

facts = json.load(open(sys.argv[1]))
models = []
for m in facts["models"]:
    models.append({
        "name": RENAMED.get(m["slug"], m["slug"]),
        "display_name": m["name"],
        "repo": m["id"],
        "revision": m["revision"],
        "arch": m["architecture"],
        "family": m["family"],
        "parameters": m.get("parameters"),
        "description": m.get("description", ""),
        "license": m.get("license", ""),
        "languages": m.get("languages", []),
        "streaming": bool(m["capabilities"].get("streaming")),
        "translate": bool(m["capabilities"].get("translate")),
        "lang_detect": bool(m["capabilities"].get("lang_detect")),
        "timestamps": m["capabilities"].get("timestamps") or "none",
        "speed_score": m.get("speed_score"),
        "accuracy_score": m.get("accuracy_score"),
        "recommended": bool(m.get("recommended")),
        "default_quant": m["default_quant"],
        "files": [{"quant": f["quant"], "file": f["filename"], "size": f["size_bytes"], "sha256": f["sha256"]}
                  for f in m["files"]],
    })
out = {
    "version": 1,
    "source": f"Handy model facts, catalog v{facts['catalog_version']} ({facts['generated_at']}), MIT licence",
    "url_template": "{base}/{repo}/resolve/{revision}/{file}",
    "default_bases": ["https://huggingface.co"],
    "models": models,
}
json.dump(out, sys.stdout, indent=1)
print()
