export { startRedisOpsPublisher } from './startRedisOpsPublisher.js';
export type { RedisOpsPublisher, RedisOpsPublisherOptions } from './startRedisOpsPublisher.js';
