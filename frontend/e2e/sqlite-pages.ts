// Finds where a secret sits in a SQLite database file and its WAL, page by page, without an SQLite library:
// the raw-bytes half of the capture secrecy check (captures are zstd-compressed, so the API is asked too).
import { existsSync, readFileSync } from 'node:fs';

export interface Hit {
  /** `db` or `wal`. */
  file: string;
  /** The database page the bytes belong to (a WAL frame's page number). */
  page: number;
  /** The page's bytes. */
  bytes: Buffer;
}

/** Each page of the database file and each frame of its WAL, with its page number. */
export function pages(dbPath: string): Hit[] {
  const out: Hit[] = [];
  const db = readFileSync(dbPath);
  // The header: "SQLite format 3\0", then the page size (1 means 65536) at offset 16.
  if (db.subarray(0, 16).toString('latin1') !== 'SQLite format 3\0') throw new Error(`${dbPath} is not an SQLite database`);
  const raw = db.readUInt16BE(16);
  const size = raw === 1 ? 65536 : raw;
  for (let off = 0, n = 1; off < db.length; off += size, n++) out.push({ file: 'db', page: n, bytes: db.subarray(off, off + size) });
  const walPath = `${dbPath}-wal`;
  if (existsSync(walPath)) {
    const wal = readFileSync(walPath);
    if (wal.length >= 32) {
      // A 32-byte header (page size at offset 8), then frames: a 24-byte header (page number first) and a page.
      const walSize = wal.readUInt32BE(8);
      for (let off = 32; off + 24 + walSize <= wal.length; off += 24 + walSize) {
        out.push({ file: 'wal', page: wal.readUInt32BE(off), bytes: wal.subarray(off + 24, off + 24 + walSize) });
      }
    }
  }
  return out;
}

/** The pages of the database and its WAL that hold `needle`. */
export function pagesWith(dbPath: string, needle: string): Hit[] {
  return pages(dbPath).filter((p) => p.bytes.includes(needle));
}
