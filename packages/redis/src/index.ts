export { hashSlotPart } from './hashSlotPart.js';
export { streamSlotTag } from './streamSlotTag.js';
export type { StreamSlotTag } from './streamSlotTag.js';
export { placeStream, placementScore } from './placeStream.js';
export { isClusterClient, openRedis } from './openRedis.js';
export type { NodeOptions, OpenRedisOptions, RedisClient } from './openRedis.js';
export { keySlot } from './keySlot.js';
export { pipelineWithWait } from './pipelineWithWait.js';
export type { ReplicaWait, ReplicatedReply } from './pipelineWithWait.js';
