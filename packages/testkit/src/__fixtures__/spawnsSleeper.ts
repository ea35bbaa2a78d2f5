// Fixture for the parent-death test: spawns a long sleeper through spawnService, prints its pid
// and waits to be killed.
import { spawnService } from '../spawnService.js';

const sleeper = await spawnService({ name: 'sleeper', command: 'sleep', args: ['300'] });
console.log(`sleeper ${sleeper.pid}`);
setInterval(() => undefined, 1_000);
