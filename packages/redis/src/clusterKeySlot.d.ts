// cluster-key-slot (the slot function ioredis itself uses) ships no types.
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
