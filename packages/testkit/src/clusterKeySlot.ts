/** Redis Cluster has this many hash slots; a key's slot is CRC16(key or its hash tag) mod 16384. */
export const CLUSTER_SLOTS = 16_384;

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), the variant the Redis Cluster spec uses.
const CRC16_TABLE = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (CRC16_TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0);
  return crc;
}

/**
 * The hash slot Redis Cluster assigns `key` (what `CLUSTER KEYSLOT` answers), computed locally so
 * a test can pick keys per node without a round trip. Written here rather than importing
 * ioredis's untyped `cluster-key-slot` dependency; the cluster test checks it against the server.
 */
export function clusterKeySlot(key: string): number {
  // Hash tag: only the part between the first `{` and the next `}` counts, if it is not empty.
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(key, 'utf8')) % CLUSTER_SLOTS;
}
