import { clusterSlotOwners } from './clusterSlotOwners.js';
import type { ClusterNodeEntry } from './parseClusterNodes.js';

/** What one live node answered to CLUSTER INFO, CLUSTER NODES and INFO replication. */
export interface ClusterNodeReport {
  readonly port: number;
  readonly id: string;
  readonly clusterInfo: string;
  readonly view: readonly ClusterNodeEntry[];
  readonly replicationInfo: string;
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*?)\\s*$`, 'm').exec(info)?.[1];
}

/** `id:first-last` per run of slots with one owner: a short string to compare two views by. */
function ownerRuns(owners: readonly (string | undefined)[]): string {
  const runs: string[] = [];
  let start = 0;
  for (let slot = 1; slot <= owners.length; slot += 1) {
    if (slot === owners.length || owners[slot] !== owners[start]) {
      runs.push(`${owners[start] ?? '-'}:${start}-${slot - 1}`);
      start = slot;
    }
  }
  return runs.join(' ');
}

/**
 * Why the cluster is not (yet) healthy, or undefined when it is: every live node says
 * cluster_state:ok, knows every live node and flags none of them as failing, every view has each
 * slot served by a live primary and all views agree on who, and every live replica's link to its
 * primary is up (so killing a primary next can fail over). The reason names the first problem
 * found, for the error a deadline raises.
 */
export function clusterHealthProblem(reports: readonly ClusterNodeReport[], liveIds: ReadonlySet<string>): string | undefined {
  if (reports.length === 0) return 'no node is running';
  let agreed: string | undefined;
  for (const report of reports) {
    const where = `node :${report.port}`;
    const state = infoField(report.clusterInfo, 'cluster_state');
    if (state !== 'ok') return `${where} reports cluster_state:${state ?? '(none)'}`;
    for (const id of liveIds) {
      const entry = report.view.find((candidate) => candidate.id === id);
      if (!entry) return `${where} does not know live node ${id}`;
      if (entry.failing) return `${where} flags live node :${entry.port} as ${[...entry.flags].join(',')}`;
    }
    const owners = clusterSlotOwners([report.view.filter((entry) => !entry.failing)], liveIds);
    const orphan = owners.indexOf(undefined);
    if (orphan !== -1) return `${where} sees slot ${orphan} without a live primary`;
    const signature = ownerRuns(owners);
    if (agreed === undefined) agreed = signature;
    else if (signature !== agreed) return `${where} disagrees with other nodes on which primary serves which slot`;
    const myself = report.view.find((entry) => entry.flags.has('myself'));
    if (myself && !myself.isPrimary) {
      const link = infoField(report.replicationInfo, 'master_link_status');
      if (link !== 'up') return `replica ${where} has master_link_status:${link ?? '(none)'}`;
    }
  }
  return undefined;
}
