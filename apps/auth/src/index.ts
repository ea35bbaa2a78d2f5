export * from './config.js';
export * from './loadSigningKeys.js';
export * from './createAuthMetrics.js';
export * from './createAuthServer.js';
export * from './demoRouter.js';
