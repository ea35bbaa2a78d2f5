import calculateSlot from 'cluster-key-slot';

/** The Redis Cluster hash slot (0–16383) of a key: CRC16 of its hash-slot part, mod 16384. */
export function keySlot(key: string): number {
  return calculateSlot(key);
}
