/** An inclusive range of hash slots, `[first, last]`. */
export type SlotRange = readonly [first: number, last: number];

/** One line of `CLUSTER NODES`: how the answering node sees one member of the cluster. */
export interface ClusterNodeEntry {
  readonly id: string;
  readonly port: number;
  readonly flags: ReadonlySet<string>;
  /** The primary's id for a replica, undefined for a primary. */
  readonly primaryId: string | undefined;
  /** Slots it serves (primaries only); slots being imported or migrated are left out. */
  readonly slots: readonly SlotRange[];
  /** The epoch its slot claim carries: of two primaries claiming a slot, the higher epoch owns it. */
  readonly configEpoch: number;
  /** `fail` (agreed) or `fail?` (suspected by the answering node). */
  readonly failing: boolean;
  readonly isPrimary: boolean;
}

const ADDRESS = /^[^:]*:(\d+)@\d+/;
const SLOT = /^(\d+)(?:-(\d+))?$/;

/**
 * Parses the text `CLUSTER NODES` answers (one node a line:
 * `<id> <ip:port@cport> <flags> <primary|-> <ping> <pong> <epoch> <link> <slot>...`). Chosen over
 * CLUSTER SHARDS/SLOTS because it is one flat format that also carries the `fail` flags.
 */
export function parseClusterNodes(text: string): ClusterNodeEntry[] {
  const entries: ClusterNodeEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    if (fields.length < 8) continue;
    const [id = '', address = '', flagField = '', primary = '-', , , epoch = '0'] = fields;
    const port = ADDRESS.exec(address)?.[1];
    if (port === undefined) throw new Error(`CLUSTER NODES: no port in ${JSON.stringify(line)}`);
    const flags = new Set(flagField.split(','));
    const slots: SlotRange[] = [];
    for (const field of fields.slice(8)) {
      // `[slot->-id]` / `[slot-<-id]` are migrations in progress: the slot is still served by its owner.
      const match = SLOT.exec(field);
      if (!match) continue;
      const first = Number(match[1]);
      slots.push([first, match[2] === undefined ? first : Number(match[2])]);
    }
    entries.push({
      id,
      port: Number(port),
      flags,
      primaryId: primary === '-' ? undefined : primary,
      slots,
      configEpoch: Number(epoch),
      failing: flags.has('fail') || flags.has('fail?'),
      isPrimary: flags.has('master'),
    });
  }
  return entries;
}
