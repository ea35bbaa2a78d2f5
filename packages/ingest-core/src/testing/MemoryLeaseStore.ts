import type { Lease, LeaseStore } from '../LeaseStore.js';
import type { MemoryStreamWriter } from './MemoryStreamWriter.js';

/** Leases in memory on an injectable clock; grants update the writer's fence like Redis does. */
export class MemoryLeaseStore implements LeaseStore {
  private readonly leases = new Map<string, { value: string; expiresAt: number }>();

  constructor(
    private readonly writer: MemoryStreamWriter,
    private readonly now: () => number,
  ) {}

  async acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null> {
    await Promise.resolve();
    const held = this.leases.get(key);
    if (held !== undefined && held.expiresAt > this.now()) return null;
    const token = (this.writer.fences.get(key) ?? 0) + 1;
    this.writer.fences.set(key, token);
    this.leases.set(key, { value: `${owner}|${token}`, expiresAt: this.now() + ttlMs });
    return { key, token };
  }

  async renew(lease: Lease, owner: string, ttlMs: number): Promise<boolean> {
    await Promise.resolve();
    const held = this.leases.get(lease.key);
    if (held === undefined || held.expiresAt <= this.now() || held.value !== `${owner}|${lease.token}`) return false;
    held.expiresAt = this.now() + ttlMs;
    return true;
  }

  async release(lease: Lease, owner: string): Promise<void> {
    await Promise.resolve();
    if (this.leases.get(lease.key)?.value === `${owner}|${lease.token}`) this.leases.delete(lease.key);
  }
}
