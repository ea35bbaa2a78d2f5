/** A granted lease: `token` is the fencing token, strictly greater than every earlier grant. */
export interface Lease {
  readonly key: string;
  readonly token: number;
}

/** Ownership of upstream keys: one owner per key, fenced, expiring unless renewed. */
export interface LeaseStore {
  /** null when someone else holds the lease. */
  acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null>;
  /** false when the lease expired or was taken over: the caller must stop writing. */
  renew(lease: Lease, owner: string, ttlMs: number): Promise<boolean>;
  release(lease: Lease, owner: string): Promise<void>;
}
