export { ManualClock, settle } from './ManualClock.js';
