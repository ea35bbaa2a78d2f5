export { deferred } from './deferred.js';
export { recordingLogger } from './recordingLogger.js';
export type { RecordingLogger } from './recordingLogger.js';
export { ScriptedRelay } from './ScriptedRelay.js';
export { expSoon, scriptedFixtures, STREAM } from './scriptedFixtures.js';
export type { ScriptedClientDefaults, Tick } from './scriptedFixtures.js';
export { tokenFor } from './tokenFor.js';
export { waitForValue } from './waitForValue.js';
export type { WaitForValueOptions } from './waitForValue.js';
