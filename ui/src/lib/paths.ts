// File-name helpers for paths from the shell (POSIX or Windows separators).

/** "C:\\a\\talk.final.mp3" or "/a/talk.final.mp3" → "talk.final.mp3". */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/** File name without its last extension: "talk.final.mp3" → "talk.final"; ".bashrc" stays. */
export function stem(path: string): string {
  const name = baseName(path);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/** The default export file name: source stem + the format's extension. */
export function exportName(sourceName: string, ext: string): string {
  return `${stem(sourceName) || 'transcript'}.${ext}`;
}
