import { waitFor } from '@streamgate/testkit';
import type { AnvilNode } from '@streamgate/testkit';

/** anvil's first unlocked dev account. */
export const DEV_ACCOUNT = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
export const LOG_TOPIC = `0x${'ab'.repeat(32)}`;

/*
 * Hand-assembled: the runtime copies its calldata to memory and emits it as LOG1(LOG_TOPIC).
 *   CALLDATASIZE PUSH1 0 PUSH1 0 CALLDATACOPY PUSH32 topic CALLDATASIZE PUSH1 0 LOG1 STOP
 * The init code copies those 44 bytes out and returns them.
 */
const RUNTIME = `366000600037${'7f'}${'ab'.repeat(32)}366000a100`;
const INIT = `602c600c600039602c6000f3`;

export async function deployLogEmitter(anvil: AnvilNode): Promise<string> {
  const tx = await anvil.rpc<string>('eth_sendTransaction', [{ from: DEV_ACCOUNT, data: `0x${INIT}${RUNTIME}` }]);
  let address: string | null = null;
  // anvil answers eth_sendTransaction before the automined block is queryable.
  await waitFor(
    async () => {
      const receipt = await anvil.rpc<{ contractAddress: string | null } | null>('eth_getTransactionReceipt', [tx]);
      address = receipt?.contractAddress ?? null;
      return address !== null;
    },
    { timeoutMs: 10_000, message: 'log emitter deployed' },
  );
  if (address === null) throw new Error('log emitter deployment failed');
  return address;
}

/** A transaction request that makes the emitter log `payload` (32 bytes of hex, no 0x). */
export function emitRequest(address: string, payload: number) {
  return { from: DEV_ACCOUNT, to: address, data: `0x${payload.toString(16).padStart(64, '0')}`, gas: '0x30000' };
}

/**
 * Sends one emitting transaction; anvil without a block time mines it into its own block. Resolves
 * once the receipt is queryable: anvil answers eth_sendTransaction before that, and a test that
 * reads the node's logs right after would miss this one.
 */
export async function emitLog(anvil: AnvilNode, address: string, payload: number): Promise<string> {
  const tx = await anvil.rpc<string>('eth_sendTransaction', [emitRequest(address, payload)]);
  await waitFor(async () => (await anvil.rpc<unknown>('eth_getTransactionReceipt', [tx])) !== null, {
    timeoutMs: 10_000,
    message: `receipt of ${tx}`,
  });
  return tx;
}
