// What a file is, from its bytes alone (file-type for binary formats, a strict look at text for vCard,
// iCalendar and plain text); the client's Content-Type and file name are never trusted. Also the display name
// a file name becomes (no path, no control characters).
import type { AssetKind } from '../../db/tables/assets.ts';

/** Accepted MIME types by asset type (the document's `AssetType`). */
const ACCEPTED: Record<string, AssetKind> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/webp': 'image',
  'image/gif': 'gif',
  'video/mp4': 'video',
  'video/3gpp': 'video',
  'video/quicktime': 'video',
  'audio/mpeg': 'audio',
  'audio/mp4': 'audio',
  'audio/aac': 'audio',
  'audio/ogg': 'audio',
  'audio/amr': 'audio',
  'application/pdf': 'pdf',
  'text/vcard': 'vcard',
  'text/calendar': 'other',
  'text/plain': 'other',
};

/** file-type's names for the same formats. */
const ALIASES: Record<string, string> = { 'audio/x-m4a': 'audio/mp4', 'audio/opus': 'audio/ogg', 'video/x-m4v': 'video/mp4' };

export type Detected = { mimeType: string; type: AssetKind } | { mimeType: string | null; type: null };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function text(data: Buffer): string | null {
  // A NUL or any C0 control other than tab, CR, LF, FF is not text.
  for (const b of data.subarray(0, 64 * 1024)) if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) return null;
  try {
    return utf8.decode(data);
  } catch {
    return null;
  }
}

/** Image signatures: a file that starts with one is judged as that image (and refused if it does not decode). */
function imageSignature(data: Buffer): string | null {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  const ascii = data.subarray(0, 12).toString('latin1');
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'image/gif';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'image/webp';
  return null;
}

export async function detectType(data: Buffer): Promise<Detected> {
  const { fileTypeFromBuffer } = await import('file-type'); // loaded on the first upload, not at start-up (bench part a)
  const found = await fileTypeFromBuffer(data);
  if (found) {
    const mime = ALIASES[found.mime] ?? found.mime;
    const type = ACCEPTED[mime];
    return type ? { mimeType: mime, type } : { mimeType: mime, type: null };
  }
  // A damaged image (or text behind an image signature): judged as the image it claims to be, so the header
  // check that follows refuses it with a clear message instead of calling it an unknown type.
  const claimed = imageSignature(data);
  if (claimed) return { mimeType: claimed, type: ACCEPTED[claimed]! };
  const t = text(data);
  if (t === null) return { mimeType: null, type: null };
  const head = t
    .replace(/^\uFEFF/, '')
    .trimStart()
    .slice(0, 32)
    .toUpperCase();
  if (head.startsWith('BEGIN:VCARD')) return { mimeType: 'text/vcard', type: 'vcard' };
  if (head.startsWith('BEGIN:VCALENDAR')) return { mimeType: 'text/calendar', type: 'other' };
  return { mimeType: 'text/plain', type: 'other' };
}

/**
 * A file name made safe to show and to put in a header: only the last path segment (`../../etc/passwd` →
 * `passwd`, `C:\x\y.png` → `y.png`), no control or bidirectional-override characters, at most 255 characters.
 */
export function safeName(raw: string | undefined, fallback = 'file'): string {
  const last = (raw ?? '').split(/[/\\]/).pop() ?? '';
  const cleaned = last.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '').trim();
  const name = cleaned === '' || cleaned === '.' || cleaned === '..' ? fallback : cleaned;
  return [...name].slice(0, 255).join('');
}

/** `spring-hero.jpg` → [`spring-hero`, `.jpg`]. */
export function splitExt(name: string): [string, string] {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || name.length - dot > 10) return [name, ''];
  return [name.slice(0, dot), name.slice(dot)];
}
