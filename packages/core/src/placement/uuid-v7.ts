import { randomBytes } from "node:crypto";

// Ids for rows written with raw SQL, the same kind Prisma's @default(uuid(7)) makes: a
// millisecond timestamp then random bits (RFC 9562), so that ids still sort by creation.
let lastMs = 0;
let sequence = 0;
// Random bits drawn 256 ids at a time: a call into the CSPRNG per id showed in profiles of
// bench:placement (a cold start, a reservation and a replica each take one).
const POOL_IDS = 256;
let pool = Buffer.alloc(0);
let used = POOL_IDS;

export function uuidV7(): string {
  if (used === POOL_IDS) {
    pool = randomBytes(16 * POOL_IDS);
    used = 0;
  }
  // A view, no copy: each 16 bytes are used by one id only, and a spent pool is replaced.
  const bytes = pool.subarray(16 * used, 16 * ++used);
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) ms = ++lastMs;
  } else {
    lastMs = ms;
    sequence = bytes[6]! & 0x07;
  }
  bytes.writeUIntBE(ms, 0, 6);
  // version 7 and a 12-bit sequence within the millisecond (rand_a), then the variant bits.
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
