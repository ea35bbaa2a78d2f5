export * from './config.js';
export * from './loadSigningKeys.js';
export * from './createAuthMetrics.js';
export * from './createAuthServer.js';
export * from './demoRouter.js';
export * from './ops/createOpsRouter.js';
export { checkOperatorCredential, sha256Hex } from './ops/operatorCredential.js';
export type { OperatorRefusal } from './ops/operatorCredential.js';
